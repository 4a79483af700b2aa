/**
 * The scope model: what an operation demands of the calling key, in one of two forms.
 *   - all of a list (`['write']`, `['admin']`): every listed scope is among the key's permissions. The core API.
 *   - `{ anyOf }`: any one listed scope, or an admin key. The webhook and event operations, which a key made for an
 *     integration (`webhook:write`, `webhook:read`, `events:read` and nothing else) may call, and so may a key with
 *     `write` or `read`.
 * A key that falls short gets 403 INSUFFICIENT_SCOPE naming the first scope it lacks. The caller itself was
 * authenticated by the API-key middleware (./auth.ts); routes declare their rule through secureRoute.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv, AuthContext } from '../deps.js';
import { ApiError } from '../errors.js';
import { requireAuth } from './auth.js';

export type ScopeRule = readonly string[] | { anyOf: readonly string[] };

/** The rules of the webhook and event operations. */
export const SCOPE_RULES = {
  /** register, change, delete endpoints; rotate secrets; redeliver */
  webhookWrite: { anyOf: ['webhook:write', 'write', 'admin'] },
  /** list endpoints and the delivery log */
  webhookRead: { anyOf: ['webhook:read', 'webhook:write', 'read', 'admin'] },
  /** the event log */
  eventsRead: { anyOf: ['events:read', 'read', 'admin'] },
} as const;

function isAnyOf(rule: ScopeRule): rule is { anyOf: readonly string[] } {
  return !Array.isArray(rule);
}

/** 403 INSUFFICIENT_SCOPE unless `auth` satisfies `rule`. */
export function checkScopes(auth: AuthContext, rule: ScopeRule): void {
  if (isAnyOf(rule)) {
    const { anyOf } = rule;
    if (auth.isAdmin || anyOf.some((s) => auth.permissions.includes(s))) return;
    throw new ApiError(403, 'INSUFFICIENT_SCOPE', `API key lacks the required scope: ${anyOf[0]}`, { required_any_of: anyOf });
  }
  const missing = rule.filter((s) => !auth.permissions.includes(s));
  if (missing.length > 0) {
    throw new ApiError(403, 'INSUFFICIENT_SCOPE', `API key lacks the required scope: ${missing[0]}`, {
      required_scopes: rule,
      missing_scopes: missing,
    });
  }
}

/** Route middleware: the caller (401 without one) must satisfy `rule`. It runs before request validation. */
export function requireScopes(rule: ScopeRule): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    checkScopes(requireAuth(c), rule);
    return next();
  };
}

/** How the rule is stated in the OpenAPI description: `x-required-scopes` (all of) or `x-accepted-scopes` (any one). */
export function scopeExtension(rule: ScopeRule): Record<string, string[]> {
  if (isAnyOf(rule)) return { 'x-accepted-scopes': [...rule.anyOf] };
  return rule.length ? { 'x-required-scopes': [...rule] } : {};
}
