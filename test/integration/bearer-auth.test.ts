/** `Authorization: Bearer <key>` authenticates exactly like X-API-Key: same keys, same answers, same limits and scopes. */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presentedKey } from '../../src/api/middleware/auth.js';
import { apiKeys } from '../../src/db/schema.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

const MINUTE = 60_000;
// the middle of a window, so the rate-limit test never straddles a window boundary
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE + 20_000;

describe('presentedKey: which key a request presents', () => {
  const k = `ck_live_${'a'.repeat(43)}`;
  const other = `ck_live_${'b'.repeat(43)}`;
  it.each([
    ['X-API-Key only', k, undefined, { kind: 'key', key: k }],
    ['Bearer only', undefined, `Bearer ${k}`, { kind: 'key', key: k }],
    ['the scheme in any case', undefined, `bEaReR   ${k}`, { kind: 'key', key: k }],
    ['both, the same key', k, `Bearer ${k}`, { kind: 'key', key: k }],
    ['both, different keys', k, `Bearer ${other}`, { kind: 'conflict' }],
    ['neither', undefined, undefined, { kind: 'missing' }],
    ['an empty X-API-Key', '', undefined, { kind: 'missing' }],
    ['Bearer without a token', undefined, 'Bearer', { kind: 'missing' }],
    ['another scheme alone', undefined, `Basic ${Buffer.from('u:p').toString('base64')}`, { kind: 'scheme' }],
    ['a bare token without a scheme', undefined, k, { kind: 'scheme' }],
    ['another scheme beside X-API-Key (a proxy credential)', k, 'Basic dTpw', { kind: 'key', key: k }],
  ] as const)('%s', (_what, xApiKey, authorization, want) => {
    expect(presentedKey(xApiKey, authorization)).toEqual(want);
  });
});

describe('Authorization: Bearer against the API', () => {
  let t: TestApp;
  let admin: TestKey;
  beforeAll(async () => {
    t = await startTestApp('pglite', { clockMs: T0 });
    admin = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 1000 });
  });
  afterAll(async () => t?.close());

  const get = (path: string, headers: Record<string, string>) => t.app.request(path, { headers });
  const expectError = async (res: Response, status: number, code: string, error?: string) => {
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(status);
    expect(body.code).toBe(code);
    if (error) expect(body.error).toBe(error);
    expect(res.headers.get('x-ratelimit-limit')).toBeTruthy();
  };

  it('a Bearer key is the same caller as the key in X-API-Key', async () => {
    const viaHeader = await get('/v1/admin/api-keys', { 'X-API-Key': admin.key });
    const viaBearer = await get('/v1/admin/api-keys', { Authorization: `Bearer ${admin.key}` });
    expect(viaHeader.status).toBe(200);
    expect(viaBearer.status).toBe(200);
    expect((await viaBearer.json()).api_keys).toEqual((await viaHeader.json()).api_keys);
    expect((await get('/v1/admin/api-keys', { Authorization: `bearer ${admin.key}` })).status).toBe(200);
    expect((await get('/v1/admin/api-keys', { 'X-API-Key': admin.key, Authorization: `Bearer ${admin.key}` })).status).toBe(200);
  });

  it('two different keys are refused, whichever is valid', async () => {
    const other = await createTestOrgAndKey(t.db, { orgId: admin.orgId, isAdmin: true });
    const error = 'X-API-Key and Authorization: Bearer carry different API keys; send one key';
    await expectError(await get('/v1/admin/api-keys', { 'X-API-Key': admin.key, Authorization: `Bearer ${other.key}` }), 401, 'CONFLICTING_API_KEYS', error);
    await expectError(
      await get('/v1/admin/api-keys', { 'X-API-Key': admin.key, Authorization: `Bearer ck_live_${'z'.repeat(43)}` }),
      401,
      'CONFLICTING_API_KEYS',
    );
  });

  it('another scheme is a 401 that says how to send the key; beside X-API-Key it is ignored', async () => {
    const error = 'Unsupported Authorization scheme: send the API key as Authorization: Bearer <key> or X-API-Key';
    await expectError(await get('/v1/admin/api-keys', { Authorization: 'Basic dTpw' }), 401, 'UNSUPPORTED_AUTH_SCHEME', error);
    await expectError(await get('/v1/admin/api-keys', { Authorization: admin.key }), 401, 'UNSUPPORTED_AUTH_SCHEME');
    await expectError(await get('/v1/admin/api-keys', { Authorization: `Token ${admin.key}` }), 401, 'UNSUPPORTED_AUTH_SCHEME');
    expect((await get('/v1/admin/api-keys', { 'X-API-Key': admin.key, Authorization: 'Basic dTpw' })).status).toBe(200);
  });

  it('a Bearer key gets the same 401/403 answers as X-API-Key', async () => {
    await expectError(await get('/v1/admin/api-keys', { Authorization: 'Bearer ' }), 401, 'MISSING_API_KEY', 'Missing X-API-Key header');
    await expectError(await get('/v1/admin/api-keys', { Authorization: 'Bearer ck_live_short' }), 401, 'INVALID_API_KEY_FORMAT', 'Invalid API key format');
    await expectError(await get('/v1/admin/api-keys', { Authorization: `Bearer ck_live_${'a'.repeat(43)}` }), 401, 'INVALID_API_KEY', 'Invalid API key');
    const revoked = await createTestOrgAndKey(t.db, { orgId: admin.orgId });
    await t.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, revoked.keyId));
    await expectError(await get('/v1/admin/api-keys', { Authorization: `Bearer ${revoked.key}` }), 403, 'API_KEY_DEACTIVATED', 'API key is deactivated');
  });

  it("a Bearer key is held to the key's scopes", async () => {
    const readOnly = await createTestOrgAndKey(t.db, { orgId: admin.orgId, permissions: ['read'] });
    const res = await get('/v1/admin/api-keys', { Authorization: `Bearer ${readOnly.key}` });
    await expectError(res, 403, 'INSUFFICIENT_SCOPE', 'API key lacks the required scope: admin');
  });

  it("Bearer and X-API-Key requests count against the key's one limit", async () => {
    const k = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 4 });
    const headers: Record<string, string>[] = [
      { 'X-API-Key': k.key },
      { Authorization: `Bearer ${k.key}` },
      { 'X-API-Key': k.key },
      { Authorization: `Bearer ${k.key}` },
    ];
    for (const [i, h] of headers.entries()) {
      const res = await get('/v1/admin/api-keys', h);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('4');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(3 - i));
    }
    const over = await get('/v1/admin/api-keys', { Authorization: `Bearer ${k.key}` });
    expect(over.status).toBe(429);
    expect(await over.json()).toEqual({ error: 'Rate limit exceeded', code: 'RATE_LIMIT_EXCEEDED' });
    expect((await get('/v1/admin/api-keys', { 'X-API-Key': k.key })).status).toBe(429);
  });
});
