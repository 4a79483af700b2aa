/** Authentication (the 401/403 answers and their texts), admin API keys, cross-org isolation, revoke, rotate and expiry. */
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../src/net/server.js';
import { apiKeys } from '../../src/db/schema.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

describe.each(dbKinds())('API keys and authentication (%s)', (kind) => {
  let t: TestApp;
  let adminA: TestKey;
  let adminB: TestKey;
  beforeAll(async () => {
    t = await startTestApp(kind);
    adminA = await createTestOrgAndKey(t.db, { orgName: 'A', isAdmin: true, rateLimitRpm: 1000 });
    adminB = await createTestOrgAndKey(t.db, { orgName: 'B', isAdmin: true, rateLimitRpm: 1000 });
  });
  afterAll(async () => t?.close());

  const expectError = async (res: Response, status: number, error: string, code: string) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('x-ratelimit-limit')).toBeTruthy();
    const body = await res.json();
    expect(body).toMatchObject({ error, code });
    return body;
  };

  it('401 with the spec texts: missing, malformed, unknown key', async () => {
    await expectError(await t.call('/v1/admin/api-keys'), 401, 'Missing X-API-Key header', 'MISSING_API_KEY');
    await expectError(await t.call('/v1/admin/api-keys', { key: 'ck_live_short' }), 401, 'Invalid API key format', 'INVALID_API_KEY_FORMAT');
    await expectError(await t.call('/v1/admin/api-keys', { key: `sk_test_${'a'.repeat(43)}` }), 401, 'Invalid API key format', 'INVALID_API_KEY_FORMAT');
    await expectError(await t.call('/v1/admin/api-keys', { key: `ck_live_${'a'.repeat(43)}` }), 401, 'Invalid API key', 'INVALID_API_KEY');
  });

  it('403 with the spec texts: deactivated (revoked) and expired keys', async () => {
    const revoked = await createTestOrgAndKey(t.db, { orgId: adminA.orgId });
    await t.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, revoked.keyId));
    // on a route that exists: a path no route has is a 404 whatever the key (docs/api-conventions.md)
    await expectError(await t.call('/v1/identities', { key: revoked.key }), 403, 'API key is deactivated', 'API_KEY_DEACTIVATED');

    const soon = await createTestOrgAndKey(t.db, { orgId: adminA.orgId, isAdmin: true, expiresAt: new Date(t.clock.ms + 30_000) });
    expect((await t.call('/v1/admin/api-keys', { key: soon.key })).status).toBe(200);
    t.clock.ms += 31_000; // the key's expiry passes
    try {
      await expectError(await t.call('/v1/admin/api-keys', { key: soon.key }), 403, 'API key has expired', 'API_KEY_EXPIRED');
      const list = (await (await t.call('/v1/admin/api-keys', { key: adminA.key })).json()).api_keys;
      expect(list.find((k: { id: string }) => k.id === soon.keyId).is_active).toBe(false);
    } finally {
      t.clock.ms -= 31_000;
    }
  });

  it('public paths need no key; unknown paths and wrong methods are JSON 404s and 405s with or without one', async () => {
    for (const path of ['/docs/json', '/docs', '/reference', '/portal']) {
      const res = await t.call(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('x-ratelimit-reset'), path).toMatch(/^\d{10}$/);
    }
    expect([200, 503]).toContain((await t.call('/v1/health')).status);
    // answered before authentication (docs/api-conventions.md)
    await expectError(await t.call('/v1/nope'), 404, 'No route for GET /v1/nope', 'NOT_FOUND');
    await expectError(await t.call('/v1/nope', { key: adminA.key }), 404, 'No route for GET /v1/nope', 'NOT_FOUND');
    // POST to the health path is a wrong method, not a missing key
    const post = await t.call('/v1/health', { method: 'POST' });
    await expectError(post, 405, 'Method POST not allowed on /v1/health; allowed: GET, HEAD, OPTIONS', 'METHOD_NOT_ALLOWED');
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('a scope the key lacks is a 403 naming it', async () => {
    const readOnly = await createTestOrgAndKey(t.db, { orgId: adminA.orgId, permissions: ['read'] });
    const body = await expectError(
      await t.call('/v1/admin/api-keys', { key: readOnly.key }),
      403,
      'API key lacks the required scope: admin',
      'INSUFFICIENT_SCOPE',
    );
    expect(body.details).toEqual({ required_scopes: ['admin'], missing_scopes: ['admin'] });
  });

  it('creates a key: raw ck_live_ key once, only its SHA-256 stored, listings show the prefix only', async () => {
    const res = await t.call('/v1/admin/api-keys', {
      method: 'POST',
      key: adminA.key,
      body: JSON.stringify({
        name: 'ci',
        permissions: ['read', 'proof:read'],
        rate_limit_rpm: 120,
        expires_at: new Date(t.clock.ms + 86_400_000).toISOString(),
      }),
    });
    expect(res.status).toBe(201);
    const { api_key: created, warning, ...top } = await res.json();
    expect(warning).toMatch(/only once/);
    // the key's own fields at the top level (as the list shows them, with the raw key once), the same under api_key
    expect(top).toEqual(created);
    expect(created).toMatchObject({ is_active: true, revoked_at: null, last_used_at: null });
    expect(created.key).toMatch(/^ck_live_[0-9A-Za-z]{43}$/);
    expect(created).toMatchObject({ name: 'ci', org_id: adminA.orgId, permissions: ['read', 'proof:read'], rate_limit_rpm: 120 });
    expect(created.key.startsWith(created.prefix)).toBe(true);

    const [row] = await t.db.select().from(apiKeys).where(eq(apiKeys.id, created.id));
    expect(row.keyHash).toBe(createHash('sha256').update(created.key).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(created.key);

    const listRes = await t.call('/v1/admin/api-keys', { key: adminA.key });
    const listText = await listRes.text();
    expect(listText).not.toContain(created.key);
    expect(listText).not.toContain(row.keyHash);
    const listed = JSON.parse(listText).api_keys.find((k: { id: string }) => k.id === created.id);
    expect(listed).toMatchObject({ prefix: created.prefix, is_active: true, rate_limit_rpm: 120, revoked_at: null });
    expect(listed.key).toBeUndefined();

    // the new key authenticates and carries its own scopes and limit
    const own = await t.call('/v1/admin/api-keys', { key: created.key });
    expect(own.status).toBe(403);
    expect(own.headers.get('x-ratelimit-limit')).toBe('120');
  });

  it('the integration scopes the webhook and event routes accept can be granted, and each opens only its routes', async () => {
    const mint = async (permissions: string[]) => {
      const res = await t.call('/v1/admin/api-keys', { method: 'POST', key: adminA.key, body: JSON.stringify({ name: permissions.join('+'), permissions }) });
      expect(res.status, permissions.join()).toBe(201);
      const { api_key } = await res.json();
      expect(api_key.permissions).toEqual(permissions);
      return api_key.key as string;
    };
    const hooksRead = await mint(['webhook:read']);
    const hooksWrite = await mint(['webhook:write']);
    const events = await mint(['events:read']);
    expect((await t.call('/v1/webhooks/endpoints', { key: hooksRead })).status).toBe(200);
    expect((await t.call('/v1/webhooks/endpoints', { key: hooksWrite })).status).toBe(200);
    expect((await t.call('/v1/events', { key: events })).status).toBe(200);
    expect((await t.call('/v1/events', { key: hooksRead })).status).toBe(403);
    expect((await t.call('/v1/webhooks/endpoints', { key: events })).status).toBe(403);
    expect((await t.call('/v1/identities', { key: hooksWrite })).status).toBe(403);
    expect((await t.call('/v1/admin/api-keys', { key: hooksWrite })).status).toBe(403);
  });

  it('validation errors name the field', async () => {
    const res = await t.call('/v1/admin/api-keys', { method: 'POST', key: adminA.key, body: JSON.stringify({ name: 'x', rate_limit_rpm: 'many' }) });
    const body = await expectError(res, 400, 'rate_limit_rpm: Invalid input: expected number, received string', 'VALIDATION_ERROR');
    expect(body.details.field).toBe('rate_limit_rpm');
    expect(body.details.issues[0].path).toEqual(['rate_limit_rpm']);
    const bad = await t.call('/v1/admin/api-keys', { method: 'POST', key: adminA.key, body: JSON.stringify({ name: 'x', permissions: ['root'] }) });
    expect(bad.status).toBe(400);
    const badBody = await bad.json();
    expect(badBody.error).toMatch(/^permissions\[0\]: /);
    expect(badBody.details.field).toBe('permissions[0]');
    const past = await t.call('/v1/admin/api-keys', {
      method: 'POST',
      key: adminA.key,
      body: JSON.stringify({ name: 'x', expires_at: '2001-01-01T00:00:00Z' }),
    });
    await expectError(past, 400, 'expires_at: must be in the future', 'VALIDATION_ERROR');
  });

  it('a body that is not JSON is a 400 VALIDATION_ERROR naming the body; a wrong Content-Type a 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const malformed = await t.call('/v1/admin/api-keys', { method: 'POST', key: adminA.key, body: '{"name":' });
    await expectError(malformed, 400, expect.stringMatching(/^body: malformed JSON/) as unknown as string, 'VALIDATION_ERROR');
    for (const type of ['text/plain', '']) {
      const res = await t.call('/v1/admin/api-keys', { method: 'POST', key: adminA.key, body: '{"name":"a"}', headers: { 'content-type': type } });
      await expectError(res, 415, 'Unsupported Media Type: send the body as Content-Type: application/json', 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('a body over 1 MiB is a 413 PAYLOAD_TOO_LARGE', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1_100_000) });
    // no Content-Length (streamed): counted while read
    await expectError(
      await t.call('/v1/admin/api-keys', { method: 'POST', key: adminA.key, body: big }),
      413,
      'Request body larger than 1 MiB',
      'PAYLOAD_TOO_LARGE',
    );
    // over real HTTP with a Content-Length: refused before reading
    const server = await listen(t.app, '127.0.0.1', 0);
    try {
      const res = await fetch(`${server.url}/v1/admin/api-keys`, {
        method: 'POST',
        headers: { 'X-API-Key': adminA.key, 'content-type': 'application/json' },
        body: big,
      });
      await expectError(res, 413, 'Request body larger than 1 MiB', 'PAYLOAD_TOO_LARGE');
      // a normal body still goes through over both paths
      const ok = await fetch(`${server.url}/v1/admin/api-keys`, {
        method: 'POST',
        headers: { 'X-API-Key': adminA.key, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'small' }),
      });
      expect(ok.status).toBe(201);
    } finally {
      await server.close();
    }
  });

  it('over real HTTP every answer carries X-Request-Id and the X-RateLimit headers: JSON, an error, a Response object, a 404', async () => {
    const server = await listen(t.app, '127.0.0.1', 0);
    try {
      const answers = [
        await fetch(`${server.url}/v1/admin/api-keys`, { headers: { 'X-API-Key': adminA.key, 'X-Request-Id': 'req-1' } }),
        await fetch(`${server.url}/v1/admin/api-keys`, { headers: { 'X-API-Key': 'ck_live_nope' } }),
        await fetch(`${server.url}/docs/json`),
        await fetch(`${server.url}/v1/no-such-route`, { headers: { 'X-API-Key': adminA.key } }),
      ];
      expect(answers.map((r) => r.status)).toEqual([200, 401, 200, 404]);
      expect(answers[0]!.headers.get('x-request-id')).toBe('req-1');
      for (const r of answers) {
        expect(r.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]+$/);
        expect(Number(r.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
        expect(r.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
        expect(r.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
        expect(r.headers.get('content-type')).toContain('application/json');
        await r.text();
      }
    } finally {
      await server.close();
    }
  });

  it('revocation is immediate and final', async () => {
    const k = await createTestOrgAndKey(t.db, { orgId: adminA.orgId, isAdmin: true });
    expect((await t.call('/v1/admin/api-keys', { key: k.key })).status).toBe(200);
    const del = await t.call(`/v1/admin/api-keys/${k.keyId}`, { method: 'DELETE', key: adminA.key });
    expect(del.status).toBe(204);
    await expectError(await t.call('/v1/admin/api-keys', { key: k.key }), 403, 'API key is deactivated', 'API_KEY_DEACTIVATED');
    // again: still 204, still revoked; rotation cannot bring it back
    expect((await t.call(`/v1/admin/api-keys/${k.keyId}`, { method: 'DELETE', key: adminA.key })).status).toBe(204);
    expect((await t.call(`/v1/admin/api-keys/${k.keyId}/rotate`, { method: 'POST', key: adminA.key })).status).toBe(404);
    await expectError(await t.call('/v1/admin/api-keys', { key: k.key }), 403, 'API key is deactivated', 'API_KEY_DEACTIVATED');
  });

  it('rotation issues a new key with the same settings and revokes the old one', async () => {
    const k = await createTestOrgAndKey(t.db, { orgId: adminA.orgId, name: 'rotating', permissions: ['read', 'admin'], rateLimitRpm: 77 });
    const res = await t.call(`/v1/admin/api-keys/${k.keyId}/rotate`, { method: 'POST', key: adminA.key });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.previous_id).toBe(k.keyId);
    expect(body.new_key).toMatchObject({ name: 'rotating', permissions: ['read', 'admin'], rate_limit_rpm: 77 });
    // the new key's fields are also at the top level
    const { previous_id: _p, new_key, warning, ...top } = body;
    expect(top).toEqual(new_key);
    expect(warning).toMatch(/only once/);
    expect(body.new_key.key).not.toBe(k.key);
    await expectError(await t.call('/v1/admin/api-keys', { key: k.key }), 403, 'API key is deactivated', 'API_KEY_DEACTIVATED');
    expect((await t.call('/v1/admin/api-keys', { key: body.new_key.key })).status).toBe(200);
  });

  it('an expired key cannot be rotated: 409 naming its expiry, and nothing changes', async () => {
    const k = await createTestOrgAndKey(t.db, { orgId: adminA.orgId, name: 'expiring', expiresAt: new Date(t.clock.ms + 10_000) });
    t.clock.ms += 11_000;
    try {
      const res = await t.call(`/v1/admin/api-keys/${k.keyId}/rotate`, { method: 'POST', key: adminA.key });
      const body = await expectError(res, 409, expect.stringMatching(/^API key expired at \d{4}-.*Z; /) as unknown as string, 'API_KEY_EXPIRED');
      const [row] = await t.db.select().from(apiKeys).where(eq(apiKeys.id, k.keyId));
      expect(body.details).toEqual({ expires_at: row.expiresAt!.toISOString() });
      expect(row.revokedAt).toBeNull();
      const list = (await (await t.call('/v1/admin/api-keys', { key: adminA.key })).json()).api_keys as { name: string }[];
      expect(list.filter((x) => x.name === 'expiring')).toHaveLength(1);
    } finally {
      t.clock.ms -= 11_000;
    }
  });

  it("another organization's keys are invisible: lists are org-scoped and foreign ids are 404s", async () => {
    const bKey = await createTestOrgAndKey(t.db, { orgId: adminB.orgId, name: 'B only' });
    const listA = (await (await t.call('/v1/admin/api-keys', { key: adminA.key })).json()).api_keys as { org_id: string; id: string }[];
    expect(listA.length).toBeGreaterThan(0);
    expect(listA.every((k) => k.org_id === adminA.orgId)).toBe(true);
    expect(listA.some((k) => k.id === bKey.keyId)).toBe(false);

    const unknownId = '00000000-0000-4000-8000-000000000000';
    for (const id of [bKey.keyId, unknownId]) {
      await expectError(await t.call(`/v1/admin/api-keys/${id}`, { method: 'DELETE', key: adminA.key }), 404, 'API key not found', 'NOT_FOUND');
      await expectError(await t.call(`/v1/admin/api-keys/${id}/rotate`, { method: 'POST', key: adminA.key }), 404, 'API key not found', 'NOT_FOUND');
    }
    expect((await t.call('/v1/admin/api-keys', { key: bKey.key })).status).toBe(403); // B's key still alive (no admin scope)
    const [row] = await t.db.select().from(apiKeys).where(eq(apiKeys.id, bKey.keyId));
    expect(row.revokedAt).toBeNull();

    const cross = await t.call('/v1/admin/api-keys', { method: 'POST', key: adminA.key, body: JSON.stringify({ name: 'x', org_id: adminB.orgId }) });
    await expectError(cross, 403, "org_id must be the caller's own organization", 'ORG_MISMATCH');
    // a malformed id names no key: the same 404 as an unknown one (docs/api-conventions.md)
    await expectError(await t.call('/v1/admin/api-keys/not-a-uuid', { method: 'DELETE', key: adminA.key }), 404, 'API key not found', 'NOT_FOUND');
  });
});
