/** How a request names an identity: a value of the wrong form is a 400 VALIDATION_ERROR naming the field (it used to
 * be a 404 IDENTITY_NOT_FOUND naming "identity"); a well-formed id or ADI URL that names no identity of the caller's
 * organization (unknown, or another organization's) stays a 404 naming the field. Every route that takes one. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, insertTestIdentity, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

describe.each(dbKinds())('identity references (%s)', (kind) => {
  let t: TestApp;
  let mine: TestKey;
  let stranger: TestKey;
  let strangersIdentity: { id: string; adiUrl: string };

  beforeAll(async () => {
    t = await startTestApp(kind);
    mine = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 100_000 });
    stranger = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 100_000 });
    strangersIdentity = await insertTestIdentity(t.db, stranger.orgId, 'stranger-treasury', t.config.adiSuffix);
  });
  afterAll(async () => t?.close());

  const call = async (method: string, path: string, body?: unknown) => {
    const r = await t.call(path, { method, key: mine.key, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as { code: string; error: string; details?: { field?: string } } };
  };

  /**
   * each route with a function placing `value` where the route takes the identity, the field it names, whether ADI
   * URLs are accepted, and whether the value is a path id (a malformed path id is a 404 like an unknown one, not a 400)
   */
  const routes: { name: string; field: string; adiUrl: boolean; path?: boolean; send: (value: string) => ReturnType<typeof call> }[] = [
    { name: 'GET /v1/identity/{id}', field: 'id', adiUrl: false, path: true, send: (v) => call('GET', `/v1/identity/${encodeURIComponent(v)}`) },
    {
      name: 'PATCH /v1/identity/{id}',
      field: 'id',
      adiUrl: false,
      path: true,
      send: (v) => call('PATCH', `/v1/identity/${encodeURIComponent(v)}`, { public_key: '22'.repeat(32) }),
    },
    { name: 'DELETE /v1/identity/{id}', field: 'id', adiUrl: false, path: true, send: (v) => call('DELETE', `/v1/identity/${encodeURIComponent(v)}`) },
    {
      name: 'POST /v1/transaction identity_id',
      field: 'identity_id',
      adiUrl: false,
      send: (v) => call('POST', '/v1/transaction', { identity_id: v, intent: { adiUrl: 'acc://alice-corp-treasury.acme', legs: [] } }),
    },
    { name: 'GET /v1/portfolio?identity', field: 'identity', adiUrl: true, send: (v) => call('GET', `/v1/portfolio?identity=${encodeURIComponent(v)}`) },
    { name: 'GET /v1/pending?identity', field: 'identity', adiUrl: true, send: (v) => call('GET', `/v1/pending?identity=${encodeURIComponent(v)}`) },
    { name: 'POST /v1/governance identity', field: 'identity', adiUrl: true, send: (v) => call('POST', '/v1/governance', { identity: v, operations: [] }) },
    {
      name: 'POST /v1/sign identity',
      field: 'identity',
      adiUrl: true,
      send: (v) => call('POST', '/v1/sign', { type: 'pending_tx', target_id: 'ab'.repeat(32), identity: v }),
    },
  ];

  const notInPath = routes.filter((r) => !r.path);
  const inPath = routes.filter((r) => r.path);

  it.each(inPath.map((r) => [r.name, r] as const))(
    '%s: a malformed identity id in the path is the 404 IDENTITY_NOT_FOUND of an unknown one',
    async (_name, route) => {
      for (const bad of ['not-a-uuid', '12345', `${randomUUID()}x`, 'alice-corp-treasury.acme', strangersIdentity.adiUrl]) {
        const r = await route.send(bad);
        expect(r.status, `${bad}: ${JSON.stringify(r.body)}`).toBe(404);
        expect(r.body).toEqual({ error: 'Identity not found', code: 'IDENTITY_NOT_FOUND', details: { field: route.field } });
      }
    },
  );

  it.each(notInPath.map((r) => [r.name, r] as const))('%s: a malformed identity reference is a 400 VALIDATION_ERROR naming the field', async (_name, route) => {
    for (const bad of ['not-a-uuid', '12345', `${randomUUID()}x`, 'alice-corp-treasury.acme']) {
      const r = await route.send(bad);
      expect(r.status, `${bad}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.code).toBe('VALIDATION_ERROR');
      expect(r.body.details?.field).toBe(route.field);
      expect(r.body.error.startsWith(`${route.field}: must be an identity id (UUID)`)).toBe(true);
    }
    if (!route.adiUrl) {
      // an ADI URL is not an id where the field is documented as a UUID
      const r = await route.send(strangersIdentity.adiUrl);
      expect(r.status).toBe(400);
      expect(r.body.details?.field).toBe(route.field);
    }
  });

  it.each(routes.map((r) => [r.name, r] as const))(
    '%s: an unknown or foreign identity stays a 404 IDENTITY_NOT_FOUND naming the field',
    async (_name, route) => {
      const refs = [randomUUID(), strangersIdentity.id, ...(route.adiUrl ? [strangersIdentity.adiUrl, 'acc://nobody-here-at-all.acme'] : [])];
      for (const ref of refs) {
        const r = await route.send(ref);
        expect(r.status, `${ref}: ${JSON.stringify(r.body)}`).toBe(404);
        expect(r.body.code).toBe('IDENTITY_NOT_FOUND');
        expect(r.body.details?.field).toBe(route.field);
      }
    },
  );

  it('the owner still reaches the identity by id and, where accepted, by ADI URL', async () => {
    const r = await t.call(`/v1/identity/${strangersIdentity.id}`, { key: stranger.key });
    expect(r.status).toBe(200);
    const p = await t.call(`/v1/portfolio?identity=${encodeURIComponent(strangersIdentity.adiUrl)}`, { key: stranger.key });
    expect(p.status).toBe(200);
  });
});
