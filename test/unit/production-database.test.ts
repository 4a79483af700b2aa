/**
 * Processes that share data need Postgres: GATEWAY_ENV=production without DATABASE_URL is a configuration error,
 * `npm run worker` (a process of its own) refuses to start without it, and an embedded PGlite directory is refused
 * while another process (or another open in this one) holds it. Before, each process silently opened its own
 * PGlite under DATA_DIR and an API and a worker never saw each other's rows.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertWorkerDependencies, ConfigError, loadConfig, workerDependencyProblems } from '../../src/config.js';
import { openDatabase, PGLITE_LOCK_FILE } from '../../src/db/client.js';
import { configProblems } from '../support/config.js';
import { compiledEntry, ensureBuild } from '../support/build.js';

// the entry points run from the compiled build, as `npm run api|worker` runs them (built here when stale)
beforeAll(ensureBuild, 300_000);

const WORKER_ENV = {
  LEDGER_URL: 'https://ledger.example.test',
  SPONSOR_KEY: '11'.repeat(32),
  RELAYER_PRIVATE_KEY: `0x${'22'.repeat(32)}`,
  VALIDATOR_URLS: 'https://v0.example.test',
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
const PG = 'postgres://gw@db.example.test:5432/gw';

const dirs: string[] = [];
const scratchDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'gw-prod-db-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('production needs a shared database', () => {
  it('GATEWAY_ENV=production without DATABASE_URL is a config error naming it; the devnet default still runs without', () => {
    expect(configProblems({ GATEWAY_ENV: 'production' })).toEqual([{ variable: 'DATABASE_URL', message: expect.stringContaining('GATEWAY_ENV=production') }]);
    // reported together with the other problems, not instead of them
    expect(
      configProblems({ GATEWAY_ENV: 'production', API_PORT: 'x' })
        .map((p) => p.variable)
        .sort(),
    ).toEqual(['API_PORT', 'DATABASE_URL']);
    expect(loadConfig({ GATEWAY_ENV: 'production', DATABASE_URL: PG }).databaseUrl).toBe(PG);
    expect(loadConfig({}).databaseUrl).toBeUndefined();
    expect(loadConfig({ GATEWAY_ENV: 'devnet' }).databaseUrl).toBeUndefined();
  });

  it('a worker in its own process needs DATABASE_URL, whatever GATEWAY_ENV says', () => {
    const config = loadConfig(WORKER_ENV);
    expect(workerDependencyProblems(config, WORKER_ENV, { ownProcess: true })).toEqual([
      { variable: 'DATABASE_URL', message: expect.stringContaining('PGlite') },
    ]);
    expect(() => assertWorkerDependencies(config, WORKER_ENV)).toThrow(/DATABASE_URL: not set/);
    const withPg = { ...WORKER_ENV, DATABASE_URL: PG };
    expect(() => assertWorkerDependencies(loadConfig(withPg), withPg)).not.toThrow();
    // a worker sharing its process's database (the devnet, tests) is not asked for it
    expect(workerDependencyProblems(config, WORKER_ENV)).toEqual([]);
  });

  it('npm run worker without DATABASE_URL exits 2 naming it, before opening PGlite', { timeout: 60_000 }, () => {
    const dataDir = scratchDir();
    const r = spawnSync(process.execPath, compiledEntry('worker'), {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...WORKER_ENV, DATA_DIR: dataDir, TEMPORAL_ADDRESS: '127.0.0.1:1' },
      encoding: 'utf8',
      timeout: 50_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/DATABASE_URL: not set/);
    expect(existsSync(join(dataDir, 'pglite'))).toBe(false);
  });
});

describe('embedded PGlite serves one process', () => {
  it('refuses a second open of a directory in use, and opens it again once closed', { timeout: 60_000 }, async () => {
    const dataDir = scratchDir();
    const first = await openDatabase({ dataDir });
    try {
      await first.db.execute(sql`insert into organizations (name) values ('first')`);
      const err = await openDatabase({ dataDir }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toMatch(/DATABASE_URL: .*already open in process \d+/);
    } finally {
      await first.close();
    }
    const again = await openDatabase({ dataDir });
    try {
      const r = (await again.db.execute(sql`select count(*)::int as n from organizations where name = 'first'`)) as unknown as { rows: { n: number }[] };
      expect(r.rows[0]!.n).toBe(1);
    } finally {
      await again.close();
    }
    expect(existsSync(join(dataDir, 'pglite', PGLITE_LOCK_FILE))).toBe(false);
  });

  it('is refused while another live process holds the directory, and taken over from a dead one', { timeout: 60_000 }, async () => {
    const dataDir = scratchDir();
    const lock = join(dataDir, 'pglite', PGLITE_LOCK_FILE);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dataDir, 'pglite'), { recursive: true });
    const other = spawn('sleep', ['30']);
    try {
      writeFileSync(lock, String(other.pid));
      await expect(openDatabase({ dataDir })).rejects.toThrow(new RegExp(`already open in process ${other.pid}`));
    } finally {
      other.kill('SIGKILL');
      await new Promise((r) => other.once('exit', r));
    }
    // the holder is gone: its leftover file does not block the directory
    const db = await openDatabase({ dataDir });
    await db.close();
  });

  it("takes over a file naming this process's pid that this process does not hold (a container restarted on its volume)", { timeout: 60_000 }, async () => {
    const dataDir = scratchDir();
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dataDir, 'pglite'), { recursive: true });
    writeFileSync(join(dataDir, 'pglite', PGLITE_LOCK_FILE), String(process.pid));
    const db = await openDatabase({ dataDir });
    try {
      // while it is held here, a second open in this process is still refused
      await expect(openDatabase({ dataDir })).rejects.toThrow(/already open in process \d+ \(this one\)/);
    } finally {
      await db.close();
    }
  });
});
