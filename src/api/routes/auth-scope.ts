/**
 * Local stand-in for the platform's scope helper (branch `platform`): who is calling, and may they? Replace the
 * body with the platform's helper when it lands; the call sites stay.
 */
import type { Context } from 'hono';
import type { AppEnv, AuthContext } from '../deps.js';
import { ApiError } from '../errors.js';

export const SCOPES = {
  /** register, change, delete endpoints; rotate secrets; redeliver */
  webhookWrite: ['webhook:write', 'admin', 'admin:write'],
  /** list endpoints and the delivery log */
  webhookRead: ['webhook:read', 'webhook:write', 'read', 'admin', 'admin:read', 'admin:write'],
  /** the event log */
  eventsRead: ['events:read', 'read', 'admin', 'admin:read'],
} as const;

/** The caller's auth context, or 401; 403 unless the key holds one of `anyOf` (admin keys hold every scope). */
export function requireScope(c: Context<AppEnv>, anyOf: readonly string[]): AuthContext {
  const auth = c.get('auth');
  if (!auth) throw new ApiError(401, 'UNAUTHENTICATED', 'Missing X-API-Key header');
  if (auth.isAdmin || anyOf.some((s) => auth.permissions.includes(s))) return auth;
  throw new ApiError(403, 'INSUFFICIENT_SCOPE', `API key lacks the required scope (one of: ${anyOf.join(', ')})`, { required_any_of: anyOf });
}
