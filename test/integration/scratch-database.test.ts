/**
 * createScratchDatabase needs only a server: the README runs the benchmarks with DATABASE_URL=postgres://…/bench,
 * a database a fresh cluster does not have.
 */
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createScratchDatabase } from '../../src/devnet/postgres.js';

const serverUrl = inject('postgresUrl');

async function databasesOnServer(): Promise<string[]> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return (await client.query<{ datname: string }>('select datname from pg_database')).rows.map((r) => r.datname);
  } finally {
    await client.end();
  }
}

describe.skipIf(!serverUrl)('scratch databases', () => {
  it('are made and dropped on the server of a URL whose database does not exist', async () => {
    const base = new URL(serverUrl);
    base.pathname = `/no_such_db_${Date.now().toString(36)}`;
    const scratch = await createScratchDatabase(base.toString());
    const name = new URL(scratch.url).pathname.slice(1);
    expect(await databasesOnServer()).toContain(name);
    expect(await databasesOnServer()).not.toContain(base.pathname.slice(1));
    await scratch.drop();
    expect(await databasesOnServer()).not.toContain(name);
  });
});
