/**
 * The conventions every route shares (docs/api-conventions.md), walked over the operations /docs/json lists:
 *   - a resource id in a path that is not of an id's form names no resource: 404 with the resource's not-found
 *     answer, exactly like a well-formed id that names none (never 400), checked before the body;
 *   - before authentication: a path no route has is a 404 NOT_FOUND, a method a known path does not take a 405
 *     METHOD_NOT_ALLOWED with `Allow` (GET implies HEAD; OPTIONS is answered 204 with `Allow`).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

type Operation = { parameters?: { name: string; in: string; schema?: { format?: string } }[]; requestBody?: unknown };
type Doc = { paths: Record<string, Record<string, Operation>> };

const ALL_SCOPES = ['read', 'write', 'proof:read', 'admin', 'webhook:read', 'webhook:write', 'events:read'];

describe('routing conventions', () => {
  let t: TestApp;
  let key: TestKey;
  let doc: Doc;

  beforeAll(async () => {
    t = await startTestApp('pglite', { env: { RATE_LIMIT_IP_RPM: '100000' } });
    key = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 100_000, permissions: ALL_SCOPES });
    doc = await (await t.call('/docs/json')).json();
  });
  afterAll(async () => t?.close());

  /** every operation with a path parameter (`uuid`: only those documented as UUIDs) */
  const idOperations = (uuid = false) =>
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.parameters?.some((p) => p.in === 'path' && (!uuid || p.schema?.format === 'uuid')))
        .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
    );
  const fill = (path: string, value: string) => path.replace(/\{[^}]+\}/g, encodeURIComponent(value));
  const send = (method: string, path: string, body?: unknown) =>
    t.call(path, { method, key: key.key, body: body === undefined ? undefined : JSON.stringify(body) });

  it('every resource id in a path is documented as a UUID', () => {
    const ops = idOperations(true).map((o) => `${o.method} ${o.path}`);
    expect(ops).toEqual(
      expect.arrayContaining([
        'GET /v1/identity/{id}',
        'PATCH /v1/identity/{id}',
        'DELETE /v1/identity/{id}',
        'GET /v1/transaction/{intent_id}',
        'POST /v1/transaction/{intent_id}/signature',
        'GET /v1/proof/{id}',
        'GET /v1/proof/{id}/bundle',
        'GET /v1/proof/{id}/custody',
        'GET /v1/governance/{id}',
        'POST /v1/governance/{id}/signature',
        'POST /v1/sign/{id}/signature',
        'DELETE /v1/admin/api-keys/{key_id}',
        'POST /v1/admin/api-keys/{key_id}/rotate',
        'GET /v1/webhooks/endpoints/{id}',
        'GET /v1/webhooks/deliveries/{id}',
        'GET /v1/events/{id}',
      ]),
    );
  });

  it('a malformed id is the same 404 as an unknown one on every operation with a path parameter, whatever the body', async () => {
    const ops = idOperations();
    expect(ops.length).toBeGreaterThanOrEqual(24);
    const wrong: string[] = [];
    for (const { method, path, op } of ops) {
      const body = op.requestBody ? {} : undefined; // an invalid body: the id is checked first
      // the unknown id's answer (where no body is needed to reach the lookup)
      const id = randomUUID();
      const unknown = await send(method, fill(path, id));
      // where the answer repeats the value, compare with the value left out
      const expected = unknown.status === 404 ? JSON.stringify(await unknown.json()).replaceAll(id, '<value>') : undefined;
      for (const bad of ['not-a-uuid', '12345', `${randomUUID()}x`, 'acc://someone.acme']) {
        const res = await send(method, fill(path, bad), body);
        const got = await res.json();
        const same = expected === undefined || JSON.stringify(got).replaceAll(bad, '<value>') === expected;
        if (res.status !== 404 || !/NOT_FOUND$/.test(got.code) || !same) wrong.push(`${method} ${path} with ${bad}: ${res.status} ${JSON.stringify(got)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
  const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
  /** what Allow lists for a documented path */
  const allowOf = (documented: string[]) => {
    const m = new Set([...documented, 'OPTIONS', ...(documented.includes('GET') ? ['HEAD'] : [])]);
    return ORDER.filter((x) => m.has(x)).join(', ');
  };

  it('a method a documented path does not take is a 405 with Allow, with or without a key; OPTIONS is a 204 with Allow', async () => {
    const wrong: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      const documented = Object.keys(ops).map((m) => m.toUpperCase());
      const concrete = fill(path, randomUUID());
      const allow = allowOf(documented);
      for (const method of METHODS.filter((m) => !documented.includes(m))) {
        for (const k of [undefined, key.key, 'ck_live_not-a-key']) {
          const res = await t.call(concrete, { method, key: k, body: method === 'GET' ? undefined : '{}' });
          const body = await res.json();
          const ok =
            res.status === 405 &&
            res.headers.get('allow') === allow &&
            body.code === 'METHOD_NOT_ALLOWED' &&
            body.error === `Method ${method} not allowed on ${concrete}; allowed: ${allow}` &&
            res.headers.get('x-ratelimit-limit') !== null;
          if (!ok) wrong.push(`${method} ${concrete} (key ${k ? 'sent' : 'none'}): ${res.status} allow=${res.headers.get('allow')} ${JSON.stringify(body)}`);
        }
      }
      const options = await t.call(concrete, { method: 'OPTIONS' });
      if (options.status !== 204 || options.headers.get('allow') !== allow)
        wrong.push(`OPTIONS ${concrete}: ${options.status} allow=${options.headers.get('allow')}`);
    }
    expect(wrong).toEqual([]);
  });

  it('path parameters match any value: a wrong method on /v1/transaction/abc is a 405, not a 404', async () => {
    const res = await t.call('/v1/transaction/abc', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    const identity = await t.call(`/v1/identity/${randomUUID()}`, { method: 'PUT', body: '{}' });
    expect(identity.status).toBe(405);
    expect(identity.headers.get('allow')).toBe('GET, HEAD, PATCH, DELETE, OPTIONS');
  });

  it('a path no route has is a 404 NOT_FOUND with or without a key, for any method; known paths still need a key', async () => {
    for (const path of ['/v1/nope', '/v1/transaction/abc/nope', '/v1/health/', '/v2/health', '/']) {
      for (const method of ['GET', 'POST', 'DELETE', 'OPTIONS']) {
        for (const k of [undefined, key.key, 'ck_live_not-a-key']) {
          const res = await t.call(path, { method, key: k, body: method === 'POST' ? '{}' : undefined });
          expect(res.status, `${method} ${path}`).toBe(404);
          expect(await res.json()).toEqual({ error: `No route for ${method} ${path}`, code: 'NOT_FOUND' });
          expect(res.headers.get('x-ratelimit-remaining'), `${method} ${path}`).not.toBeNull();
        }
      }
    }
    const head = await t.call('/v1/nope', { method: 'HEAD' });
    expect(head.status).toBe(404);
    // a served route is unchanged: it needs a key, HEAD included
    expect((await t.call('/v1/identities')).status).toBe(401);
    expect((await t.call('/v1/identities', { method: 'HEAD' })).status).toBe(401);
    expect((await t.call('/v1/identities', { method: 'HEAD', key: key.key })).status).toBe(200);
  });
});
