/**
 * A throwaway PostgreSQL cluster for the test run (initdb into a temp dir, loopback only), unless
 * TEST_DATABASE_URL points at one already (.ci/run starts one). Each test file gets its own database.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/devnet/ports.js';
import { waitUntilReady } from '../../src/devnet/process.js';

function pgBinDir(): string | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return join(onPath, '..');
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(root, v, 'bin')).find((d) => existsSync(join(d, 'initdb')));
}

export interface TestPostgres {
  url: string;
  /** fast shutdown and start again on the same port and data (chaos tests) */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestPostgres(): Promise<TestPostgres | undefined> {
  const bin = pgBinDir();
  if (!bin) return undefined;
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'gw-pg-'));
  const run = (cmd: string, args: string[]) =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] as const : [cmd, args] as const;
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
  const [c1, a1] = run(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  execFileSync(c1, a1, { stdio: 'ignore' });
  const port = await freePort();
  const [c2, a2] = run(join(bin, 'postgres'), ['-D', join(dir, 'data'), '-k', dir, '-h', '127.0.0.1', '-p', String(port), '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300']);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const { default: postgres } = await import('postgres');
  const ready = () => waitUntilReady('test postgres', async () => {
    const sql = postgres(url, { max: 1, connect_timeout: 1, onnotice: () => {} });
    try {
      await sql`select 1`;
      return true;
    } finally {
      await sql.end();
    }
  }, { timeoutMs: 20_000 });
  let child = spawn(c2, a2, { stdio: 'ignore', detached: true });
  await ready();
  const halt = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r).once('error', r));
    try {
      process.kill(-child.pid!, 'SIGINT'); // fast shutdown
    } catch {}
    await exited;
  };
  return {
    url,
    async restart() {
      await halt();
      child = spawn(c2, a2, { stdio: 'ignore', detached: true });
      await ready();
    },
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh database on the cluster at `baseUrl`, dropped by the returned function. */
export async function createScratchDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: postgres } = await import('postgres');
  const name = `gw_test_${Math.random().toString(36).slice(2, 10)}`;
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const a = postgres(baseUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}
