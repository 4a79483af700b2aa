import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../../log.js';
import type { AppEnv } from '../deps.js';
import { setResponseHeader } from '../response-headers.js';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** path segments that are bearer secrets in their own right (a mnemonic's one-shot retrieval token) */
const SECRET_SEGMENT = /(\/mnemonic\/)[^/]+/;

/** The request's path as it may be logged: secret segments replaced. */
export const loggablePath = (path: string): string => (path.includes('/mnemonic/') ? path.replace(SECRET_SEGMENT, '$1[redacted]') : path);

/** Every response carries X-Request-Id (the caller's, if well-formed, else a new UUID); one JSON log line per request. */
export function requestId(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const id = incoming && SAFE_ID.test(incoming) ? incoming : randomUUID();
    const log = logger.child({ request_id: id });
    c.set('requestId', id);
    c.set('logger', log);
    setResponseHeader(c, 'X-Request-Id', id);
    const started = performance.now();
    await next();
    // the auth middleware may have bound org_id/key_id to the context logger (never the key itself)
    (c.get('logger') ?? log).info('request', {
      method: c.req.method,
      path: loggablePath(c.req.path),
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
    });
  };
}
