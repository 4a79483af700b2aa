/**
 * Hostile text: a NUL (U+0000) or a lone UTF-16 surrogate in any text input is a 400 VALIDATION_ERROR naming the
 * field (never a 5xx from the database refusing it). Driven by the OpenAPI document, so a new route is covered the
 * day it is added: every string query parameter and every top-level string body property of every operation gets
 * both values; then the inputs that answered 500 before, one by one, and a PATCH that changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Shaped like an ADI URL so that inputs checking a form (`identity`: a UUID or `acc://…`) let it through to their
 * lookup. On the wire: JSON.stringify escapes a lone surrogate as `\ud800`, which parses back into one.
 */
const HOSTILE = [
  { name: 'NUL', body: 'acc://a\u0000b.acme', query: 'acc://a%00b.acme' },
  { name: 'lone surrogate', body: 'acc://a\ud800b.acme', query: 'acc://a%ED%A0%80b.acme' },
];

interface Target {
  method: string;
  /** with its path parameters filled */
  path: string;
  in: 'query' | 'body';
  name: string;
}

function resolve(doc: Json, schema: Json): Json {
  if (schema?.$ref) return resolve(doc, doc.components.schemas[schema.$ref.split('/').pop()]);
  return schema ?? {};
}

/** the string properties at the top of a body schema, through allOf/anyOf/oneOf */
function stringProperties(doc: Json, schema: Json, out = new Set<string>()): Set<string> {
  const s = resolve(doc, schema);
  for (const part of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) stringProperties(doc, part, out);
  for (const [name, prop] of Object.entries<Json>(s.properties ?? {})) {
    const p = resolve(doc, prop);
    const types = [p.type, ...(p.anyOf ?? []).map((x: Json) => resolve(doc, x).type), ...(p.oneOf ?? []).map((x: Json) => resolve(doc, x).type)];
    if (types.includes('string')) out.add(name);
  }
  return out;
}

async function targets(t: TestApp): Promise<Target[]> {
  const doc = (await (await t.call('/docs/json')).json()) as Json;
  const out: Target[] = [];
  for (const [template, item] of Object.entries<Json>(doc.paths)) {
    const path = template.replace(/\{[^}]+\}/g, () => randomUUID());
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      for (const p of op.parameters ?? []) {
        if (p.in === 'query' && resolve(doc, p.schema).type === 'string') out.push({ method: method.toUpperCase(), path, in: 'query', name: p.name });
      }
      const schema = op.requestBody?.content?.['application/json']?.schema;
      if (schema) for (const name of stringProperties(doc, schema)) out.push({ method: method.toUpperCase(), path, in: 'body', name });
    }
  }
  return out;
}

