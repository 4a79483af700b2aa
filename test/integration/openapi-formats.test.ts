/**
 * The OpenAPI document states the form the server requires of every id-like input: straight from /docs/json, so a
 * new route is covered. Every path, query or header parameter that names an id (`id`, `*_id`, `starting_after`), a
 * hash (`*_hash`) or an identity (`identity`), and every such body field, has `format` or `pattern`; and what the
 * document states, the server does: a body or query id of another form is a 400 naming it, while a path id of another
 * form is that resource's 404 (docs/api-conventions.md, Ids). Every header parameter states a pattern that keeps
 * out what Node's HTTP parser refuses before any route sees the request (a fuzzer sends what the document allows).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

type Schema = {
  type?: string | string[];
  format?: string;
  pattern?: string;
  enum?: unknown[];
  $ref?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
};
type Parameter = { name: string; in: string; schema?: Schema };
type Operation = { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema?: Schema }> } };
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/** Names of inputs that carry an id, a hash or an identity reference. */
const ID_LIKE = /^(id|.+_id|starting_after|.+_hash|identity|tx_hash)$/;

describe('OpenAPI: format and pattern of id-like inputs', () => {
  let t: TestApp;
  let doc: Doc;
  let key: TestKey;
  beforeAll(async () => {
    t = await startTestApp('pglite');
    key = await createTestOrgAndKey(t.db, { isAdmin: true, permissions: ['read', 'write', 'proof:read', 'admin', 'webhook:read', 'events:read'] });
    doc = await (await t.call('/docs/json')).json();
  });
  afterAll(async () => t?.close());

  const resolve = (s: Schema | undefined): Schema | undefined => (s?.$ref ? doc.components.schemas[s.$ref.split('/').pop()!] : s);
  const stated = (s: Schema | undefined) => !!s && (!!s.format || !!s.pattern || !!s.enum);
  /** every parameter of every operation, with where it is ("GET /v1/…") */
  const parameters = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).flatMap(([method, op]) => (op.parameters ?? []).map((p) => ({ where: `${method.toUpperCase()} ${path}`, p }))),
    );

  it('every id-like parameter states its format or pattern', () => {
    const idLike = parameters().filter(({ p }) => ID_LIKE.test(p.name));
    expect(idLike.filter(({ p }) => !stated(resolve(p.schema))).map(({ where, p }) => `${where} ${p.in} ${p.name}`)).toEqual([]);
    // path ids, tx hashes, query ids (identity_id, endpoint_id, event_id, resource_id, starting_after, identity)
    expect(idLike.length).toBeGreaterThan(30);
  });

  it('every id-like body field states its format or pattern', () => {
    const missing: string[] = [];
    const walk = (s: Schema | undefined, where: string, depth: number) => {
      const r = resolve(s);
      if (!r || depth > 6) return;
      for (const [name, prop] of Object.entries(r.properties ?? {})) {
        const p = resolve(prop);
        const isString = p?.type === 'string' || (Array.isArray(p?.type) && p.type.includes('string'));
        if (ID_LIKE.test(name) && isString && !stated(p)) missing.push(`${where}.${name}`);
        walk(p, `${where}.${name}`, depth + 1);
        if (p?.items) walk(p.items, `${where}.${name}[]`, depth + 1);
      }
    };
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const schema = op.requestBody?.content['application/json']?.schema;
        walk(schema, `${method.toUpperCase()} ${path}`, 0);
      }
    }
    // transaction intents' target_id takes a pending action id or a transaction hash; every other id-like field states its form
    expect(missing.filter((m) => !m.endsWith('POST /v1/sign.target_id'))).toEqual([]);
  });

  it('every header parameter states a pattern an HTTP parser accepts', () => {
    // Node refuses a request whose header carries a control character or (here) a non-ASCII one, before any route:
    // a value the document allows must reach the route
    const headers = parameters().filter(({ p }) => p.in === 'header');
    const loose = headers.filter(({ p }) => {
      const s = resolve(p.schema);
      if (s?.enum) return false;
      const re = s?.pattern ? new RegExp(s.pattern, 'u') : undefined;
      return !re || ['a\u0001b', '\u00e9', 'a\tb', ' a'].some((v) => re.test(v));
    });
    expect(loose.map(({ where, p }) => `${where} ${p.name}`)).toEqual([]);
    expect(headers.length).toBeGreaterThanOrEqual(3); // Idempotency-Key, If-None-Match, Prefer
  });

  it('the documented forms are what the server takes', async () => {
    const param = (path: string, method: string, name: string) => doc.paths[path][method].parameters!.find((p) => p.name === name)!.schema!;
    expect(param('/v1/identity/{id}', 'get', 'id').format).toBe('uuid');
    expect(param('/v1/events', 'get', 'resource_id').format).toBe('uuid');
    expect(param('/v1/webhooks/deliveries', 'get', 'endpoint_id').format).toBe('uuid');
    const txHash = new RegExp(param('/v1/proof/tx/{tx_hash}', 'get', 'tx_hash').pattern!);
    expect(txHash.test('ab'.repeat(32))).toBe(true);
    expect(txHash.test(`0x${'AB'.repeat(32)}`)).toBe(true);
    expect(txHash.test('ab'.repeat(31))).toBe(false);
    const idem = new RegExp(doc.paths['/v1/identity'].post.parameters!.find((p) => p.name === 'Idempotency-Key')!.schema!.pattern!);
    expect(idem.test('3f0c1d2e-key')).toBe(true);
    expect(idem.test('"quoted-key"')).toBe(true);
    expect(idem.test('has space')).toBe(false);

    // a UUID of any version or variant is an id (the regex JSON Schema's `uuid` format takes)
    const anyVariant = 'e3e70682-c209-4cac-629f-6fbed82c07cd';
    const q = async (path: string) => t.call(path, { key: key.key });
    expect((await q(`/v1/events?resource_id=${anyVariant}`)).status).toBe(200);
    expect((await q(`/v1/webhooks/deliveries?endpoint_id=${anyVariant}`)).status).toBe(200);
    const created = await t.call('/v1/admin/api-keys', { method: 'POST', key: key.key, body: JSON.stringify({ name: 'x', org_id: anyVariant }) });
    expect(created.status).not.toBe(400);

    // a query id of another form: 400 naming it
    for (const path of ['/v1/events?resource_id=nope', '/v1/webhooks/deliveries?endpoint_id=nope', '/v1/webhooks/deliveries?event_id=nope']) {
      const res = await q(path);
      expect(res.status, path).toBe(400);
      const field = path.split('?')[1].split('=')[0];
      expect(((await res.json()) as { details: { field: string } }).details.field).toBe(field);
    }
    // a path id or hash of another form: that resource's 404, never a 400
    for (const [path, code] of [
      ['/v1/identity/nope', 'IDENTITY_NOT_FOUND'],
      ['/v1/proof/tx/nope', 'PROOF_NOT_FOUND'],
      ['/v1/events/nope', 'NOT_FOUND'],
    ]) {
      const res = await q(path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { code: string }).code).toBe(code);
    }
  });
});
