/** /docs/json is a valid OpenAPI 3.1 document generated from the running app and describes every route. */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrgAndKey, startTestApp, type TestApp } from '../support/platform.js';

type Operation = {
  security?: Record<string, string[]>[];
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  requestBody?: { content: Record<string, { schema?: unknown }> };
  parameters?: { name: string; in: string }[];
  'x-required-scopes'?: string[];
};
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  security: unknown;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
};

describe('OpenAPI description, /docs and /reference', () => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await startTestApp('pglite');
    const res = await t.call('/docs/json');
    expect(res.status).toBe(200);
    doc = await res.json();
  });
  afterAll(async () => t?.close());

  it('validates as OpenAPI 3.1 (and the validator does reject a broken document)', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const v = new Validator();
    const result = await v.validate(structuredClone(doc) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(v.version).toBe('3.1');
    const broken = structuredClone(doc) as unknown as { paths: Record<string, Record<string, { responses: unknown }>> };
    broken.paths['/v1/admin/api-keys'].get.responses = 'none';
    expect((await new Validator().validate(broken as never)).valid).toBe(false);
  });

  it('describes every route the app serves', () => {
    const served = t.app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
    const described = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`));
    expect(new Set(described)).toEqual(new Set(served));
    expect(described).toEqual(
      expect.arrayContaining([
        'get /v1/health',
        'post /v1/admin/api-keys',
        'get /v1/admin/api-keys',
        'delete /v1/admin/api-keys/{key_id}',
        'post /v1/admin/api-keys/{key_id}/rotate',
        'get /portal',
        'post /portal/signup',
        'get /docs/json',
        'get /reference',
        'get /reference/assets/{file}',
        'get /console',
        'get /console/assets/{file}',
        'get /metrics',
      ]),
    );
  });

  it('declares the X-API-Key scheme (or the same key as a Bearer token), required everywhere but on the public routes', () => {
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(doc.components.securitySchemes.BearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ ApiKeyAuth: [] }, { BearerAuth: [] }]);
    const publicOps = [
      '/v1/health',
      '/v1/health/ready',
      '/v1/scopes',
      '/v1/errors',
      '/v1/chains',
      '/v1/chains/{id}',
      '/docs',
      '/docs/json',
      '/reference',
      '/reference/assets/{file}',
      '/console',
      '/console/assets/{file}',
      '/portal',
      '/portal/signup',
    ];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method} ${path}`;
        if (publicOps.includes(path)) {
          expect(op.security, where).toEqual([]);
        } else {
          expect(op.security, where).toEqual([{ ApiKeyAuth: [] }, { BearerAuth: [] }]);
          for (const s of ['401', '403', '429']) expect(op.responses[s], `${where} ${s}`).toBeDefined();
        }
      }
    }
  });

  it('gives request and response schemas and the Error schema for errors', () => {
    expect(doc.components.schemas.Error).toMatchObject({ properties: { error: { type: 'string' }, code: { type: 'string' } }, required: ['error', 'code'] });
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method} ${path}`;
        const codes = Object.keys(op.responses);
        const ok = codes.filter((s) => s.startsWith('2'));
        expect(ok.length, where).toBeGreaterThan(0);
        for (const s of ok) if (s !== '204') expect(Object.values(op.responses[s].content ?? {})[0]?.schema, `${where} ${s}`).toBeDefined();
        for (const s of codes.filter((x) => /^[45]/.test(x))) {
          if ((where === 'get /v1/health' || where === 'get /v1/health/ready') && s === '503') continue; // the health body names what is down
          expect(op.responses[s].content?.['application/json']?.schema, `${where} ${s}`).toEqual({ $ref: '#/components/schemas/Error' });
        }
        // action endpoints (rotate, rotate-secret, verify, redeliver, signing-data) take no body
        if (method === 'post' && !/\/(rotate|rotate-secret|verify|redeliver|signing-data)$/.test(path))
          expect(op.requestBody?.content['application/json']?.schema, where).toBeDefined();
      }
    }
    // what the middleware in front of every route can answer is documented everywhere it applies
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method} ${path}`;
        expect(op.responses['503'], `${where} 503`).toBeDefined();
        if (op.requestBody) for (const s of ['400', '413', '415']) expect(op.responses[s], `${where} ${s}`).toBeDefined();
      }
    }
    const create = doc.paths['/v1/admin/api-keys'].post;
    expect(create['x-required-scopes']).toEqual(['admin']);
    expect(create.parameters?.some((p) => p.in === 'header' && p.name === 'Idempotency-Key')).toBe(true);
    for (const s of ['409', '422']) expect(create.responses[s]).toBeDefined();
  });

  it('/docs serves the same document; /reference is the interactive reference pointing at /docs/json', async () => {
    expect(await (await t.call('/docs')).json()).toEqual(doc);
    const page = await t.call('/reference');
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain('/docs/json');
    expect(html).toMatch(/Scalar|api-reference/i);
    // every script is served from this origin, under a policy that allows no other
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'(;|$)/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const browser = await t.call('/docs', { headers: { accept: 'text/html' } });
    expect(browser.headers.get('content-type')).toMatch(/text\/html/);
    expect(await browser.text()).toBe(html);
    // the docs need no key even when a key is sent, and a valid key does not change them
    const k = await createTestOrgAndKey(t.db);
    expect(await (await t.call('/docs/json', { key: k.key })).json()).toEqual(doc);
  });
});