describe('hostile text in every input (pglite)', () => {
  let t: TestApp;
  let admin: TestKey;

  beforeAll(async () => {
    // a loopback receiver, so registering an endpoint needs no DNS
    t = await startTestApp('pglite', { env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
    admin = await createTestOrgAndKey(t.db, {
      isAdmin: true,
      rateLimitRpm: 1_000_000,
      permissions: ['read', 'write', 'proof:read', 'admin', 'webhook:read', 'webhook:write', 'events:read'],
    });
  });
  afterAll(async () => t?.close());

  async function expectRefused(res: Response, field: string) {
    const body = (await res.json()) as Json;
    expect({ status: res.status, code: body.code, field: body.details?.field }).toEqual({ status: 400, code: 'VALIDATION_ERROR', field });
    expect(body.error.startsWith(`${field}: `)).toBe(true);
  }

  it('every documented string query parameter and body property: 400 naming it, never a 5xx', async () => {
    const all = await targets(t);
    // the document has text inputs of both kinds (a broken walk must not pass on nothing)
    expect(all.filter((x) => x.in === 'query').length).toBeGreaterThan(10);
    expect(all.filter((x) => x.in === 'body').length).toBeGreaterThan(10);
    const wrong: string[] = [];
    for (const target of all) {
      for (const v of HOSTILE) {
        const label = `${target.method} ${target.path} ${target.in} ${target.name} (${v.name})`;
        const res =
          target.in === 'query'
            ? await t.call(`${target.path}?${encodeURIComponent(target.name)}=${v.query}`, { method: target.method, key: admin.key })
            : await t.call(target.path, { method: target.method, key: admin.key, body: JSON.stringify({ [target.name]: v.body }) });
        const body = (await res.json().catch(() => ({}))) as Json;
        if (res.status >= 500) wrong.push(`${label}: ${res.status} ${JSON.stringify(body)}`);
        // a lone surrogate cannot be written in a URL (it has no UTF-8 form): its bytes stay undecoded text
        else if (target.in === 'query' && v.name === 'lone surrogate') continue;
        // a path parameter that names nothing is checked first (404); otherwise the hostile field is the answer
        else if (res.status === 404 && target.path !== target.path.replace(/[0-9a-f-]{36}/, '')) continue;
        else if (res.status !== 400 || body.details?.field !== target.name || !String(body.error).startsWith(`${target.name}: `)) {
          wrong.push(`${label}: ${res.status} ${JSON.stringify(body)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  const cases: { name: string; method: string; path: string; body?: (v: string) => unknown; query?: string; field: string; key?: boolean }[] = [
    { name: 'portal sign-up', method: 'POST', path: '/portal/signup', body: (v) => ({ organization_name: v }), field: 'organization_name', key: false },
    { name: 'API key name', method: 'POST', path: '/v1/admin/api-keys', body: (v) => ({ name: v }), field: 'name' },
    {
      name: 'webhook description (create)',
      method: 'POST',
      path: '/v1/webhooks/endpoints',
      body: (v) => ({ url: 'http://127.0.0.1:9/hook', description: v }),
      field: 'description',
    },
    {
      name: 'webhook description (PATCH)',
      method: 'PATCH',
      path: `/v1/webhooks/endpoints/${randomUUID()}`,
      body: (v) => ({ description: v }),
      field: 'description',
    },
    {
      name: 'intent legId',
      method: 'POST',
      path: '/v1/transaction',
      body: (v) => ({
        identity_id: randomUUID(),
        intent: {
          adiUrl: 'acc://someone.acme',
          legs: [{ legId: v, chain: 'polygon-amoy', chainId: 80002, fromAddress: `0x${'1'.repeat(40)}`, toAddress: `0x${'2'.repeat(40)}`, amount: '1' }],
        },
      }),
      field: 'intent.legs[0].legId',
    },
    { name: 'events resource_id', method: 'GET', path: '/v1/events', query: 'resource_id', field: 'resource_id' },
    { name: 'deliveries event_type', method: 'GET', path: '/v1/webhooks/deliveries', query: 'event_type', field: 'event_type' },
    { name: 'pending identity', method: 'GET', path: '/v1/pending', query: 'identity', field: 'identity' },
    { name: 'portfolio identity', method: 'GET', path: '/v1/portfolio', query: 'identity', field: 'identity' },
  ];

  for (const c of cases) {
    for (const v of HOSTILE) {
      if (c.query && v.name === 'lone surrogate') continue; // no URL can carry one (see above)
      it(`${c.name}: ${v.name} is a 400 naming ${c.field}`, async () => {
        const path = c.query ? `${c.path}?${c.query}=${v.query}` : c.path;
        const res = await t.call(path, {
          method: c.method,
          ...(c.key === false ? {} : { key: admin.key }),
          ...(c.body ? { body: JSON.stringify(c.body(v.body)) } : {}),
        });
        await expectRefused(res, c.field);
      });
    }
  }

  it('the same text well-formed passes the check (a surrogate pair is one character, not a lone half)', async () => {
    const res = await t.call('/v1/admin/api-keys', { method: 'POST', key: admin.key, body: JSON.stringify({ name: 'key \ud83d\ude00' }) });
    expect(res.status).toBe(201);
    expect(((await res.json()) as Json).name).toBe('key \ud83d\ude00');
  });

  it('a JSON \\u0000 escape in a nested object is named by its path', async () => {
    const res = await t.call('/v1/admin/api-keys', { method: 'POST', key: admin.key, body: '{"name":"ok","permissions":["read","re\\u0000ad"]}' });
    await expectRefused(res, 'permissions[1]');
  });

  for (const [name, body] of [
    ['no body', undefined],
    ['an empty object', '{}'],
  ] as const) {
    it(`PATCH of a webhook endpoint with ${name} is a 400 naming the fields it takes`, async () => {
      const created = await t.call('/v1/webhooks/endpoints', { method: 'POST', key: admin.key, body: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }) });
      expect([created.status, created.status === 201 ? '' : await created.clone().text()]).toEqual([201, '']);
      const { id } = (await created.json()) as Json;
      const res = await t.call(`/v1/webhooks/endpoints/${id}`, {
        method: 'PATCH',
        key: admin.key,
        ...(body === undefined ? {} : { body }),
      });
      const answer = (await res.json()) as Json;
      expect({ status: res.status, code: answer.code, field: answer.details?.field }).toEqual({ status: 400, code: 'VALIDATION_ERROR', field: 'body' });
      for (const f of ['url', 'event_types', 'description', 'is_active']) expect(answer.error).toContain(f);
    });
  }
});
