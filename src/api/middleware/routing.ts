/**
 * Requests that no route serves, answered the same way with or without an API key (docs/api-conventions.md):
 *   - a path no route has: 404 NOT_FOUND;
 *   - a known path with a method it does not take: 405 METHOD_NOT_ALLOWED with `Allow` listing the methods it takes;
 *   - OPTIONS on a known path: 204 with `Allow` (the gateway serves no browser origins, so no CORS headers).
 * GET implies HEAD, as Hono answers HEAD with the GET route. The known paths and methods are the app's own
 * registered routes (app.router, matched as Hono matches them, path parameters included), so a route added anywhere
 * is known at once.
 *
 * `routeCheck(app)` runs in front of authentication and marks a miss in `c.get('routeMiss')`; the auth middleware
 * then still counts the request against the rate limit but does not refuse it, and `routeNotFound` (the app's
 * not-found handler) gives the answer.
 */
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { RouterRoute } from 'hono/types';
import type { AppEnv } from '../deps.js';
import { errorBody, notFound } from '../errors.js';

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** `app.use(...)` registrations: middleware, not routes. */
const isMiddleware = (r: RouterRoute) => r.method === 'ALL' && r.path.endsWith('*');

// biome-ignore lint/suspicious/noExplicitAny: any app's environment
type AnyApp = Hono<any, any, any>;

/** The methods `path` is served with: none for an unknown path. Read from the app's router at request time. */
export function methodsOf(app: AnyApp, path: string): string[] {
  const routed = (method: string) => app.router.match(method, path)[0].some(([[, r]]) => !isMiddleware(r));
  const methods = new Set(app.routes.filter((r) => !isMiddleware(r) && r.method !== 'ALL').map((r) => r.method));
  const allowed = [...methods].filter(routed);
  if (allowed.length === 0) return [];
  if (allowed.includes('GET')) allowed.push('HEAD');
  allowed.push('OPTIONS');
  return [...new Set(allowed)].sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b));
}

/** Marks a request that no route serves, before authentication. */
export function routeCheck(app: AnyApp): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    // the routes Hono matched for this request (a HEAD is dispatched as a GET)
    const served = matchedRoutes(c).some((r) => !isMiddleware(r));
    if (!served) {
      const allow = methodsOf(app, c.req.path);
      c.set('routeMiss', allow.length > 0 ? { allow } : {});
    }
    return next();
  };
}

/** The app's not-found handler: 405 or 204 (OPTIONS) with Allow on a known path, else 404. */
export function routeNotFound(c: Context<AppEnv>): Response {
  const allow = c.get('routeMiss')?.allow;
  if (allow) {
    c.header('Allow', allow.join(', '));
    if (c.req.method === 'OPTIONS') return c.body(null, 204);
    return c.json(errorBody(`Method ${c.req.method} not allowed on ${c.req.path}; allowed: ${allow.join(', ')}`, 'METHOD_NOT_ALLOWED'), 405);
  }
  return notFound(c);
}
