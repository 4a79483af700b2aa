/**
 * One factory for the database: the `postgres` driver when a DATABASE_URL is given, otherwise embedded PGlite
 * (data under `<dataDir>/pglite`, or in memory when `pgliteDir` is 'memory'). Migrations run on open.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import * as schema from './schema.js';
import { ADVISORY_LOCKS } from './locks.js';

export type Schema = typeof schema;
/** The drizzle database both drivers produce; queries are written once against this type. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  db: Db;
  driver: 'postgres' | 'pglite';
  /** `select 1` with a deadline; throws when the database does not answer */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

export async function openDatabase(opts: { databaseUrl?: string; pgliteDir?: string | 'memory'; dataDir?: string }): Promise<Database> {
  const database = opts.databaseUrl
    ? await openPostgres(opts.databaseUrl)
    : await openPglite(opts.pgliteDir ?? join(opts.dataDir ?? '.data', 'pglite'));
  await database.migrate();
  return database;
}

async function openPostgres(url: string): Promise<Database & { migrate(): Promise<void> }> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const { migrate } = await import('drizzle-orm/postgres-js/migrator');
  const client = postgres(url, { max: 10, onnotice: () => {}, connect_timeout: 10 });
  const db = drizzle(client, { schema });
  return {
    db: db as unknown as Db,
    driver: 'postgres',
    ping: (timeoutMs = 2000) => withTimeout(db.execute(sql`select 1`), timeoutMs, 'database'),
    close: () => client.end({ timeout: 5 }),
    // Several API/worker processes may start at once; a session advisory lock on one dedicated connection
    // serialises their migrations.
    migrate: async () => {
      const single = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
      try {
        await single`select pg_advisory_lock(${ADVISORY_LOCKS.migrate})`;
        await migrate(drizzle(single, { schema }), { migrationsFolder: MIGRATIONS_DIR });
      } finally {
        await single.end({ timeout: 5 });
      }
    },
  };
}

async function openPglite(dir: string): Promise<Database & { migrate(): Promise<void> }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const { migrate } = await import('drizzle-orm/pglite/migrator');
  if (dir !== 'memory') mkdirSync(dir, { recursive: true });
  const client = dir === 'memory' ? new PGlite() : new PGlite(dir);
  await client.waitReady;
  const db = drizzle(client, { schema });
  return {
    db: db as unknown as Db,
    driver: 'pglite',
    ping: (timeoutMs = 2000) => withTimeout(db.execute(sql`select 1`), timeoutMs, 'database'),
    close: () => client.close(),
    migrate: () => migrate(db, { migrationsFolder: MIGRATIONS_DIR }),
  };
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      p,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
