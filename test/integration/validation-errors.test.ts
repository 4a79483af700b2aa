/** The one VALIDATION_ERROR shape a client can rely on: 400, `error` starting with `<field>: `, and `details.field`
 * naming that field — whoever raised it: zod (body, query, path; with `details.issues`), a body that is not JSON, or a
 * route's own check (including ones that used to omit details). */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

describe.each(dbKinds())('VALIDATION_ERROR shape (%s)', (kind) => {
  let t: TestApp;
  let admin: TestKey;

  beforeAll(async () => {
    t = await startTestApp(kind);
    admin = await createTestOrgAndKey(t.db, {
      isAdmin: true,
      rateLimitRpm: 100_000,
      permissions: ['read', 'write', 'proof:read', 'admin', 'webhook:read', 'webhook:write', 'events:read'],
    });
  });
  afterAll(async () => t?.close());

  const cases: { name: string; method: string; path: string; body?: string; field: string; zod?: boolean }[] = [
    {
      name: 'zod, body field',
      method: 'POST',
      path: '/v1/admin/api-keys',
      body: JSON.stringify({ name: 'x', rate_limit_rpm: 'many' }),
      field: 'rate_limit_rpm',
      zod: true,
    },
    {
      name: 'zod, array element',
      method: 'POST',
      path: '/v1/admin/api-keys',
      body: JSON.stringify({ name: 'x', permissions: ['root'] }),
      field: 'permissions[0]',
      zod: true,
    },
    {
      name: 'zod, nested array element',
      method: 'POST',
      path: '/v1/governance',
      body: JSON.stringify({ identity: randomUUID(), operations: [{ type: 42 }] }),
      field: 'operations[0].type',
      zod: true,
    },
    { name: 'zod, whole body of the wrong type', method: 'POST', path: '/v1/admin/api-keys', body: '[]', field: 'body', zod: true },
    { name: 'zod, query parameter', method: 'GET', path: '/v1/identities?limit=0', field: 'limit', zod: true },
    { name: 'body not JSON', method: 'POST', path: '/v1/admin/api-keys', body: '{"name":', field: 'body' },
    {
      name: 'route check (expires_at)',
      method: 'POST',
      path: '/v1/admin/api-keys',
      body: JSON.stringify({ name: 'x', expires_at: '2001-01-01T00:00:00Z' }),
      field: 'expires_at',
    },
    { name: 'route check (events starting_after)', method: 'GET', path: '/v1/events?starting_after=nope', field: 'starting_after' },
    { name: 'route check (events unknown starting_after)', method: 'GET', path: `/v1/events?starting_after=${randomUUID()}`, field: 'starting_after' },
    { name: 'route check (deliveries endpoint_id)', method: 'GET', path: '/v1/webhooks/deliveries?endpoint_id=nope', field: 'endpoint_id' },
    { name: 'route check (deliveries event_id)', method: 'GET', path: '/v1/webhooks/deliveries?event_id=nope', field: 'event_id' },
    { name: 'route check (cursor)', method: 'GET', path: '/v1/identities?cursor=garbage', field: 'cursor' },
    {
      name: 'route check (identity_id)',
      method: 'POST',
      path: '/v1/transaction',
      body: JSON.stringify({ identity_id: 'nope', intent: {} }),
      field: 'identity_id',
    },
  ];

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const res = await t.call(c.path, { method: c.method, key: admin.key, body: c.body });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details?.field, JSON.stringify(body)).toBe(c.field);
    expect(body.error.startsWith(`${c.field}: `), body.error).toBe(true);
    if (c.zod) {
      expect(Array.isArray(body.details.issues)).toBe(true);
      expect(body.details.issues.length).toBeGreaterThan(0);
    }
  });
});
