/** The committed ABIs/bytecode in src/chain/abi are exactly what contracts/build.ts produces from contracts/. */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

describe('contracts/build.ts', () => {
  it('committed artifacts are up to date (solc-js, evm prague, optimizer on)', () => {
    const tsx = createRequire(import.meta.url).resolve('tsx/cli');
    const out = execFileSync(process.execPath, [tsx, 'contracts/build.ts', '--check'], { encoding: 'utf8' });
    expect(out).toContain('artifacts up to date');
  }, 60_000);
});
