/**
 * /docs/json — the OpenAPI 3.1 description generated at request time from the running app's zod route
 * definitions (so it cannot drift from what is served); /docs — the same document (an HTML reference for
 * browsers); /reference — the interactive Scalar reference rendered from /docs/json, its scripts served from this
 * origin under /reference/assets/ (src/api/reference.ts). All public.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppDeps, AppEnv } from './deps.js';
import { ApiError } from './errors.js';
import { isPublicPath } from './middleware/auth.js';
import { REFERENCE_ASSET_HEADERS, REFERENCE_ASSETS, REFERENCE_CSP, referenceAsset, referencePage } from './reference.js';
import { errorResponses, RATE_LIMIT_HEADERS } from './schemas/common.js';
import { API_KEY_SCHEME, BEARER_SCHEME, KEY_SECURITY } from './secure-route.js';

const DESCRIPTION = `Gateway for proof-gated on-chain authorization.

Authentication: every request except the public ones (GET /v1/health, GET /v1/health/ready, GET /v1/scopes,
GET /v1/errors, /docs, /docs/json, /reference, /portal) carries the header X-API-Key with a key \`ck_live_…\` (create
one at /portal, or with POST /v1/admin/api-keys), or the same key as \`Authorization: Bearer ck_live_…\` (both
headers with different keys: 401 CONFLICTING_API_KEYS). GET /v1/me shows the calling key, GET /v1/scopes what each
scope opens, GET /v1/errors every error code.

Rate limits: per key (rate_limit_rpm, default 60 requests per minute), per client IP without a key. Every response
carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (Unix timestamp of the window's end); over
the limit: 429 {"error":"Rate limit exceeded","code":"RATE_LIMIT_EXCEEDED"} with Retry-After.

Errors: one JSON shape {error, code, details?}; every response has X-Request-Id.

Text: no text input (body fields and keys, query, header and path parameters) may hold U+0000 or a lone UTF-16
surrogate: 400 VALIDATION_ERROR naming the field (in a path parameter: the resource's 404). Ids in bodies and queries
are UUIDs (format uuid): another form is a 400 naming the field; in a path, another form names nothing (404).

Idempotency: creating POSTs accept Idempotency-Key (kept 24 hours, per organization).`;

const OpenApiDocumentSchema = z.record(z.string(), z.unknown()).openapi('OpenAPIDocument');
const html = (description: string) => ({
  description,
  headers: RATE_LIMIT_HEADERS,
  content: { 'text/html': { schema: z.string() } },
});

export function openApiDocument(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const doc = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'Proof gateway API', version: '1.0.0', description: DESCRIPTION },
    servers: [{ url: deps.config.api.publicBaseUrl }],
    security: KEY_SECURITY,
  });
  // The auth and rate-limit middleware run in front of every route, so every operation can answer 429 and 503 (a
  // presented key cannot be checked), and every non-public one 401 and 403; the body limit and Hono's JSON parsing,
  // 400, 413 and 415 wherever a body is taken: say so even for routes defined without secureRoute.
  const std = errorResponses(400, 401, 403, 413, 415, 429, 503) as unknown as Record<string, object>;
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(ops as Record<string, { responses?: Record<string, unknown>; security?: unknown[]; requestBody?: unknown }>)) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      const isPublic = isPublicPath(method.toUpperCase(), path);
      const codes = isPublic ? ['429', '503'] : ['401', '403', '429', '503'];
      if (op.requestBody) codes.push('400', '413', '415');
      for (const code of codes) {
        if (!op.responses[code]) op.responses[code] = { ...std[code], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
      }
      if (!isPublic && op.security === undefined) op.security = KEY_SECURITY;
    }
  }
  return doc;
}

export function registerDocsRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openAPIRegistry.registerComponent('securitySchemes', API_KEY_SCHEME, {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'API key, ck_live_ followed by 43 base62 characters; shown once at creation',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', BEARER_SCHEME, {
    type: 'http',
    scheme: 'bearer',
    description:
      'The same API key as Authorization: Bearer ck_live_…, for clients configured with an access token. Sending both headers with different keys is a 401 CONFLICTING_API_KEYS',
  });

  const jsonDoc = (description: string) => ({
    description,
    headers: RATE_LIMIT_HEADERS,
    content: { 'application/json': { schema: OpenApiDocumentSchema } },
  });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/docs/json',
      tags: ['Docs'],
      summary: 'OpenAPI 3.1 description of this API',
      description: 'Generated from the running server; it prevails over any prose.',
      security: [],
      responses: { 200: jsonDoc('The OpenAPI 3.1 document'), ...errorResponses(429) },
    }),
    (c) => c.json(openApiDocument(app, deps) as unknown as Record<string, unknown>, 200),
  );

  const page = referencePage('/docs/json', 'Proof gateway API reference');
  const renderReference = (c: Context<AppEnv>) => {
    c.header('Content-Security-Policy', REFERENCE_CSP);
    c.header('Cache-Control', 'no-cache');
    return c.html(page);
  };

  app.openapi(
    createRoute({
      method: 'get',
      path: '/docs',
      tags: ['Docs'],
      summary: 'OpenAPI description (JSON), or the reference page for a browser',
      description: 'The same document as /docs/json. A request that prefers text/html (a browser) gets the interactive reference.',
      security: [],
      responses: { 200: { ...jsonDoc('The OpenAPI 3.1 document'), content: { ...jsonDoc('').content, ...html('').content } }, ...errorResponses(429) },
    }),
    (async (c: Context<AppEnv>) => {
      const accept = c.req.header('accept') ?? '';
      if (accept.includes('text/html')) return renderReference(c);
      return c.json(openApiDocument(app, deps) as unknown as Record<string, unknown>, 200);
    }) as never,
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/reference',
      tags: ['Docs'],
      summary: 'Interactive API reference',
      description: 'Scalar API reference rendered from /docs/json. Every script it runs is served by this gateway (/reference/assets/…).',
      security: [],
      responses: { 200: html('HTML page'), ...errorResponses(429) },
    }),
    renderReference as never,
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/reference/assets/{file}',
      tags: ['Docs'],
      summary: 'A script of the reference page',
      description: 'The @scalar/api-reference browser bundle (the version in the lock file) and the page start-up script. Versioned names, cached for a year.',
      security: [],
      request: {
        params: z.object({
          file: z.string().openapi({
            param: { name: 'file', in: 'path' },
            description: `Asset file name, as the page names it: ${REFERENCE_ASSETS.bundle} or ${REFERENCE_ASSETS.init}`,
          }),
        }),
      },
      responses: {
        200: { description: 'JavaScript', headers: RATE_LIMIT_HEADERS, content: { 'text/javascript': { schema: z.string() } } },
        ...errorResponses(404, 429),
      },
    }),
    ((c: Context<AppEnv>) => {
      const body = referenceAsset(c.req.param('file') ?? '');
      if (body === undefined) throw new ApiError(404, 'NOT_FOUND', 'No such asset');
      return c.body(typeof body === 'string' ? body : new Uint8Array(body), 200, REFERENCE_ASSET_HEADERS);
    }) as never,
  );
}
