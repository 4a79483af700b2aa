/**
 * What a client reads to check itself:
 *   GET /v1/me      the calling key (any scope): its id, name, prefix, permissions, rate limit, expiry and its
 *                   organization's limits; never the secret
 *   GET /v1/scopes  public: every scope, what it is for and the operations that accept it, read from the routes'
 *                   own scope declarations (secureRoute), the rules the scope check enforces
 *   GET /v1/errors  public: every error code with its HTTP status and meaning (src/services/error-catalogue.ts)
 * The two catalogues are public because a client needs them before it holds a key (to ask for the right scopes, to
 * build its error handling) and they tell nothing /docs/json does not already publish.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { SCOPES } from '../../db/api-keys.js';
import { describeCallerKey } from '../../services/account.js';
import { ERROR_CATALOGUE } from '../../services/error-catalogue.js';
import { SCOPE_CATALOGUE } from '../../services/scope-catalogue.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { requireAuth } from '../middleware/auth.js';
import { errorResponses, jsonResponse } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';

const iso = (description?: string) => z.string().openapi({ format: 'date-time', ...(description ? { description } : {}) });

const MeSchema = z
  .object({
    id: z.uuid().openapi({ description: 'The id of the key that made this request' }),
    name: z.string(),
    prefix: z
      .string()
      .openapi({ description: 'First characters of the key, to recognise it; the key itself is never shown again', example: 'ck_live_4fT9aQ2b' }),
    org_id: z.uuid(),
    permissions: z.array(z.string()).openapi({ description: 'The scopes the key holds (GET /v1/scopes says what each opens)' }),
    is_admin: z.boolean(),
    rate_limit_rpm: z.number().int().openapi({ description: 'Requests per minute the key may make' }),
    created_at: iso(),
    expires_at: iso('null: the key does not expire').nullable(),
    last_used_at: iso('Updated at most once a minute').nullable(),
    organization: z.object({
      id: z.uuid(),
      name: z.string(),
      identity_quota: z.number().int().openapi({ description: 'Identities that may exist at once (retired ones do not count)' }),
      credit_grant: z.number().int().openapi({ description: "Ledger credits granted to the organization's identities in total" }),
      credits_remaining: z.number().int().openapi({ description: 'Credits of the grant not yet given to an identity' }),
      created_at: iso(),
    }),
  })
  .openapi('Me');

const ScopesSchema = z
  .object({
    scopes: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        operations: z.array(z.string()).openapi({
          description:
            'Operations this scope opens, as `METHOD /path`: those that require it (with any other scope they require) and those that accept any one of a list it is in',
          example: ['GET /v1/identity/{id}'],
        }),
      }),
    ),
  })
  .openapi('Scopes');

const ErrorsSchema = z
  .object({
    errors: z.array(
      z.object({
        code: z.string(),
        status: z.number().int().openapi({ description: 'The HTTP status the code usually comes with' }),
        statuses: z.array(z.number().int()).openapi({ description: 'Every HTTP status the code can come with' }),
        meaning: z.string(),
        retryable: z.boolean().openapi({ description: 'Repeating the identical request can succeed later (after Retry-After where one is sent)' }),
        audience: z
          .enum(['caller', 'platform'])
          .openapi({ description: '`platform`: nothing the caller can change; `caller`: the request, key or account must change' }),
      }),
    ),
  })
  .openapi('ErrorCatalogue');

type RouteWithScopes = { method: string; path: string; 'x-required-scopes'?: string[]; 'x-accepted-scopes'?: string[] };

/** Every scope with the operations whose declared rule it satisfies, from the app's route definitions. */
function scopeOperations(app: OpenAPIHono<AppEnv>): Map<string, string[]> {
  const ops = new Map<string, string[]>(SCOPES.map((s) => [s, []]));
  for (const def of app.openAPIRegistry.definitions) {
    if (def.type !== 'route') continue;
    const route = def.route as unknown as RouteWithScopes;
    const op = `${route.method.toUpperCase()} ${route.path}`;
    for (const scope of [...(route['x-required-scopes'] ?? []), ...(route['x-accepted-scopes'] ?? [])]) ops.get(scope)?.push(op);
  }
  for (const list of ops.values()) list.sort((a, b) => a.split(' ')[1].localeCompare(b.split(' ')[1]) || a.localeCompare(b));
  return ops;
}

export function registerMeRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/me',
      tags: ['Account'],
      summary: 'The calling API key and its organization',
      description:
        "What the key that makes this request may do: its permissions (scopes), rate limit and expiry, and its organization's identity quota and credits. Any valid key may ask. The secret is never returned: only the key's listing prefix.",
      scopes: { anyOf: SCOPES },
      responses: { 200: jsonResponse(MeSchema, 'The calling key') },
    }),
    async (c) => {
      const auth = requireAuth(c);
      return c.json(await describeCallerKey(deps, auth.orgId, auth.keyId), 200);
    },
  );

  let scopes: z.infer<typeof ScopesSchema> | undefined;
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/scopes',
      tags: ['Account'],
      summary: 'Every scope an API key can hold, and the operations it opens',
      description:
        'Public, no API key: choosing the scopes of a new key should not need one. `operations` is read from the scope rules the routes declare and the gateway enforces, so it lists exactly what a key with that scope may call. An admin key also passes every rule that accepts any one of several scopes.',
      security: [],
      responses: { 200: jsonResponse(ScopesSchema, 'The scope vocabulary'), ...errorResponses(429) },
    }),
    (c) => {
      // the route table is complete once the app is built, so the first request computes it for good
      if (!scopes) {
        const ops = scopeOperations(app);
        scopes = { scopes: SCOPE_CATALOGUE.map((s) => ({ ...s, operations: ops.get(s.name) ?? [] })) };
      }
      return c.json(scopes, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/errors',
      tags: ['Account'],
      summary: 'Every error code the API answers with',
      description:
        'Public, no API key: a client can build its error handling before it holds one. Each code with its HTTP status, its meaning, whether repeating the same request can succeed later, and whether the caller can act on it. Every error body is `{ error, code, details? }`.',
      security: [],
      responses: { 200: jsonResponse(ErrorsSchema, 'The error vocabulary'), ...errorResponses(429) },
    }),
    (c) => c.json({ errors: [...ERROR_CATALOGUE] }, 200),
  );
}
