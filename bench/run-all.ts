/** `npm run bench`: runs every bench/*.ts script in turn (each prints its own table and JSON). */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const scripts = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run-all.ts')
  .sort();
let failed = 0;
for (const script of scripts) {
  console.log(`\n=== bench/${script} ===`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${script}`], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
if (scripts.length === 0) console.log('no benchmarks yet');
process.exit(failed ? 1 : 0);
