/**
 * The gateway-wide cap on self-service sign-ups (SIGNUP_MAX_PER_HOUR): each sign-up carries the sandbox grant, so
 * the per-IP rate limit alone lets someone with many addresses create organizations without bound. Over the cap a
 * sign-up is 429 SIGNUP_LIMIT_REACHED and writes nothing; the cap holds under concurrent sign-ups; 0 turns sign-up
 * off; the operator's organization does not count.
 */
import { count, eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { bootstrapAdminKey } from '../../src/db/api-keys.js';
import { apiKeys, organizations } from '../../src/db/schema.js';
import { dbKinds } from '../support/env.js';
import { startTestApp, type TestApp } from '../support/platform.js';

describe.each(dbKinds())('gateway-wide sign-up cap (%s)', (kind) => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });
  // TRUST_PROXY: every sign-up comes from its own client address, so the per-IP limit never applies
  const start = async (maxPerHour: number) => {
    const t = await startTestApp(kind, { env: { SIGNUP_MAX_PER_HOUR: String(maxPerHour), TRUST_PROXY: 'true' } });
    apps.push(t);
    return t;
  };
  let ip = 0;
  const signup = (t: TestApp, name: string) =>
    t.call('/portal/signup', {
      method: 'POST',
      headers: { 'X-Forwarded-For': `198.51.100.${++ip % 250}` },
      body: JSON.stringify({ organization_name: name }),
    });
  const orgCount = async (t: TestApp, selfServiceOnly = false) =>
    (
      await t.db
        .select({ n: count() })
        .from(organizations)
        .where(selfServiceOnly ? eq(organizations.selfService, true) : undefined)
    )[0].n;
  const keyCount = async (t: TestApp) => (await t.db.select({ n: count() }).from(apiKeys))[0].n;

  it('with a cap of 2 the third sign-up in the hour is refused (429 SIGNUP_LIMIT_REACHED, Retry-After) and creates nothing', async () => {
    const t = await start(2);
    // the operator's organization (bootstrap) is not a sign-up: it neither counts nor is limited
    expect(await bootstrapAdminKey(t.db)).toBeDefined();

    const first = await signup(t, 'first farm');
    const second = await signup(t, 'second farm');
    expect([first.status, second.status]).toEqual([201, 201]);
    const firstId = ((await first.json()) as { organization: { id: string } }).organization.id;

    const third = await signup(t, 'third farm');
    expect(third.status).toBe(429);
    const body = (await third.json()) as { error: string; code: string; details: Record<string, number> };
    expect(body.code).toBe('SIGNUP_LIMIT_REACHED');
    expect(body.error).toMatch(/^Sign-up limit reached: this gateway accepts at most 2 new organizations per hour/);
    expect(body.details).toMatchObject({ limit: 2, window_seconds: 3600 });
    const retryAfter = Number(third.headers.get('Retry-After'));
    expect(retryAfter).toBeGreaterThan(3500); // the first sign-up leaves the window in about an hour
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(body.details.retry_after_seconds).toBe(retryAfter);
    expect(third.headers.get('X-RateLimit-Limit')).not.toBeNull(); // the per-IP headers are still sent

    // nothing of the third: operator + 2 organizations, their 3 keys
    expect(await orgCount(t)).toBe(3);
    expect(await orgCount(t, true)).toBe(2);
    expect(await keyCount(t)).toBe(3);
    const names = (await t.db.select({ name: organizations.name }).from(organizations)).map((r) => r.name);
    expect(names).not.toContain('third farm');

    // the window rolls: 59 minutes later the first sign-up leaves it in about a minute ...
    await t.db.execute(sql`update organizations set created_at = created_at - interval '59 minutes' where id = ${firstId}`);
    const stillRefused = await signup(t, 'third farm');
    expect(stillRefused.status).toBe(429);
    const wait = Number(stillRefused.headers.get('Retry-After'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    // ... and once it has, one more sign-up is accepted (and then the cap holds again)
    await t.db.execute(sql`update organizations set created_at = created_at - interval '61 seconds' where id = ${firstId}`);
    expect((await signup(t, 'third farm')).status).toBe(201);
    expect((await signup(t, 'fourth farm')).status).toBe(429);
    expect(await orgCount(t, true)).toBe(3);
  });

  it('concurrent sign-ups cannot overshoot the cap: 6 at once with a cap of 3 create exactly 3', async () => {
    const t = await start(3);
    const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => signup(t, `rush ${i}`)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429]);
    for (const r of responses.filter((x) => x.status === 429)) {
      expect(((await r.json()) as { code: string }).code).toBe('SIGNUP_LIMIT_REACHED');
    }
    expect(await orgCount(t)).toBe(3);
    expect(await keyCount(t)).toBe(3);
  });

  it('a cap of 0 turns self-service sign-up off (403 SIGNUP_DISABLED, nothing created; the page says so)', async () => {
    const t = await start(0);
    const res = await signup(t, 'closed shop');
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: 'Self-service sign-up is turned off on this gateway; ask its operator for an organization',
      code: 'SIGNUP_DISABLED',
    });
    expect(await orgCount(t)).toBe(0);
    expect(await keyCount(t)).toBe(0);

    const page = await (await t.call('/portal')).text();
    expect(page).toMatch(/<p id="closed" class="warn">Self-service sign-up is turned off/);
    expect(page).toMatch(/<form id="signup" novalidate hidden>/);
  });

  it('the OpenAPI description of POST /portal/signup lists both refusals', async () => {
    const t = apps[0] ?? (await start(2));
    const doc = (await (await t.call('/docs/json')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>>;
    };
    const responses = doc.paths['/portal/signup'].post.responses;
    expect(responses['429'].description).toMatch(/SIGNUP_LIMIT_REACHED/);
    expect(responses['429'].headers).toHaveProperty('Retry-After');
    expect(responses['403'].description).toMatch(/SIGNUP_DISABLED/);
  });
});
