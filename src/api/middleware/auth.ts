/**
 * API-key authentication and rate limiting, applied to every request:
 *   1. identify the caller from X-API-Key or `Authorization: Bearer <key>` (the same keys; both headers carrying
 *      different keys are refused; SHA-256 lookup, answered by the process's key cache while fresh (revocation and
 *      rotation reach every process's cache at once: src/db/api-key-cache.ts); the raw key is never logged or stored);
 *   2. count the request against the key's own limit (rate_limit_rpm), or, without a valid key, the client IP's;
 *      a public path (sign-up, health, docs, the catalogues) always counts against the client IP, whatever key it
 *      carries, so a key with a high limit cannot lift the per-IP limit on sign-ups;
 *   3. on every path but the public ones (and requests no route serves, answered 404/405 by ./routing.ts), refuse
 *      with the spec's exact texts:
 *      401 Missing X-API-Key header / Invalid API key format / Invalid API key (and, for the Authorization header,
 *      401 UNSUPPORTED_AUTH_SCHEME for a scheme other than Bearer and 401 CONFLICTING_API_KEYS for two different keys),
 *      403 API key is deactivated / API key has expired;
 *   4. set `c.get('auth')` (AuthContext) for the routes.
 * Routes then demand scopes through secureRoute (the scope model: ./scopes.ts).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { apiKeyCacheFor } from '../../db/api-key-cache.js';
import { KEY_FORMAT, touchApiKey, TOUCH_INTERVAL_MS, type ApiKeyRow } from '../../db/api-keys.js';
import type { Caller } from '../../services/deps.js';
import type { AppDeps, AppEnv, AuthContext } from '../deps.js';
import { ApiError } from '../errors.js';
import { nodeResponse } from '../response-headers.js';
import { createRateLimiter, enforceRateLimit } from './rate-limit.js';

/**
 * GET (and HEAD) paths reachable without a key besides the docs and the portal: liveness and readiness probes, the
 * scope and error catalogues a client reads before it holds a key, and the chain registry (/v1/chains and
 * /v1/chains/{id}: the gateway's configuration, the same for everyone).
 */
const PUBLIC_GETS = new Set(['/v1/health', '/v1/health/ready', '/v1/scopes', '/v1/errors']);
const PUBLIC_CHAIN_PATH = /^\/v1\/chains(?:\/[^/]+)?$/;
/** the reference page and its scripts (src/api/reference.ts) */
const PUBLIC_REFERENCE_PATH = /^\/reference(?:\/assets\/[^/]+)?$/;
/** the console page and its bundled assets (src/api/routes/console.ts); it signs in with a key in the browser */
const PUBLIC_CONSOLE_PATH = /^\/console(?:\/assets\/[^/]+)?$/;

/** Paths reachable without a key. /metrics is not one of them: it needs the operator scope. */
export function isPublicPath(method: string, path: string): boolean {
  if (PUBLIC_GETS.has(path) || PUBLIC_CHAIN_PATH.test(path)) return method === 'GET' || method === 'HEAD';
  return (
    path === '/docs' ||
    path === '/docs/json' ||
    PUBLIC_REFERENCE_PATH.test(path) ||
    PUBLIC_CONSOLE_PATH.test(path) ||
    path === '/portal' ||
    path.startsWith('/portal/')
  );
}

type KeyCheck =
  | { kind: 'missing' }
  | { kind: 'scheme' }
  | { kind: 'conflict' }
  | { kind: 'malformed' }
  | { kind: 'unknown' }
  | { kind: 'revoked'; key: ApiKeyRow }
  | { kind: 'expired'; key: ApiKeyRow }
  | { kind: 'valid'; key: ApiKeyRow };

/**
 * The client's address. Behind proxies (trustProxy) it is the X-Forwarded-For entry `hops` from the right: each
 * trusted proxy appends the address it saw, so the entries further left were written by the client and prove
 * nothing (a leftmost-entry rule let a client pick its rate-limit bucket). Fewer entries than hops: the leftmost.
 */
export function clientIp(c: Context<AppEnv>, trustProxy: boolean, hops = 1): string {
  if (trustProxy) {
    const entries = (c.req.header('x-forwarded-for') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (entries.length > 0) return entries[Math.max(0, entries.length - hops)];
  }
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown'; // not served over node:http (app.request in tests)
  }
}

/**
 * The raw key a request presents: X-API-Key, or the token of `Authorization: Bearer <key>` (the scheme is
 * case-insensitive). A non-Bearer Authorization header beside X-API-Key is left alone (it may be a proxy's); alone it
 * is `scheme`. Both headers with different keys are `conflict`: which one is meant cannot be guessed.
 */
