/**
 * `npm run worker` without what its activities need refuses to start, naming every missing variable, before it
 * opens a database or connects to Temporal (it used to start and fail each identity's ensureAdi forever).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, workerDependencyProblems } from '../../src/config.js';
import { compiledEntry, ensureBuild } from '../support/build.js';

// the entry points run from the compiled build, as `npm run api|worker` runs them (built here when stale)
beforeAll(ensureBuild, 300_000);

const FULL = {
  LEDGER_URL: 'https://ledger.example.test',
  SPONSOR_KEY: '11'.repeat(32),
  RELAYER_PRIVATE_KEY: `0x${'22'.repeat(32)}`,
  VALIDATOR_URLS: 'https://v0.example.test,https://v1.example.test',
  VALIDATOR_CLIENT_KEY: '33'.repeat(32),
  CHAINS: JSON.stringify([
    {
      name: 'ethereum-sepolia',
      chainId: 11155111,
      rpcUrl: 'https://rpc.example.test',
      contracts: { proofAnchor: `0x${'aa'.repeat(20)}`, accountFactory: `0x${'bb'.repeat(20)}` },
    },
  ]),
};
const vars = (env: Record<string, string>) => workerDependencyProblems(loadConfig(env), env).map((p) => p.variable);

describe('worker dependencies', () => {
  it('names every missing variable, and none when all are there', () => {
    expect(vars(FULL)).toEqual([]);
    expect(vars({})).toEqual(['LEDGER_URL', 'SPONSOR_KEY', 'RELAYER_PRIVATE_KEY', 'VALIDATOR_URLS', 'VALIDATOR_CLIENT_KEY', 'CHAINS']);
    const { VALIDATOR_CLIENT_KEY: _k, ...unsigned } = FULL;
    expect(vars(unsigned)).toEqual(['VALIDATOR_CLIENT_KEY']);
    const { SPONSOR_KEY: _s, ...noSponsor } = FULL;
    expect(vars(noSponsor)).toEqual(['SPONSOR_KEY']);
    const bare = { ...FULL, CHAINS: JSON.stringify([{ name: 'polygon-amoy', chainId: 80002, rpcUrl: 'https://amoy.example.test' }]) };
    const problems = workerDependencyProblems(loadConfig(bare), bare);
    expect(problems).toEqual([{ variable: 'CHAINS', message: expect.stringContaining('polygon-amoy') }]);
  });

  it('npm run worker exits 2 with one message, before touching the database or Temporal', { timeout: 60_000 }, () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-worker-deps-'));
    try {
      const { SPONSOR_KEY: _s, VALIDATOR_URLS: _v, ...env } = FULL;
      const r = spawnSync(process.execPath, compiledEntry('worker'), {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, DATA_DIR: dataDir, TEMPORAL_ADDRESS: '127.0.0.1:1' },
        encoding: 'utf8',
        timeout: 50_000,
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('The worker cannot start');
      expect(r.stderr).toMatch(/SPONSOR_KEY: not set/);
      expect(r.stderr).toMatch(/VALIDATOR_URLS: empty/);
      expect(r.stderr).not.toMatch(/RELAYER_PRIVATE_KEY|CHAINS|LEDGER_URL/);
      expect(existsSync(join(dataDir, 'pglite'))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
