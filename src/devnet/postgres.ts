/**
 * A throwaway PostgreSQL cluster from the Debian binaries (initdb into a temp dir, loopback only, no fsync): the
 * test run's server (unless TEST_DATABASE_URL points at one; .ci/run starts one), the chaos suite's restartable
 * one, and the benchmarks'. createScratchDatabase gives each user a database of its own.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { waitUntilReady } from './process.js';

function pgBinDir(): string | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return join(onPath, '..');
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(root, v, 'bin')).find((d) => existsSync(join(d, 'initdb')));
}

export interface LocalPostgres {
  url: string;
  /** fast shutdown and start again on the same port and data (chaos tests) */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalPostgres(): Promise<LocalPostgres | undefined> {
  const bin = pgBinDir();
  if (!bin) return undefined;
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'gw-pg-'));
  const run = (cmd: string, args: string[]) => (asRoot ? (['runuser', ['-u', 'postgres', '--', cmd, ...args]] as const) : ([cmd, args] as const));
  if (asRoot)
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
  const [c1, a1] = run(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  execFileSync(c1, a1, { stdio: 'ignore' });
  const port = await freePort();
  const [c2, a2] = run(join(bin, 'postgres'), [
    '-D',
    join(dir, 'data'),
    '-k',
    dir,
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=300',
  ]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const ready = () =>
    waitUntilReady(
      'test postgres',
      async () => {
        await adminQuery(url, 'select 1', 1_000);
        return true;
      },
      { timeoutMs: 20_000 },
    );
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
  const name = `gw_test_${Math.random().toString(36).slice(2, 10)}`;
  await adminQuery(baseUrl, `create database ${name}`);
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      await adminQuery(baseUrl, `drop database if exists ${name} with (force)`);
    },
  };
}

/**
 * One statement on a connection of its own. Only the server of `url` matters: when its database does not exist
 * (a fresh cluster, `DATABASE_URL=postgres://…/bench` as the README writes it), the server's `postgres` database
 * takes the statement.
 */
async function adminQuery(url: string, text: string, connectTimeoutMs = 10_000): Promise<void> {
  const { default: pg } = await import('pg');
  const run = async (connectionString: string) => {
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: connectTimeoutMs });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query(text);
    } finally {
      await client.end().catch(() => {});
    }
  };
  try {
    await run(url);
  } catch (err) {
    const u = new URL(url);
    if ((err as { code?: string }).code !== '3D000' || u.pathname === '/postgres') throw err; // 3D000: no such database
    u.pathname = '/postgres';
    await run(u.toString());
  }
}
