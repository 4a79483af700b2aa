/** The bench scripts check their arguments before making a devnet: a bad one is a one-line message, the usage and
 * exit status 2 within seconds — `bench/proof-cycle.ts abc` used to start the whole devnet and then crash with a
 * stack trace (NaN cycles). */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function run(script: string, args: string[], env: Record<string, string | undefined> = {}) {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${script}`, ...args], {
    cwd: ROOT,
    env: { ...process.env, TEMPORAL_CLI_PATH: '/nonexistent/temporal', ...env }, // a run that got as far as setup would fail differently
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout, ms: Date.now() - t0 };
}

describe('bench command-line arguments', () => {
  const cases: [script: string, args: string[], message: RegExp][] = [
    ['proof-cycle.ts', ['abc'], /^count must be a whole number from 1 to 1000, got "abc"$/m],
    ['proof-cycle.ts', ['0'], /^count must be a whole number from 1 to 1000, got "0"$/m],
    ['proof-cycle.ts', ['1.5'], /^count must be a whole number/m],
    ['proof-cycle.ts', ['5', '40', 'proceses'], /^unexpected argument "proceses": the options are processes, worker-process, batched$/m],
    ['proof-cycle.ts', ['5', '0'], /^wide must be a whole number from 1 to 1000, got "0"$/m],
    ['identity.ts', ['-3'], /^count must be a whole number from 1 to 1000, got "-3"$/m],
    ['identity.ts', ['5', 'fast'], /^blockIntervalMs must be a whole number from 1 to 60000, got "fast"$/m],
    ['api-throughput.ts', ['ten'], /^seconds must be a whole number from 1 to 3600, got "ten"$/m],
    ['api-throughput.ts', ['10', '10', 'more'], /^unexpected argument "more"$/m],
  ];

  it.each(cases)('%s %j: refused before any setup, with the usage and exit 2', (script, args, message) => {
    const r = run(script, args);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(new RegExp(`^usage: npx tsx bench/${script.replace('.', '\\.')} `, 'm'));
    expect(r.stderr).not.toMatch(/^\s+at /m); // no stack trace
    expect(r.stdout).toBe('');
  });

  it('proof-cycle.ts worker-process without DATABASE_URL is refused up front', () => {
    const r = run('proof-cycle.ts', ['1', 'worker-process'], { DATABASE_URL: undefined });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^worker-process needs a database the worker can share: set DATABASE_URL/m);
  });
});
