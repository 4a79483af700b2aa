/**
 * One list shape (docs/api-conventions.md, "Lists"): every list pages by `offset` and by `cursor` to its end, each
 * item exactly once, with the same `pagination` object; an offset is never ignored (past the end: an empty page,
 * has_more false); cursor and offset together are a 400 naming both. Rows share creation instants on purpose: the
 * order is (instant, id), so ties must neither repeat nor drop an item.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertPendingAction } from '../../src/db/governance.js';
import { events, intents, pendingActions, webhookDeliveries, webhookEndpoints } from '../../src/db/schema.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, insertTestIdentity, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

type Json = Record<string, any>;

interface List {
  path: string;
  array: string;
  id: (item: Json) => string;
  /** the items seeded for this list */
  count: number;
  defaultLimit: number;
}

const N = 7;
/** creation instants with ties: 7 rows over 4 instants */
const instantOf = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, Math.floor(i / 2)));

describe.each(dbKinds())('one list shape (%s)', (kind) => {
  let t: TestApp;
  let k: TestKey;
  let other: TestKey;
  const lists: List[] = [];

  beforeAll(async () => {
    t = await startTestApp(kind);
    k = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 1_000_000 });
    other = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 1_000_000 });
    const db = t.db;
    const identity = await insertTestIdentity(db, k.orgId, 'pager', 'acme');
    for (let i = 0; i < N; i++) {
      const txHash = randomUUID().replaceAll('-', '').padEnd(64, '0');
      await db.insert(intents).values({
        orgId: k.orgId,
        identityId: identity.id,
        status: 'completed',
        stage: 'completed',
        intent: { parts: [] },
        operationId: `op-${i}`,
        signingData: { request_id: 'r', transaction_hash: txHash, hash_to_sign: 'ef'.repeat(32) },
        prepared: {} as never,
        signerPublicKey: 'aa'.repeat(32),
        signerKeyPage: identity.keyPageUrl,
        txHash,
        expiresAt: new Date(Date.now() + 3_600_000),
        createdAt: instantOf(i),
      });
      await db.insert(pendingActions).values({
        orgId: k.orgId,
        identityId: identity.id,
        txHash,
        txId: `acc://${txHash}@${identity.adiUrl.slice(6)}`,
        principal: identity.adiUrl,
        category: i % 3 === 0 ? 'governance' : 'transactions',
        type: i % 3 === 0 ? 'updateKeyPage' : 'writeData',
        status: 'eligible',
        collectedSignatures: 0,
        threshold: 1,
        userHasSigned: false,
        awaitingAuthorities: [],
        isReady: false,
        memo: i === 0 ? 'proof-gateway intent' : null,
        discoveredAt: instantOf(i),
      });
      await db.insert(events).values({ orgId: k.orgId, type: 'identity.active', resourceId: randomUUID(), sequence: 1, data: {}, createdAt: new Date() });
    }
    // dispatched, so the catch-up order (order=asc) lists them too
    await db.execute(sql`update events set listed_seq = nextval('events_listed_seq'), dispatched_at = now() where org_id = ${k.orgId}`);
    const endpointIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const [ep] = await db
        .insert(webhookEndpoints)
        .values({ orgId: k.orgId, url: `https://example.com/hook/${i}`, secret: `whsec_${Buffer.alloc(32, i).toString('base64')}`, createdAt: instantOf(i) })
        .returning();
      endpointIds.push(ep!.id);
    }
    const eventRows = await db.select().from(events).where(sql`${events.orgId} = ${k.orgId}`);
    for (let i = 0; i < N; i++) {
      await db.insert(webhookDeliveries).values({
        orgId: k.orgId,
        eventId: eventRows[i]!.id,
        endpointId: endpointIds[i % endpointIds.length]!,
        eventType: 'identity.active',
        createdAt: instantOf(i),
      });
    }
    for (let i = 0; i < 4; i++) await createTestOrgAndKey(db, { orgId: k.orgId, name: `key ${i}` });

    lists.push(
      { path: '/v1/transactions', array: 'transactions', id: (x) => x.intent_id, count: N, defaultLimit: 50 },
      { path: '/v1/pending', array: 'actions', id: (x) => x.id, count: N, defaultLimit: 100 },
      { path: '/v1/events', array: 'events', id: (x) => x.id, count: N, defaultLimit: 50 },
      { path: '/v1/events?order=asc', array: 'events', id: (x) => x.id, count: N, defaultLimit: 50 },
      { path: '/v1/webhooks/endpoints', array: 'endpoints', id: (x) => x.id, count: 5, defaultLimit: 50 },
      { path: '/v1/webhooks/deliveries', array: 'deliveries', id: (x) => x.id, count: N, defaultLimit: 50 },
      { path: '/v1/admin/api-keys', array: 'api_keys', id: (x) => x.id, count: 5, defaultLimit: 50 },
    );
  });
  afterAll(async () => t?.close());

  const get = async (path: string, key = k.key) => {
    const res = await t.call(path, { key });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const withQuery = (path: string, q: string) => `${path}${path.includes('?') ? '&' : '?'}${q}`;

  it('the first page: the named array and the pagination object, every item counted', async () => {
    for (const l of lists) {
      const r = await get(l.path);
      expect(r.status, l.path).toBe(200);
      expect(r.body[l.array], l.path).toHaveLength(l.count);
      const next = l.path.endsWith('order=asc') ? r.body.pagination.next_cursor : null; // catch-up keeps a cursor to poll with
      expect(r.body.pagination, l.path).toEqual({ limit: l.defaultLimit, offset: 0, total: l.count, has_more: false, next_cursor: next });
      // another organization sees none of them
      expect((await get(l.path, other.key)).body.pagination.total, l.path).toBe(l.path === '/v1/admin/api-keys' ? 1 : 0);
    }
  });

  it('pages by offset to the end, each item once; an offset past the end is an empty last page', async () => {
    for (const l of lists) {
      const all = (await get(l.path)).body[l.array].map(l.id) as string[];
      for (const limit of [1, 2, 3]) {
        const seen: string[] = [];
        for (let offset = 0, pages = 0; ; pages++) {
          expect(pages, `${l.path} limit ${limit}: paging by offset ends`).toBeLessThanOrEqual(l.count);
          const r = await get(withQuery(l.path, `limit=${limit}&offset=${offset}`));
          expect(r.status, l.path).toBe(200);
          const p = r.body.pagination;
          expect(p, l.path).toMatchObject({ limit, offset, total: l.count, has_more: offset + limit < l.count });
          if (p.has_more) expect(typeof p.next_cursor, l.path).toBe('string');
          seen.push(...r.body[l.array].map(l.id));
          if (!p.has_more) break;
          offset += r.body[l.array].length;
        }
        expect(seen, `${l.path} limit ${limit}`).toEqual(all);
      }
      for (const offset of [l.count, l.count + 10]) {
        const past = await get(withQuery(l.path, `limit=2&offset=${offset}`));
        expect(past.status, l.path).toBe(200);
        expect(past.body[l.array], l.path).toEqual([]);
        expect(past.body.pagination, l.path).toMatchObject({ limit: 2, offset, total: l.count, has_more: false });
      }
    }
  });

  it('pages by cursor to the end, each item once, offset null; a client may switch from offsets to cursors', async () => {
    for (const l of lists) {
      const all = (await get(l.path)).body[l.array].map(l.id) as string[];
      for (const limit of [1, 2, 3]) {
        const first = await get(withQuery(l.path, `limit=${limit}`));
        const seen: string[] = first.body[l.array].map(l.id);
        let p = first.body.pagination;
        for (let pages = 0; p.has_more; pages++) {
          expect(pages, `${l.path} limit ${limit}: paging by cursor ends`).toBeLessThanOrEqual(l.count);
          const r = await get(withQuery(l.path, `limit=${limit}&cursor=${encodeURIComponent(p.next_cursor)}`));
          expect(r.status, `${l.path}: ${JSON.stringify(r.body)}`).toBe(200);
          p = r.body.pagination;
          expect(p, l.path).toMatchObject({ limit, offset: null, total: l.count });
          seen.push(...r.body[l.array].map(l.id));
        }
        expect(seen, `${l.path} limit ${limit}`).toEqual(all);
      }
      // the next_cursor of an offset page continues where that page ends
      const byOffset = await get(withQuery(l.path, 'limit=2&offset=2'));
      const after = await get(withQuery(l.path, `limit=2&cursor=${encodeURIComponent(byOffset.body.pagination.next_cursor)}`));
      expect(after.body[l.array].map(l.id), l.path).toEqual(all.slice(4, 6));
    }
  });

  it('cursor and offset together are a 400 naming both; limit is 1 to 100', async () => {
    for (const l of lists) {
      const { body: first } = await get(withQuery(l.path, 'limit=1'));
      const both = await get(withQuery(l.path, `limit=1&offset=1&cursor=${encodeURIComponent(first.pagination.next_cursor)}`));
      expect(both.status, l.path).toBe(400);
      expect(both.body.code, l.path).toBe('VALIDATION_ERROR');
      expect(both.body.error, l.path).toMatch(/^cursor: .*offset/);
      expect(both.body.details.fields, l.path).toEqual(['cursor', 'offset']);
      for (const bad of ['limit=0', 'limit=101', 'offset=-1', 'offset=x']) {
        const r = await get(withQuery(l.path, bad));
        expect(r.status, `${l.path} ${bad}`).toBe(400);
        expect(r.body.details.field, `${l.path} ${bad}`).toBe(bad.split('=')[0]);
      }
      expect((await get(withQuery(l.path, 'limit=100'))).status, l.path).toBe(200);
    }
  });

  it('GET /v1/events: starting_after is the cursor under its older name', async () => {
    const all = (await get('/v1/events')).body.events.map((e: Json) => e.id) as string[];
    const r = await get(`/v1/events?limit=2&starting_after=${all[1]}`);
    expect(r.body.events.map((e: Json) => e.id)).toEqual(all.slice(2, 4));
    expect(r.body.pagination).toMatchObject({ offset: null, total: N, has_more: true, next_cursor: all[3] });
    for (const q of [`starting_after=${all[1]}&offset=1`, `starting_after=${all[1]}&cursor=${all[2]}`]) {
      const both = await get(`/v1/events?${q}`);
      expect(both.status, q).toBe(400);
      expect(both.body.details.field, q).toBe('starting_after');
    }
  });

  it('GET /v1/pending: stats cover every action the filters match, not the page', async () => {
    const r = await get('/v1/pending?limit=2');
    expect(r.body.actions).toHaveLength(2);
    expect(r.body.stats).toMatchObject({ total: N, governance: 3, transactions: 4, awaiting_others: 0 });
    const gov = await get('/v1/pending?limit=1&category=governance');
    expect(gov.body.pagination).toMatchObject({ total: 3, has_more: true });
    expect(gov.body.stats).toMatchObject({ total: 3, governance: 3, transactions: 0 });
  });

  it("GET /v1/pending: each action carries its ledger transaction's memo; a later scan fills it on actions found before", async () => {
    const actions = (await get('/v1/pending')).body.actions as Json[];
    expect(actions).toHaveLength(N);
    expect(actions.filter((a) => a.memo !== null).map((a) => a.memo)).toEqual(['proof-gateway intent']);
    const without = actions.find((a) => a.memo === null)!;
    const [row] = await t.db.select().from(pendingActions).where(sql`${pendingActions.id} = ${without.id}`);
    const { id: _id, discoveredAt: _d, resolvedAt: _r, updatedAt: _u, ...input } = row!;
    expect(await upsertPendingAction(t.db, { ...input, memo: 'found later' })).toBe(false);
    const again = (await get('/v1/pending')).body.actions as Json[];
    expect(again.find((a) => a.id === without.id)).toMatchObject({ memo: 'found later' });
  });
});
