/** Abuse limits of the API platform: sign-ups count against the client IP whatever key they carry, a key cannot mint
 * a key with a higher rate limit than its own (test/security/key-bounds.test.ts: scopes and expiry too), and an organization holds at most MAX_API_KEYS_PER_ORG active keys. */
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIp } from '../../src/api/middleware/auth.js';
import type { AppEnv } from '../../src/api/deps.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, startTestApp, type TestApp } from '../support/platform.js';

const MINUTE = 60_000;
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE + 20_000;

describe.each(dbKinds())('platform abuse limits (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { clockMs: T0, env: { TRUST_PROXY: 'true', RATE_LIMIT_IP_RPM: '3', MAX_API_KEYS_PER_ORG: '3' } });
  });
  afterAll(async () => t?.close());

  const signup = (n: number, ip: string, key?: string) =>
    t.call('/portal/signup', { method: 'POST', key, headers: { 'X-Forwarded-For': ip }, body: JSON.stringify({ organization_name: `farm ${n}` }) });

  it('sign-ups count against the client IP even when they carry a valid key with a high limit', async () => {
    const fast = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 100_000 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await signup(i, '203.0.113.7', fast.key);
      statuses.push(r.status);
      expect(r.headers.get('x-ratelimit-limit')).toBe('3');
    }
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    // the key's own bucket was not used: it still has its whole limit on an authenticated route
    const own = await t.call('/v1/admin/api-keys', { key: fast.key });
    expect(own.status).toBe(200);
    expect(own.headers.get('x-ratelimit-remaining')).toBe('99999');
  });

  it('behind a proxy the client IP is the rightmost X-Forwarded-For entry: client-written entries cannot pick the bucket', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await signup(100 + i, `192.0.2.${i}, 198.51.100.99`)).status);
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    expect((await signup(200, '198.51.100.99, 198.51.100.100')).status).toBe(201); // another client behind the proxy
  });

  it('TRUST_PROXY_HOPS picks the entry that many from the right; without TRUST_PROXY the header is ignored', async () => {
    const ipOf = async (trust: boolean, hops: number, xff?: string) => {
      const app = new Hono<AppEnv>().get('/', (c) => c.text(clientIp(c, trust, hops)));
      return (await app.request('/', { headers: xff === undefined ? {} : { 'X-Forwarded-For': xff } })).text();
    };
    expect(await ipOf(true, 1, 'spoofed, 10.0.0.1, 203.0.113.9')).toBe('203.0.113.9');
    expect(await ipOf(true, 2, 'spoofed, 10.0.0.1, 203.0.113.9')).toBe('10.0.0.1');
    expect(await ipOf(true, 5, '10.0.0.1 , 203.0.113.9')).toBe('10.0.0.1');
    expect(await ipOf(true, 1, ' , ')).toBe('unknown');
    expect(await ipOf(false, 1, '10.0.0.1')).toBe('unknown');
  });

  it("a minted key's rate_limit_rpm may not exceed the creating key's own (403 naming rate_limit_rpm); the default is capped too", async () => {
    const owner = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 60 });
    const over = await t.call('/v1/admin/api-keys', { method: 'POST', key: owner.key, body: JSON.stringify({ name: 'fast', rate_limit_rpm: 100_000 }) });
    expect(over.status).toBe(403);
    expect(await over.json()).toMatchObject({
      code: 'API_KEY_EXCEEDS_CALLER',
      error: "rate_limit_rpm: 100000 exceeds the calling key's own limit (60)",
      details: { bound: 'rate_limit_rpm', requested: 100_000, max: 60 },
    });
    const equal = await t.call('/v1/admin/api-keys', { method: 'POST', key: owner.key, body: JSON.stringify({ name: 'same', rate_limit_rpm: 60 }) });
    expect(equal.status).toBe(201);

    const slow = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 10 });
    const dflt = await t.call('/v1/admin/api-keys', { method: 'POST', key: slow.key, body: JSON.stringify({ name: 'default' }) });
    expect(dflt.status).toBe(201);
    expect((await dflt.json()).api_key.rate_limit_rpm).toBe(10);
  });

  it('an organization holds at most MAX_API_KEYS_PER_ORG active keys; revoking one frees a slot', async () => {
    const owner = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 1000 }); // key 1 of 3
    const mk = (name: string) => t.call('/v1/admin/api-keys', { method: 'POST', key: owner.key, body: JSON.stringify({ name }) });
    const ids: string[] = [];
    for (const n of ['k2', 'k3']) {
      const r = await mk(n);
      expect(r.status).toBe(201);
      ids.push((await r.json()).api_key.id);
    }
    const refused = await mk('k4');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'API_KEY_LIMIT_REACHED', details: { limit: 3, active: 3 } });
    // concurrent creations cannot overshoot either
    expect((await t.call(`/v1/admin/api-keys/${ids[0]}`, { method: 'DELETE', key: owner.key })).status).toBe(204);
    const burst = await Promise.all(['a', 'b', 'c', 'd'].map(mk));
    expect(burst.map((r) => r.status).sort()).toEqual([201, 403, 403, 403]);
    const list = (await (await t.call('/v1/admin/api-keys', { key: owner.key })).json()).api_keys as { is_active: boolean }[];
    expect(list.filter((k) => k.is_active)).toHaveLength(3);
  });
});
