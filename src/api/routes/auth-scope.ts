/**
 * Scope check for the webhook and event routes, which accept any one of several scopes (a key with `write` may
 * manage its organization's endpoints; `webhook:*` keys can be made for integrations that do nothing else).
 * The caller itself was authenticated by the API-key middleware (src/api/middleware/auth.ts).
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv, AuthContext } from '../deps.js';
import { ApiError } from '../errors.js';

export const SCOPES = {
  /** register, change, delete endpoints; rotate secrets; redeliver */
  webhookWrite: ['webhook:write', 'write', 'admin'],
  /** list endpoints and the delivery log */
  webhookRead: ['webhook:read', 'webhook:write', 'read', 'admin'],
  /** the event log */
  eventsRead: ['events:read', 'read', 'admin'],
} as const;

/** The caller's auth context, or 401; 403 unless the key holds one of `anyOf` (admin keys hold every scope). */
export function requireScope(c: Context<AppEnv>, anyOf: readonly string[]): AuthContext {
  const auth = c.get('auth');
  if (!auth) throw new ApiError(401, 'UNAUTHENTICATED', 'Missing X-API-Key header');
  if (auth.isAdmin || anyOf.some((s) => auth.permissions.includes(s))) return auth;
  throw new ApiError(403, 'INSUFFICIENT_SCOPE', `API key lacks the required scope: ${anyOf[0]}`, { required_any_of: anyOf });
}

/**
 * Route fields for an operation that accepts any one of `anyOf`: `x-accepted-scopes` in the OpenAPI description
 * and the check as route middleware, so it runs before request validation (a key without the scope gets 403 whatever
 * it sends, as on the secureRoute operations).
 */
export function acceptedScopes(anyOf: readonly string[]) {
  const check: MiddlewareHandler<AppEnv> = async (c, next) => {
    requireScope(c, anyOf);
    await next();
  };
  return { 'x-accepted-scopes': [...anyOf], middleware: [check] as MiddlewareHandler[] };
}
