/**
 * The key cache's LISTEN connection across a PostgreSQL restart: when it drops the cache stops caching (a
 * notification sent meanwhile would be lost), and once it listens again changes are heard and rows cached again.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiKeyCacheFor } from '../../src/db/api-key-cache.js';
import { API_KEY_CHANNEL } from '../../src/db/api-key-changes.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { startLocalPostgres, type LocalPostgres } from '../../src/devnet/postgres.js';
import { createTestOrgAndKey } from '../support/platform.js';

let pg: LocalPostgres | undefined;
let database: Database;
beforeAll(async () => {
  pg = await startLocalPostgres();
  if (pg) database = await openDatabase({ databaseUrl: pg.url });
}, 60_000);
afterAll(async () => {
  await database?.close();
  await pg?.stop();
});

describe('key cache across a PostgreSQL restart', () => {
  it('stops caching while not listening, listens again, and hears changes after', async (ctx) => {
    if (!pg) return ctx.skip();
    const cache = apiKeyCacheFor(database);
    const states: boolean[] = [];
    database.listen(
      API_KEY_CHANNEL,
      () => {},
      (on) => states.push(on),
    );
    await vi.waitFor(() => expect(cache.listening).toBe(true), { timeout: 10_000 });
    const k = await createTestOrgAndKey(database.db, { isAdmin: true });
    expect((await cache.find(k.key))?.id).toBe(k.keyId);

    await pg.restart();
    await vi.waitFor(() => expect(states).toContain(false), { timeout: 10_000 });
    await vi.waitFor(() => expect(cache.listening).toBe(true), { timeout: 30_000, interval: 100 });
    expect(states.at(-1)).toBe(true);

    // cached again, and a change announced now is heard: the next lookup reads the row
    await vi.waitFor(async () => expect((await cache.find(k.key))?.revokedAt).toBeNull(), { timeout: 10_000 });
    await database.db.execute(sql`update api_keys set revoked_at = now() where id = ${k.keyId}`);
    expect((await cache.find(k.key))?.revokedAt).toBeNull(); // served from the cache
    await database.db.execute(sql`select pg_notify(${API_KEY_CHANNEL}, ${k.keyId})`);
    await vi.waitFor(async () => expect((await cache.find(k.key))?.revokedAt).not.toBeNull(), { timeout: 2000, interval: 20 });
  }, 120_000);
});
