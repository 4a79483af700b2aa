/**
 * One factory for the database: node-postgres (`pg`, a pool of 10) when a DATABASE_URL is given, otherwise
 * embedded PGlite (data under `<dataDir>/pglite`, or in memory when `pgliteDir` is 'memory'). Migrations run on open.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { PoolClient } from 'pg';
import { ConfigError } from '../config.js';
import * as schema from './schema.js';
import { ADVISORY_LOCKS } from './locks.js';
import { withTimeout } from '../net/timeout.js';
import { listenPostgres, type Listener } from './listen.js';

export type Schema = typeof schema;
/** The drizzle database both drivers produce; queries are written once against this type. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  db: Db;
  driver: 'postgres' | 'pglite';
  /** `select 1` with a deadline; throws when the database does not answer */
  ping(timeoutMs?: number): Promise<void>;
  /**
   * Subscribe to `channel`'s notifications (pg_notify) from any process. On Postgres a dedicated connection listens
   * and `onState` tells when it listens and when it dropped (notifications sent meanwhile are lost); PGlite serves one
   * process, which hears its own notifications (`onState(true)` once it listens).
   */
  listen(channel: string, onMessage: (payload: string) => void, onState: (listening: boolean) => void): () => Promise<void>;
  close(): Promise<void>;
}

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

export async function openDatabase(opts: { databaseUrl?: string; pgliteDir?: string | 'memory'; dataDir?: string }): Promise<Database> {
  const database = opts.databaseUrl ? await openPostgres(opts.databaseUrl) : await openPglite(opts.pgliteDir ?? join(opts.dataDir ?? '.data', 'pglite'));
  await database.migrate();
  return database;
}

async function openPostgres(url: string): Promise<Database & { migrate(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const { drizzle } = await import('drizzle-orm/node-postgres');
  const { migrate } = await import('drizzle-orm/node-postgres/migrator');
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 10_000 });
  // A connection the server closes (restart, failover) raises an 'error' event, which ends the process when nothing
  // listens. The pool listens only while a connection is idle (and then drops it); a connection checked out for a
  // transaction gets its goodbye between statements with no listener. So every connection listens for its whole
  // life: the statement in flight fails as usual, and the pool drops the dead connection when it is released.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = drizzle(pool, { schema });
  const listeners = new Set<Listener>();
  // drizzle 0.45's pooled transaction() runs BEGIN before the try/finally that releases the connection, so a BEGIN
  // that fails (the server restarted while the connection sat idle) leaks it for good: a few restarts starve the
  // pool of 10 and every query waits forever (drizzle-team/drizzle-orm#6023, #6241, open). So the gateway checks the
  // connection out and releases it itself, and runs drizzle's transaction on that one client; the pool drops it on
  // release when it is dead. A drizzle instance per pooled connection, made once (building one costs ~0.2 ms).
  const onClient = new WeakMap<PoolClient, NodePgDatabase<Schema>>();
  db.transaction = async (transaction, config) => {
    const client = await pool.connect();
    try {
      let single = onClient.get(client);
      if (!single) onClient.set(client, (single = drizzle(client, { schema })));
      return await single.transaction(transaction, config);
    } finally {
      client.release();
    }
  };
  return {
    db: db as unknown as Db,
    driver: 'postgres',
    ping: async (timeoutMs = 2000) => {
      await withTimeout(db.execute(sql`select 1`), timeoutMs, 'database');
    },
    listen: (channel, onMessage, onState) => {
      const l = listenPostgres(pg.Client, url, channel, onMessage, onState);
      listeners.add(l);
      return () => {
        listeners.delete(l);
        return l.close();
      };
    },
    close: async () => {
      await Promise.all([...listeners].map((l) => l.close()));
      await pool.end();
    },
    // Several API/worker processes may start at once; a session advisory lock on one dedicated connection
    // serialises their migrations.
    migrate: async () => {
      const single = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
      single.on('error', () => {});
      await single.connect();
      try {
        await single.query('select pg_advisory_lock($1)', [ADVISORY_LOCKS.migrate]);
        await migrate(drizzle(single, { schema }), { migrationsFolder: MIGRATIONS_DIR });
      } finally {
        await single.end();
      }
    },
  };
}

async function openPglite(dir: string): Promise<Database & { migrate(): Promise<void> }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const { migrate } = await import('drizzle-orm/pglite/migrator');
  let unlock = () => {};
  if (dir !== 'memory') {
    mkdirSync(dir, { recursive: true });
    unlock = lockPgliteDir(dir);
  }
  let client: InstanceType<typeof PGlite>;
  try {
    client = dir === 'memory' ? new PGlite() : new PGlite(dir);
    await client.waitReady;
  } catch (err) {
    unlock();
    throw err;
  }
  const db = drizzle(client, { schema });
  return {
    db: db as unknown as Db,
    driver: 'pglite',
    ping: async (timeoutMs = 2000) => {
      await withTimeout(db.execute(sql`select 1`), timeoutMs, 'database');
    },
    listen: (channel, onMessage, onState) => {
      const unlisten = client.listen(channel, onMessage).then(
        (stop) => {
          onState(true);
          return stop;
        },
        () => {
          onState(false);
          return async () => {};
        },
      );
      return async () => {
        await (await unlisten)().catch(() => {});
      };
    },
    close: async () => {
      try {
        await client.close();
      } finally {
        unlock();
      }
    },
    migrate: () => migrate(db, { migrationsFolder: MIGRATIONS_DIR }),
  };
}

/**
 * Embedded PGlite serves one process: a second PGlite on the same directory opens without complaint but works on
 * its own copy (neither sees the other's rows, and both write the files). So the directory holds the owner's pid
 * (`gateway.pid`) while it is open; another open (any process, this one included) is refused while that process
 * lives, and a file left by a process that died is taken over. Returns the release.
 */
export const PGLITE_LOCK_FILE = 'gateway.pid';

/** directories this process holds open: a pid file naming this process but not listed here is a dead one's */
const heldHere = new Set<string>();

function lockPgliteDir(dir: string): () => void {
  const file = join(dir, PGLITE_LOCK_FILE);
  const mine = String(process.pid);
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, mine, { flag: 'wx' });
      heldHere.add(dir);
      return () => {
        heldHere.delete(dir);
        try {
          if (readFileSync(file, 'utf8') === mine) unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
    }
    let holder = NaN;
    try {
      holder = Number.parseInt(readFileSync(file, 'utf8'), 10);
    } catch {
      // removed meanwhile: try again
    }
    // a container restarted on the same volume often gets the dead process's pid (1, say): ours only if we hold it
    const alive = holder === process.pid ? heldHere.has(dir) : processAlive(holder);
    if (Number.isSafeInteger(holder) && holder > 0 && alive) {
      throw new ConfigError(
        [
          {
            variable: 'DATABASE_URL',
            message: `not set, and the embedded database ${dir} is already open in process ${holder}${holder === process.pid ? ' (this one)' : ''}: PGlite serves one process, so processes that share data (API, worker, replicas) need a Postgres DATABASE_URL`,
          },
        ],
        'The database cannot open',
      );
    }
    try {
      unlinkSync(file); // left by a process that is gone
    } catch {
      // removed meanwhile
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
