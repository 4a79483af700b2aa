/** The bootstrap admin key: created once on an empty database, never again, even by concurrent starters; it alone
 * holds the operator scope (/metrics). */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { bootstrapAdminKey, OPERATOR_PERMISSIONS, findApiKeyByRaw } from '../../src/db/api-keys.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { apiKeys, organizations } from '../../src/db/schema.js';
import { dbKinds } from '../support/env.js';
import { createScratchDatabase } from '../../src/devnet/postgres.js';

describe.each(dbKinds())('bootstrapAdminKey (%s)', (kind) => {
  const opened: Database[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const d of opened) await d.close();
    for (const c of cleanups) await c();
  });

  it('creates the operator organization and one admin key on an empty database, and nothing afterwards', async () => {
    // Postgres: three starters with their own connection pools race; PGlite: three concurrent calls on one database
    let dbs: Database[];
    if (kind === 'postgres') {
      const scratch = await createScratchDatabase(inject('postgresUrl'));
      cleanups.push(scratch.drop);
      dbs = [];
      for (let i = 0; i < 3; i++) dbs.push(await openDatabase({ databaseUrl: scratch.url }));
    } else {
      const d = await openDatabase({ pgliteDir: 'memory' });
      dbs = [d, d, d];
    }
    opened.push(...new Set(dbs));
    const results = await Promise.all(dbs.map((d) => bootstrapAdminKey(d.db)));
    const made = results.filter((r) => r !== undefined);
    expect(made).toHaveLength(1);
    expect(made[0]!.rawKey).toMatch(/^ck_live_[0-9A-Za-z]{43}$/);
    const db = dbs[0].db;
    const key = await findApiKeyByRaw(db, made[0]!.rawKey);
    expect(key).toMatchObject({ isAdmin: true, permissions: OPERATOR_PERMISSIONS, orgId: made[0]!.org.id });
    expect(await db.select().from(organizations)).toHaveLength(1);
    expect(await db.select().from(apiKeys)).toHaveLength(1);
    expect(await bootstrapAdminKey(db)).toBeUndefined();
  });
});