export function presentedKey(
  xApiKey: string | undefined,
  authorization: string | undefined,
): { kind: 'key'; key: string } | { kind: 'missing' | 'scheme' | 'conflict' } {
  const header = xApiKey === '' ? undefined : xApiKey;
  const auth = authorization?.trim() || undefined;
  if (auth === undefined) return header === undefined ? { kind: 'missing' } : { kind: 'key', key: header };
  const bearer = /^bearer(?:\s+(.*))?$/i.exec(auth);
  if (!bearer) return header === undefined ? { kind: 'scheme' } : { kind: 'key', key: header };
  const token = bearer[1]?.trim() || undefined;
  if (header !== undefined && token !== undefined && token !== header) return { kind: 'conflict' };
  const key = header ?? token;
  return key === undefined ? { kind: 'missing' } : { kind: 'key', key };
}

export function apiKeyAuth(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const db = deps.database.db;
  const keys = apiKeyCacheFor(deps.database);
  const now = deps.now ?? Date.now;
  const limiter = createRateLimiter(db, now, (err) => deps.logger.warn('rate-limit counter unavailable; request let through', { err }));
  const { ipRpm, trustProxy, trustProxyHops } = deps.config.platform;

  return async (c, next) => {
    const presented = presentedKey(c.req.header('x-api-key'), c.req.header('authorization'));
    let check: KeyCheck;
    if (presented.kind !== 'key') check = { kind: presented.kind };
    else if (!KEY_FORMAT.test(presented.key)) check = { kind: 'malformed' };
    else {
      const key = await keys.find(presented.key).catch((err) => {
        c.get('logger').error('API key lookup failed', { err });
        throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'Authentication is temporarily unavailable; retry shortly', undefined, { 'Retry-After': '5' });
      });
      const t = new Date(now());
      if (!key) check = { kind: 'unknown' };
      else if (key.revokedAt) check = { kind: 'revoked', key };
      else if (key.expiresAt && key.expiresAt <= t) check = { kind: 'expired', key };
      else check = { kind: 'valid', key };
    }

    const isPublic = isPublicPath(c.req.method, c.req.path);
    const state =
      check.kind === 'valid' && !isPublic
        ? await limiter(`key:${check.key.id}`, check.key.rateLimitRpm)
        : await limiter(`ip:${clientIp(c, trustProxy, trustProxyHops)}`, ipRpm);
    enforceRateLimit(c, state);

    if (check.kind === 'valid') {
      const key = check.key;
      const auth: AuthContext = { orgId: key.orgId, keyId: key.id, permissions: key.permissions, isAdmin: key.isAdmin };
      c.set('auth', auth);
      c.set('logger', c.get('logger').child({ org_id: key.orgId, key_id: key.id }));
      // bookkeeping only; never delays or fails a call, and skipped (no round trip) while the row read is fresh
      const t = now();
      if (!key.lastUsedAt || t - key.lastUsedAt.getTime() >= TOUCH_INTERVAL_MS) {
        key.lastUsedAt = new Date(t); // the cached row too: the next request within the minute writes nothing
        touchApiKey(db, key.id, new Date(t)).catch(() => {});
      }
    } else if (!isPublic && !c.get('routeMiss')) {
      // a request no route serves gets its 404/405 whatever key it carries (./routing.ts)
      switch (check.kind) {
        case 'missing':
          throw new ApiError(401, 'MISSING_API_KEY', 'Missing X-API-Key header');
        case 'scheme':
          throw new ApiError(401, 'UNSUPPORTED_AUTH_SCHEME', 'Unsupported Authorization scheme: send the API key as Authorization: Bearer <key> or X-API-Key');
        case 'conflict':
          throw new ApiError(401, 'CONFLICTING_API_KEYS', 'X-API-Key and Authorization: Bearer carry different API keys; send one key');
        case 'malformed':
          throw new ApiError(401, 'INVALID_API_KEY_FORMAT', 'Invalid API key format');
        case 'unknown':
          throw new ApiError(401, 'INVALID_API_KEY', 'Invalid API key');
        case 'revoked':
          throw new ApiError(403, 'API_KEY_DEACTIVATED', 'API key is deactivated');
        case 'expired':
          throw new ApiError(403, 'API_KEY_EXPIRED', 'API key has expired');
      }
    }
    await next();
    // Responses built outside c (e.g. returned Response objects) still carry the headers (served by Node they have
    // them already: ../response-headers.ts).
    if (!nodeResponse(c) && !c.res.headers.has('X-RateLimit-Limit')) {
      try {
        c.res.headers.set('X-RateLimit-Limit', String(state.limit));
        c.res.headers.set('X-RateLimit-Remaining', String(state.remaining));
        c.res.headers.set('X-RateLimit-Reset', String(state.reset));
      } catch {
        /* immutable headers: nothing to do */
      }
    }
  };
}

/** The caller; throws 401 when a route that needs a key is reached without one (should not happen). */
export function requireAuth(c: Context<AppEnv>): AuthContext {
  const auth = c.get('auth');
  if (!auth) throw new ApiError(401, 'MISSING_API_KEY', 'Missing X-API-Key header');
  return auth;
}

/** The caller as the use cases take it: its organization and the request's logger. */
export function callerOf(c: Context<AppEnv>): Caller {
  return { orgId: requireAuth(c).orgId, log: c.get('logger') };
}
