/**
 * The routes a client checks itself with: GET /v1/me (the calling key, never its secret), GET /v1/scopes (every scope
 * with the operations the route table says it opens), GET /v1/errors (the error catalogue). GET /v1/health/ready:
 * health-ready.test.ts.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/db/api-keys.js';
import { ERROR_CATALOGUE } from '../../src/services/error-catalogue.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('GET /v1/me, /v1/scopes, /v1/errors', () => {
  let t: TestApp;
  let admin: TestKey;
  beforeAll(async () => {
    t = await startTestApp('pglite');
    admin = await createTestOrgAndKey(t.db, { orgName: 'Acme', isAdmin: true, rateLimitRpm: 1000 });
  });
  afterAll(async () => t?.close());

  it("/v1/me: the calling key's settings and its organization, never the secret, by either header", async () => {
    const expiresAt = new Date(t.clock.ms + 86_400_000);
    const k = await createTestOrgAndKey(t.db, { orgId: admin.orgId, name: 'ci', permissions: ['read', 'proof:read'], rateLimitRpm: 30, expiresAt });
    const res = await t.call('/v1/me', { key: k.key });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(k.key);
    expect(text).not.toContain(createHash('sha256').update(k.key).digest('hex'));
    const me = JSON.parse(text);
    expect(me).toMatchObject({
      id: k.keyId,
      name: 'ci',
      org_id: admin.orgId,
      permissions: ['read', 'proof:read'],
      is_admin: false,
      rate_limit_rpm: 30,
      expires_at: expiresAt.toISOString(),
      organization: { id: admin.orgId, name: 'Acme' },
    });
    expect(k.key.startsWith(me.prefix)).toBe(true);
    expect(me.prefix.length).toBeLessThan(k.key.length);
    for (const n of ['identity_quota', 'credit_grant', 'credits_remaining']) expect(Number.isInteger(me.organization[n]), n).toBe(true);
    const bearer = await t.app.request('/v1/me', { headers: { Authorization: `Bearer ${k.key}` } });
    expect(bearer.status).toBe(200);
    expect((await bearer.json()).id).toBe(k.keyId);
    // another key of the organization sees itself
    expect((await (await t.call('/v1/me', { key: admin.key })).json()).id).toBe(admin.keyId);
  });

  it('/v1/me: any scope will do; no key is a 401', async () => {
    const narrow = await createTestOrgAndKey(t.db, { orgId: admin.orgId, permissions: ['events:read'] });
    expect((await t.call('/v1/me', { key: narrow.key })).status).toBe(200);
    const res = await t.call('/v1/me');
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe('MISSING_API_KEY');
  });

  it('/v1/scopes: public; every scope with exactly the operations whose documented rule names it', async () => {
    const res = await t.call('/v1/scopes');
    expect(res.status).toBe(200);
    const { scopes } = (await res.json()) as { scopes: { name: string; description: string; operations: string[] }[] };
    expect(scopes.map((s) => s.name)).toEqual([...SCOPES]);
    // the same rules, read from the OpenAPI document
    const doc = (await (await t.call('/docs/json')).json()) as Json;
    const want = new Map<string, string[]>(SCOPES.map((s) => [s, []]));
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) {
        for (const s of [...(op['x-required-scopes'] ?? []), ...(op['x-accepted-scopes'] ?? [])]) want.get(s)!.push(`${method.toUpperCase()} ${path}`);
      }
    }
    for (const s of scopes) {
      expect(s.description.length, s.name).toBeGreaterThan(10);
      expect([...s.operations].sort(), s.name).toEqual([...want.get(s.name)!].sort());
      expect(s.operations.length, s.name).toBeGreaterThan(0);
    }
    const of = (name: string) => scopes.find((s) => s.name === name)!.operations;
    expect(of('admin')).toContain('POST /v1/admin/api-keys');
    expect(of('proof:read')).toContain('GET /v1/proof/{id}');
    expect(of('events:read')).not.toContain('POST /v1/admin/api-keys');
    for (const s of SCOPES) expect(of(s)).toContain('GET /v1/me');
    // public operations need no scope and are under none
    expect(scopes.flatMap((s) => s.operations)).not.toContain('GET /v1/scopes');
  });

  it('/v1/errors: public; the catalogue, including the codes this API just answered with', async () => {
    const res = await t.call('/v1/errors');
    expect(res.status).toBe(200);
    const { errors } = (await res.json()) as { errors: { code: string; status: number; statuses: number[] }[] };
    expect(errors).toEqual(ERROR_CATALOGUE);
    const answered = [
      await t.call('/v1/me'),
      await t.call('/v1/me', { key: 'ck_live_short' }),
      await t.call('/v1/me', { headers: { Authorization: 'Basic dTpw' } }),
      await t.call('/v1/nope', { key: admin.key }),
      await t.call('/v1/admin/api-keys', { method: 'POST', key: admin.key, body: '{}' }),
      await t.call(`/v1/identity/${crypto.randomUUID()}`, { key: admin.key }),
    ];
    for (const r of answered) {
      const { code } = await r.json();
      const entry = errors.find((e) => e.code === code);
      expect(entry, code).toBeDefined();
      expect(entry!.statuses, code).toContain(r.status);
    }
  });

  it('the catalogues and the readiness probe need no key, and count against the client address', async () => {
    for (const path of ['/v1/scopes', '/v1/errors', '/v1/health/ready']) {
      const res = await t.call(path);
      expect([200, 503], path).toContain(res.status);
      expect(res.headers.get('x-ratelimit-limit'), path).toBe(String(t.config.platform.ipRpm));
      // a key does not change the answer nor the limit it is counted against
      const withKey = await t.call(path, { key: admin.key });
      expect(withKey.headers.get('x-ratelimit-limit'), path).toBe(String(t.config.platform.ipRpm));
    }
  });
});
