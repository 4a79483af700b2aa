/**
 * A key creates or rotates only keys within its own bounds: scopes it holds (admin does not imply the others, nor the
 * operator scope), a rate limit no higher than its own, an expiry no later than its own. Beyond any of them:
 * 403 API_KEY_EXCEEDS_CALLER naming the bound, and nothing is created or revoked. /metrics is gateway-wide, so it
 * needs the operator scope, which only the bootstrap key holds: a self-service organization's owner key is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_PERMISSIONS } from '../../src/db/api-keys.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, startTestApp, type TestApp } from '../support/platform.js';

const T0 = Date.now();

describe.each(dbKinds())('API key bounds (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { clockMs: T0 });
  });
  afterAll(async () => t?.close());

  const create = (key: string, body: Record<string, unknown>) => t.call('/v1/admin/api-keys', { method: 'POST', key, body: JSON.stringify(body) });
  const rotate = (key: string, id: string) => t.call(`/v1/admin/api-keys/${id}/rotate`, { method: 'POST', key });
  const ids = async (key: string) =>
    ((await (await t.call('/v1/admin/api-keys', { key })).json()).api_keys as { id: string; is_active: boolean }[]).filter((k) => k.is_active).map((k) => k.id);

  it('an admin-only key cannot mint scopes it does not hold (403 naming scopes); within its scopes it can', async () => {
    const admin = await createTestOrgAndKey(t.db, { permissions: ['admin'], rateLimitRpm: 10 });
    const wide = await create(admin.key, { name: 'wide', permissions: ['read', 'write', 'proof:read', 'admin'] });
    expect(wide.status).toBe(403);
    expect(await wide.json()).toMatchObject({
      code: 'API_KEY_EXCEEDS_CALLER',
      details: { bound: 'scopes', not_held: ['read', 'write', 'proof:read'] },
    });
    // the default permissions (read, write, proof:read) are beyond it too
    expect((await create(admin.key, { name: 'default' })).status).toBe(403);
    // the operator scope is beyond any tenant key
    const op = await create(admin.key, { name: 'op', permissions: ['operator'] });
    expect(op.status).toBe(403);
    expect((await op.json()).details).toMatchObject({ bound: 'scopes', not_held: ['operator'] });
    // admin passes the webhook and event any-of rules, so it may grant those narrow scopes
    const narrow = await create(admin.key, { name: 'narrow', permissions: ['admin', 'webhook:read', 'events:read'] });
    expect(narrow.status).toBe(201);
    expect((await ids(admin.key)).length).toBe(2);
  });

  it('a key at 10 rpm cannot mint, nor rotate into being, a 60-rpm key (403 naming rate_limit_rpm)', async () => {
    const slow = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 10 });
    const fast = await createTestOrgAndKey(t.db, { orgId: slow.orgId, isAdmin: true, rateLimitRpm: 60 });
    const over = await create(slow.key, { name: 'fast', rate_limit_rpm: 60 });
    expect(over.status).toBe(403);
    expect(await over.json()).toMatchObject({ code: 'API_KEY_EXCEEDS_CALLER', details: { bound: 'rate_limit_rpm', requested: 60, max: 10 } });
    const rotated = await rotate(slow.key, fast.keyId);
    expect(rotated.status).toBe(403);
    expect(await rotated.json()).toMatchObject({ code: 'API_KEY_EXCEEDS_CALLER', details: { bound: 'rate_limit_rpm', requested: 60, max: 10 } });
    // nothing changed: the 60-rpm key still works and no replacement exists
    expect((await ids(fast.key)).sort()).toEqual([slow.keyId, fast.keyId].sort());
    // in bounds: the 60-rpm key rotates the 10-rpm one, and the slow key mints at its own limit
    const ok = await rotate(fast.key, slow.keyId);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ rate_limit_rpm: 10, previous_id: slow.keyId });
    const same = await create(fast.key, { name: 'same', rate_limit_rpm: 60 });
    expect(same.status).toBe(201);
  });

  it('a key that expires cannot mint a key that never expires or outlives it (403 naming expires_at)', async () => {
    const expiry = new Date(T0 + 8_000);
    const brief = await createTestOrgAndKey(t.db, { isAdmin: true, expiresAt: expiry });
    const forever = await create(brief.key, { name: 'forever' });
    expect(forever.status).toBe(403);
    expect(await forever.json()).toMatchObject({
      code: 'API_KEY_EXCEEDS_CALLER',
      details: { bound: 'expires_at', requested: null, max: expiry.toISOString() },
    });
    const later = await create(brief.key, { name: 'later', expires_at: new Date(T0 + 60_000).toISOString() });
    expect(later.status).toBe(403);
    expect((await later.json()).details.bound).toBe('expires_at');
    // a non-expiring key of the same organization cannot be rotated by it either
    const lasting = await createTestOrgAndKey(t.db, { orgId: brief.orgId, isAdmin: true });
    const rot = await rotate(brief.key, lasting.keyId);
    expect(rot.status).toBe(403);
    expect((await rot.json()).details.bound).toBe('expires_at');
    // in bounds: an expiry no later than its own
    const within = await create(brief.key, { name: 'within', expires_at: expiry.toISOString() });
    expect(within.status).toBe(201);
    expect((await within.json()).expires_at).toBe(expiry.toISOString());
    // and the non-expiring key may rotate the brief one (keeps its expiry)
    const rotBrief = await rotate(lasting.key, brief.keyId);
    expect(rotBrief.status).toBe(200);
    expect((await rotBrief.json()).expires_at).toBe(expiry.toISOString());
  });

  it('/metrics needs the operator scope: a self-service owner key is refused, the bootstrap key reads it', async () => {
    const signup = await t.call('/portal/signup', { method: 'POST', body: JSON.stringify({ organization_name: 'tenant' }) });
    expect(signup.status).toBe(201);
    const signed = await signup.json();
    const ownerKey: string = signed.api_key?.key ?? signed.key;
    expect(ownerKey).toMatch(/^ck_live_/);
    const tenant = await t.call('/metrics', { key: ownerKey });
    expect(tenant.status).toBe(403);
    expect(await tenant.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE', error: 'API key lacks the required scope: operator' });
    // the tenant's admin key cannot grant itself the scope either
    expect((await create(ownerKey, { name: 'op', permissions: ['operator'] })).status).toBe(403);

    // a key with the bootstrap key's permissions (test/integration/bootstrap-key.test.ts: it is made with them)
    const operator = await createTestOrgAndKey(t.db, { permissions: OPERATOR_PERMISSIONS });
    const scraped = await t.call('/metrics', { key: operator.key });
    expect(scraped.status).toBe(200);
    // and the operator key may mint another operator key (within its scopes)
    expect((await create(operator.key, { name: 'scraper', permissions: ['operator'] })).status).toBe(201);
  });
});
