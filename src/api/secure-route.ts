/**
 * `secureRoute(deps, config)`: createRoute for an authenticated operation, the one way routes declare one. It adds
 *   - the security requirement (X-API-Key, or the same key as Authorization: Bearer) and the standard error responses
 *     (400, 401, 403, 429, 500, and 409/422 when idempotent) with the Error body and the rate-limit headers, to the
 *     OpenAPI description;
 *   - the scope check (./middleware/scopes.ts: all of a list, or `{ anyOf }`) and, with `idempotent: true`, the
 *     Idempotency-Key middleware, to the handler chain, in front of request validation;
 *   - the Idempotency-Key header parameter and `x-required-scopes` (or `x-accepted-scopes`) to the description.
 *
 *   const route = secureRoute(deps, { method: 'post', path: '/v1/things', scopes: ['write'], idempotent: true,
 *     request: {...}, responses: { 201: {...}, ...errorResponses(400, 404) } });
 *   app.openapi(route, handler)  // handler: c.get('auth')!.orgId scopes every lookup
 */
import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppDeps, AppEnv } from './deps.js';
import { idempotency } from './middleware/idempotency.js';
import { emptyBodyIsNoBody } from './middleware/optional-body.js';
import { requireScopes, scopeExtension, type ScopeRule } from './middleware/scopes.js';
import { errorResponses, IDEMPOTENCY_KEY_PATTERN } from './schemas/common.js';

export const API_KEY_SCHEME = 'ApiKeyAuth';
/** the same keys sent as `Authorization: Bearer <key>` */
export const BEARER_SCHEME = 'BearerAuth';
/** an authenticated operation's requirement: either header */
export const KEY_SECURITY: Record<string, string[]>[] = [{ [API_KEY_SCHEME]: [] }, { [BEARER_SCHEME]: [] }];

export interface SecureRouteOptions {
  /** scopes the key must hold: all of a list, e.g. ['write'] or ['proof:read'], or any one of `{ anyOf: [...] }` */
  scopes?: ScopeRule;
  /** opt into Idempotency-Key handling (creating POSTs) */
  idempotent?: boolean;
}

export function secureRoute<R extends RouteConfig>(deps: AppDeps, route: R & SecureRouteOptions): R {
  const { scopes = [], idempotent = false, ...rest } = route;
  const own = rest.middleware === undefined ? [] : Array.isArray(rest.middleware) ? rest.middleware : [rest.middleware];
  const middleware: MiddlewareHandler<AppEnv>[] = [requireScopes(scopes)];
  if (idempotent) middleware.push(idempotency(deps));
  // an optional body: a JSON Content-Type with nothing after it is no body (as on the POSTs that declare none)
  const body = (rest as { request?: { body?: { required?: boolean } } }).request?.body;
  if (body && !body.required) middleware.push(emptyBodyIsNoBody);
  const parameters = [...((rest as { parameters?: unknown[] }).parameters ?? [])];
  if (idempotent) {
    parameters.push({
      in: 'header',
      name: 'Idempotency-Key',
      required: false,
      description:
        'A unique value (a UUID is recommended) that makes retrying this request safe for 24 hours: a retry with the same key and body returns the original response with `idempotent: true`; the same key with a different body is rejected with 422 IDEMPOTENCY_KEY_MISMATCH; a retry while the first is still running gets 409 IDEMPOTENCY_KEY_IN_FLIGHT (retry after Retry-After, same key).',
      schema: { type: 'string', minLength: 1, maxLength: 257, pattern: IDEMPOTENCY_KEY_PATTERN },
    });
  }
  // any validated input (path, query, headers, body) can be refused with 400 VALIDATION_ERROR naming the field, and
  // any request at all with 400 MALFORMED_REQUEST when the HTTP server cannot read it (e.g. a header value with bytes
  // HTTP forbids, which a client may send in X-API-Key or Authorization)
  const std = errorResponses(400, 401, 403, 429, 500, ...(idempotent ? [409, 422] : []));
  return createRoute({
    ...rest,
    security: KEY_SECURITY,
    ...(parameters.length ? { parameters } : {}),
    ...scopeExtension(scopes),
    ...(idempotent ? { 'x-idempotent': true } : {}),
    middleware: [...middleware, ...own] as MiddlewareHandler[],
    responses: { ...std, ...rest.responses },
  }) as unknown as R;
}
