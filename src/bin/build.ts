/**
 * The second half of `npm run build` (after `tsc -p tsconfig.build.json` compiled src/ to dist/src/): bundles the
 * workflows ahead of time for the compiled worker (dist/workflow-bundle.js, loaded with `workflowBundle: { codePath }`)
 * and copies the files the compiled modules read relative to themselves: the SQL migrations next to
 * dist/src/db/client.js and the Temporal dev-server profile two levels above dist/src/temporal/profile.js.
 * Runs from source (tsx): the bundle is made from src/workflows/index.ts, as the replay tests bundle it.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS_DIR } from '../db/client.js';
import { PROJECT_ROOT } from '../devnet/temporal.js';
import { PROFILE_PATH } from '../temporal/profile.js';
import { PREBUILT_BUNDLE_FILE, workflowBundle } from '../temporal/worker.js';

async function main() {
  const dist = join(PROJECT_ROOT, 'dist');
  mkdirSync(dist, { recursive: true });
  const started = Date.now();
  const { code } = await workflowBundle();
  writeFileSync(join(dist, PREBUILT_BUNDLE_FILE), code);
  cpSync(MIGRATIONS_DIR, join(dist, 'src', 'db', 'migrations'), { recursive: true });
  cpSync(PROFILE_PATH, join(dist, 'temporal-dev.yml'));
  const kb = Math.round(Buffer.byteLength(code) / 1024);
  process.stdout.write(`workflows bundled to dist/${PREBUILT_BUNDLE_FILE} (${kb} kB, ${Date.now() - started} ms); migrations and temporal-dev.yml copied\n`);
}

main().catch((err) => {
  console.error(`build failed: ${(err as Error).stack}`);
  process.exit(1);
});
