/** Idempotency-Key: replay, mismatch, in flight, 5xx not stored, 24 h retention, per-organization
 * records, and concurrent duplicates creating exactly one resource — on a real route and on a test-only route. */
import { randomUUID } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAuth } from '../../src/api/middleware/auth.js';
import { ApiError } from '../../src/api/errors.js';
import { secureRoute } from '../../src/api/secure-route.js';
import { apiKeys, idempotencyKeys } from '../../src/db/schema.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

describe.each(dbKinds())('Idempotency-Key (%s)', (kind) => {
  let t: TestApp;
  let admin: TestKey;
  let otherOrg: TestKey;
  /** test-only resource: created rows per org, and a gate that holds handlers while open */
  const created: { org: string; name: string; id: string }[] = [];
  let gate: Promise<void> | undefined;
  /** resolved when a handler reaches the gate */
  let entered: (() => void) | undefined;
  let failNext = 0;
  let failStatus = 502;

  beforeAll(async () => {
    t = await startTestApp(kind);
    admin = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 10_000 });
    otherOrg = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 10_000 });
    t.app.openapi(
      secureRoute(t.deps, {
        method: 'post',
        path: '/v1/test/things',
        scopes: ['write'],
        idempotent: true,
        request: { body: { content: { 'application/json': { schema: z.object({ name: z.string() }) } } } },
        responses: { 201: { description: 'created', content: { 'application/json': { schema: z.object({ id: z.string(), name: z.string() }) } } } },
      }),
      async (c) => {
        const auth = requireAuth(c);
        const { name } = c.req.valid('json');
        entered?.();
        if (gate) await gate;
        if (failNext > 0) {
          failNext--;
          throw failStatus === 402 ? new ApiError(402, 'INSUFFICIENT_CREDITS', 'add credits first') : new ApiError(502, 'DOWNSTREAM', 'downstream failed');
        }
        const thing = { org: auth.orgId, name, id: randomUUID() };
        created.push(thing);
        c.header('Location', `/v1/test/things/${thing.id}`);
        c.header('Cache-Control', 'private, max-age=7');
        c.header('X-Not-Replayed', 'x');
        // a NUL in the answer (inputs with one are refused before a handler runs): jsonb cannot store it
        return c.json({ id: thing.id, name: name === 'unstorable' ? 'nul\u0000byte' : name }, 201);
      },
    );
  });
  afterAll(async () => t?.close());

  const post = (path: string, key: string, body: unknown, idemKey?: string) =>
    t.call(path, { method: 'POST', key, body: JSON.stringify(body), headers: idemKey === undefined ? {} : { 'Idempotency-Key': idemKey } });

  it('a replay returns the original status and body with idempotent: true, and creates nothing', async () => {
    const idem = randomUUID();
    const first = await post('/v1/test/things', admin.key, { name: 'replayed' }, idem);
    expect(first.status).toBe(201);
    const body1 = await first.json();
    expect(body1.idempotent).toBeUndefined();
    const second = await t.call('/v1/test/things', {
      method: 'POST',
      key: admin.key,
      body: '{ "name" : "replayed" }',
      headers: { 'Idempotency-Key': `"${idem}"` },
    }); // whitespace and RFC 8941 quoting do not matter
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.json()).toEqual({ ...body1, idempotent: true });
    expect(created.filter((x) => x.name === 'replayed')).toHaveLength(1);
  });

  it('a replay sends the allow-listed headers again (Location, Cache-Control, Retry-After), and no others', async () => {
    const idem = randomUUID();
    const first = await post('/v1/test/things', admin.key, { name: 'located' }, idem);
    expect(first.status).toBe(201);
    const id = (await first.json()).id;
    const replay = await post('/v1/test/things', admin.key, { name: 'located' }, idem);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe(`/v1/test/things/${id}`);
    expect(replay.headers.get('cache-control')).toBe('private, max-age=7');
    expect(replay.headers.get('x-not-replayed')).toBeNull();
    // the API-key replay stays uncacheable too
    const keyIdem = randomUUID();
    await post('/v1/admin/api-keys', admin.key, { name: 'no-store-replay' }, keyIdem);
    const keyReplay = await post('/v1/admin/api-keys', admin.key, { name: 'no-store-replay' }, keyIdem);
    expect(keyReplay.headers.get('idempotent-replayed')).toBe('true');
    expect(keyReplay.headers.get('cache-control')).toBe('no-store');
  });

  it('a created API key is never stored for replay: the record and the replay lack the raw key (spec §2.7: shown once)', async () => {
    const idem = randomUUID();
    const first = await post('/v1/admin/api-keys', admin.key, { name: 'secret-once', rate_limit_rpm: 5 }, idem);
    expect(first.status).toBe(201);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const body1 = await first.json();
    expect(body1.api_key.key).toMatch(/^ck_live_/);
    const [rec] = await t.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, idem));
    expect(JSON.stringify(rec.responseBody)).not.toContain(body1.api_key.key);

    const second = await post('/v1/admin/api-keys', admin.key, { rate_limit_rpm: 5, name: 'secret-once' }, idem); // key order does not matter
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const body2 = await second.json();
    const { key: _raw, ...withoutKey } = body1.api_key;
    expect(body1.key).toBe(body1.api_key.key);
    expect(body2).toMatchObject({ idempotent: true, redacted: ['key', 'api_key.key'], note: expect.stringMatching(/shown only once/) });
    expect(body2.api_key).toEqual(withoutKey);
    // the same shape as the original, the key's fields at the top level, without the raw key
    expect(body2).toMatchObject(withoutKey);
    expect(body2).not.toHaveProperty('key');
    expect(JSON.stringify(body2)).not.toContain(body1.api_key.key);
    // "store this key now" belongs beside the key: the replay has none, so it says only what its note says
    expect(body1.warning).toMatch(/^Store this key now/);
    expect(body2).not.toHaveProperty('warning');
    expect(Object.keys(body2).sort()).toEqual(['api_key', 'idempotent', 'note', 'redacted', ...Object.keys(withoutKey)].sort());
    const rows = await t.db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.orgId, admin.orgId), eq(apiKeys.name, 'secret-once')));
    expect(rows).toHaveLength(1);
  });

  it('rotation is not cacheable either', async () => {
    const k = await createTestOrgAndKey(t.db, { orgId: admin.orgId, name: 'to-rotate' });
    const res = await t.call(`/v1/admin/api-keys/${k.keyId}/rotate`, { method: 'POST', key: admin.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('without the header every POST creates', async () => {
    await post('/v1/admin/api-keys', admin.key, { name: 'twice' });
    await post('/v1/admin/api-keys', admin.key, { name: 'twice' });
    const rows = await t.db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.orgId, admin.orgId), eq(apiKeys.name, 'twice')));
    expect(rows).toHaveLength(2);
  });

  it('the same key with a different body (or path) is a 422 IDEMPOTENCY_KEY_MISMATCH', async () => {
    const idem = randomUUID();
    expect((await post('/v1/admin/api-keys', admin.key, { name: 'one' }, idem)).status).toBe(201);
    const res = await post('/v1/admin/api-keys', admin.key, { name: 'two' }, idem);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_MISMATCH', error: expect.stringMatching(/different request/) });
    const other = await post('/v1/test/things', admin.key, { name: 'one' }, idem);
    expect(other.status).toBe(422);
  });

  it('the same key while the first request is running is a 409 IDEMPOTENCY_KEY_IN_FLIGHT with Retry-After', async () => {
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const idem = randomUUID();
    const inHandler = new Promise<void>((r) => (entered = r));
    const first = post('/v1/test/things', admin.key, { name: 'slow' }, idem);
    await inHandler; // the first request holds the key and waits at the gate
    entered = undefined;
    const second = await post('/v1/test/things', admin.key, { name: 'slow' }, idem);
    expect(second.status).toBe(409);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(await second.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_FLIGHT' });
    open();
    gate = undefined;
    expect((await first).status).toBe(201);
    const third = await post('/v1/test/things', admin.key, { name: 'slow' }, idem);
    expect(third.status).toBe(201);
    expect((await third.json()).idempotent).toBe(true);
    expect(created.filter((x) => x.name === 'slow')).toHaveLength(1);
  });

  it('5xx responses are not stored: the retry with the same key runs again', async () => {
    failNext = 1;
    const idem = randomUUID();
    const first = await post('/v1/test/things', admin.key, { name: 'flaky' }, idem);
    expect(first.status).toBe(502);
    expect(await t.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, idem))).toHaveLength(0);
    const retry = await post('/v1/test/things', admin.key, { name: 'flaky' }, idem);
    expect(retry.status).toBe(201);
    expect((await retry.json()).idempotent).toBeUndefined();
    expect(created.filter((x) => x.name === 'flaky')).toHaveLength(1);
  });

  it('a response that cannot be stored is still returned, and the claim is kept: a retry does not run the handler again', async () => {
    const idem = randomUUID();
    const name = 'unstorable'; // answered with a U+0000, which jsonb refuses: completing the record fails after the handler succeeded
    const first = await post('/v1/test/things', admin.key, { name }, idem);
    expect(first.status).toBe(201);
    expect((await first.json()).name).toBe('nul\u0000byte');
    const [rec] = await t.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, idem));
    expect(rec.state).toBe('in_progress');
    const retry = await post('/v1/test/things', admin.key, { name }, idem);
    expect(retry.status).toBe(409);
    expect((await retry.json()).code).toBe('IDEMPOTENCY_KEY_IN_FLIGHT');
    expect(created.filter((x) => x.name === name)).toHaveLength(1);
  });

  it('402 (credits short) is not stored: after the client adds credits the same key runs again', async () => {
    failNext = 1;
    failStatus = 402;
    const idem = randomUUID();
    try {
      expect((await post('/v1/test/things', admin.key, { name: 'broke' }, idem)).status).toBe(402);
    } finally {
      failStatus = 502;
    }
    const retry = await post('/v1/test/things', admin.key, { name: 'broke' }, idem);
    expect(retry.status).toBe(201);
    expect((await retry.json()).idempotent).toBeUndefined();
  });

  it('validation errors are not stored either', async () => {
    const idem = randomUUID();
    expect((await post('/v1/test/things', admin.key, { name: 7 }, idem)).status).toBe(400);
    expect((await post('/v1/test/things', admin.key, { name: 'fixed' }, idem)).status).toBe(201);
  });

  it('records are per organization: the same key in another org is independent', async () => {
    const idem = randomUUID();
    const a = await (await post('/v1/test/things', admin.key, { name: 'shared-key' }, idem)).json();
    const bRes = await post('/v1/test/things', otherOrg.key, { name: 'shared-key' }, idem);
    expect(bRes.status).toBe(201);
    const b = await bRes.json();
    expect(b.idempotent).toBeUndefined();
    expect(b.id).not.toBe(a.id);
    expect(
      created
        .filter((x) => x.name === 'shared-key')
        .map((x) => x.org)
        .sort(),
    ).toEqual([admin.orgId, otherOrg.orgId].sort());
  });

  it('records are kept 24 hours, then the key may be used afresh', async () => {
    const idem = randomUUID();
    await post('/v1/test/things', admin.key, { name: 'retention' }, idem);
    const [rec] = await t.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, idem));
    expect(rec.expiresAt.getTime() - rec.createdAt.getTime()).toBe(24 * 3600 * 1000);
    t.clock.ms += 23 * 3600 * 1000;
    expect((await (await post('/v1/test/things', admin.key, { name: 'retention' }, idem)).json()).idempotent).toBe(true);
    t.clock.ms += 3600 * 1000 + 1;
    const fresh = await post('/v1/test/things', admin.key, { name: 'retention' }, idem);
    expect((await fresh.json()).idempotent).toBeUndefined();
    expect(created.filter((x) => x.name === 'retention')).toHaveLength(2);
  });

  it('a malformed header is a 400 VALIDATION_ERROR naming the header', async () => {
    const res = await post('/v1/test/things', admin.key, { name: 'x' }, 'a'.repeat(256));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'Idempotency-Key' } });
  });

  it('an empty header is a 400 naming the header, not a request without a key', async () => {
    const before = created.filter((x) => x.name === 'empty-key').length;
    for (const empty of ['', '   ', '""']) {
      const res = await post('/v1/test/things', admin.key, { name: 'empty-key' }, empty);
      expect(res.status, JSON.stringify(empty)).toBe(400);
      const body = await res.json();
      expect(body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'Idempotency-Key' } });
      expect(body.error).toMatch(/^Idempotency-Key: /);
    }
    expect(created.filter((x) => x.name === 'empty-key').length).toBe(before);
  });

  it('concurrent duplicates create exactly one resource (real route: POST /v1/admin/api-keys)', async () => {
    const idem = randomUUID();
    const responses = await Promise.all(Array.from({ length: 25 }, () => post('/v1/admin/api-keys', admin.key, { name: 'concurrent' }, idem)));
    const bodies = await Promise.all(responses.map((r) => r.json()));
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const fresh = bodies.filter((b, i) => statuses[i] === 201 && !b.idempotent);
    expect(fresh).toHaveLength(1);
    for (const [i, b] of bodies.entries()) if (statuses[i] === 201) expect(b.api_key.id).toBe(fresh[0].api_key.id);
    const rows = await t.db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.orgId, admin.orgId), eq(apiKeys.name, 'concurrent')));
    expect(rows).toHaveLength(1);
  });

  it('concurrent duplicates while the handler is slow: one execution, the rest 409', async () => {
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const idem = randomUUID();
    let settled = 0;
    const pending = Array.from({ length: 20 }, () =>
      Promise.resolve(post('/v1/test/things', admin.key, { name: 'burst' }, idem)).then((r) => {
        settled++;
        return r;
      }),
    );
    // the gate stays closed until 19 requests have been answered: all of them while the first still runs
    for (let i = 0; i < 600 && settled < 19; i++) await new Promise((r) => setTimeout(r, 50));
    open();
    gate = undefined;
    const statuses = (await Promise.all(pending)).map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    expect(created.filter((x) => x.name === 'burst')).toHaveLength(1);
  });
});
