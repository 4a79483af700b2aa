/**
 * The authenticated hot path across processes: two app instances on one Postgres database, each with its own pool,
 * key cache and LISTEN connection (what two API processes have). Rate-limit numbers are leased in blocks per process:
 * the limit is never exceeded, and at most (N − 1) × (block − 1) requests are refused below it. A key revoked or
 * rotated through one instance is refused by the other within the notification's delivery, well inside the cache's
 * TTL; a change made by hand (no notification) is seen within the TTL, or at once after a hand-sent pg_notify.
 */
import { eq, and, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../src/api/app.js';
import { maxBlock } from '../../src/api/middleware/rate-limit.js';
import { apiKeyCacheFor, API_KEY_CACHE_TTL_MS } from '../../src/db/api-key-cache.js';
import { API_KEY_CHANNEL } from '../../src/db/api-key-changes.js';
import { revokeApiKey, rotateApiKey } from '../../src/db/api-keys.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { apiKeys, rateLimitCounters } from '../../src/db/schema.js';
import { apiLedgerClient } from '../../src/services/deps.js';
import { dbKinds, quietLogger } from '../support/env.js';
import { createTestOrgAndKey, startTestApp, type TestApp } from '../support/platform.js';

const MINUTE = 60_000;
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE + 20_000;
/** how soon the other instance must refuse a revoked key: far below the cache's TTL, so only the notification can */
const PROPAGATION_BOUND_MS = 2000;

describe.skipIf(!dbKinds().includes('postgres'))('two app instances on one Postgres database', () => {
  let a: TestApp;
  let bDatabase: Database;
  let callB: TestApp['call'];
  beforeAll(async () => {
    a = await startTestApp('postgres', { clockMs: T0 });
    bDatabase = await openDatabase({ databaseUrl: (a.database as { url?: string }).url! });
    const appB = createApp({ ...a.deps, database: bDatabase, ledger: apiLedgerClient(a.config), logger: quietLogger });
    callB = (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (init.key) headers.set('X-API-Key', init.key);
      return appB.request(path, { ...init, headers });
    };
    // both caches hear changes (until then nothing is cached and every lookup reads the row)
    await vi.waitFor(() => expect(apiKeyCacheFor(a.database).listening && apiKeyCacheFor(bDatabase).listening).toBe(true), { timeout: 10_000 });
  }, 60_000);
  afterAll(async () => {
    await bDatabase?.close();
    await a?.close();
  });

  const statusOf = async (call: TestApp['call'], key: string) => (await call('/v1/admin/api-keys', { key })).status;

  it('leased rate-limit numbers: never above the limit, at most (N − 1) × (block − 1) refused early, and the held numbers are still served', async () => {
    const LIMIT = 320;
    const block = maxBlock(LIMIT);
    expect(block).toBe(10);
    const k = await createTestOrgAndKey(a.db, { isAdmin: true, rateLimitRpm: LIMIT });
    // instance A serves 40 requests, one at a time: its blocks are 1, 2, 4, 8, 10, 10, 10 (45 numbers leased)
    const seenA: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await a.call('/v1/admin/api-keys', { key: k.key });
      expect(r.status).toBe(200);
      seenA.push(Number(r.headers.get('x-ratelimit-remaining')));
    }
    expect(seenA).toEqual(Array.from({ length: 40 }, (_, i) => LIMIT - 1 - i));
    const [row] = await a.db
      .select()
      .from(rateLimitCounters)
      .where(and(eq(rateLimitCounters.bucket, `key:${k.keyId}`), eq(rateLimitCounters.windowStart, new Date(Math.floor(T0 / MINUTE) * MINUTE))));
    // numbers are leased ahead of use (a write per block, not per request), never more than a block ahead
    const heldByA = row!.count - 40;
    expect(heldByA).toBeGreaterThan(0);
    expect(heldByA).toBeLessThan(block);

    // instance B serves until refused: it gets every number A does not hold
    let admittedB = 0;
    for (;;) {
      const r = await callB('/v1/admin/api-keys', { key: k.key });
      if (r.status === 429) break;
      expect(r.status).toBe(200);
      admittedB++;
    }
    const admitted = 40 + admittedB;
    expect(admitted).toBeLessThanOrEqual(LIMIT);
    expect(admitted).toBeGreaterThanOrEqual(LIMIT - (2 - 1) * (block - 1));
    expect(admitted).toBe(LIMIT - heldByA);
    // A still serves the numbers it holds, then refuses: the window's total is the limit exactly
    for (let i = 0; i < heldByA; i++) expect(await statusOf(a.call, k.key)).toBe(200);
    expect(await statusOf(a.call, k.key)).toBe(429);
    expect(await statusOf(callB, k.key)).toBe(429);
  });

  it('a key revoked through one instance is refused by the other within the bound (cached there before)', async () => {
    const admin = await createTestOrgAndKey(a.db, { isAdmin: true });
    const k = await createTestOrgAndKey(a.db, { orgId: admin.orgId, isAdmin: true });
    expect(await statusOf(callB, k.key)).toBe(200); // B caches the key
    expect(await statusOf(a.call, k.key)).toBe(200); // and A too
    const revokedAt = Date.now();
    expect(await revokeApiKey(a.db, admin.orgId, k.keyId)).toBe(true);
    expect(await statusOf(a.call, k.key)).toBe(403); // the revoking process: at once
    await vi.waitFor(async () => expect(await statusOf(callB, k.key)).toBe(403), { timeout: PROPAGATION_BOUND_MS, interval: 20 });
    expect(Date.now() - revokedAt).toBeLessThan(PROPAGATION_BOUND_MS);
  });

  it('a rotated key is refused by the other instance within the bound; its replacement works there', async () => {
    const k = await createTestOrgAndKey(a.db, { isAdmin: true });
    expect(await statusOf(callB, k.key)).toBe(200);
    const rotated = await rotateApiKey(a.db, k.orgId, k.keyId);
    if (!rotated || !('rawKey' in rotated)) throw new Error('not rotated');
    await vi.waitFor(async () => expect(await statusOf(callB, k.key)).toBe(403), { timeout: PROPAGATION_BOUND_MS, interval: 20 });
    expect(await statusOf(callB, rotated.rawKey)).toBe(200);
  });

  it('a change made by hand is not announced: the cached row serves until the TTL or a pg_notify sent by hand', async () => {
    const k = await createTestOrgAndKey(a.db, { isAdmin: true });
    expect(await statusOf(callB, k.key)).toBe(200);
    await a.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, k.keyId));
    expect(API_KEY_CACHE_TTL_MS).toBeGreaterThan(PROPAGATION_BOUND_MS);
    expect(await statusOf(callB, k.key)).toBe(200); // cached: no database read for the key
    await a.db.execute(sql`select pg_notify(${API_KEY_CHANNEL}, ${k.keyId})`);
    await vi.waitFor(async () => expect(await statusOf(callB, k.key)).toBe(403), { timeout: PROPAGATION_BOUND_MS, interval: 20 });
  });
});

describe('one process on PGlite: the process invalidates its own cache', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite');
  });
  afterAll(async () => t?.close());

  it('a cached key revoked or rotated through the admin API is refused on the next request', async () => {
    const admin = await createTestOrgAndKey(t.db, { isAdmin: true });
    const k = await createTestOrgAndKey(t.db, { orgId: admin.orgId, isAdmin: true });
    const other = await createTestOrgAndKey(t.db, { orgId: admin.orgId, isAdmin: true });
    expect((await t.call('/v1/admin/api-keys', { key: k.key })).status).toBe(200);
    expect((await t.call('/v1/admin/api-keys', { key: other.key })).status).toBe(200);
    expect((await t.call(`/v1/admin/api-keys/${k.keyId}`, { method: 'DELETE', key: admin.key })).status).toBeLessThan(300);
    expect((await t.call('/v1/admin/api-keys', { key: k.key })).status).toBe(403);
    const rotate = await t.call(`/v1/admin/api-keys/${other.keyId}/rotate`, { method: 'POST', key: admin.key });
    expect(rotate.status).toBeLessThan(300);
    expect((await t.call('/v1/admin/api-keys', { key: other.key })).status).toBe(403);
  });
});
