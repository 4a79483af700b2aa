/**
 * Request bodies up to `maxBytes`; anything larger is a 413 PAYLOAD_TOO_LARGE before any route reads it.
 * A declared Content-Length is checked at once; a body without one (chunked) is read with a running count and
 * buffered (at most maxBytes), so later readers (idempotency fingerprint, zod validator) see the same bytes.
 *
 * A 413 ends its connection: the rest of the body is still on the wire, so the connection cannot carry another
 * request. The answer says `Connection: close` (Node's server then ends the socket after it, and a pooled client
 * opens a new one for its next request instead of reusing one that is about to go), and before answering, the
 * rest of the body is read and discarded within DRAIN (src/net/limited-body.ts), so closing a socket with unread bytes
 * does not reset the connection under the answer before the client has read it.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { type DrainBudget, readLimitedBody } from '../../net/limited-body.js';

/** How much of an oversized body is read (and discarded) before the 413 is sent, and for how long at most. */
export const DRAIN: DrainBudget = { bytes: 64 << 20, ms: 2_000 };

export function bodyLimit(maxBytes: number): MiddlewareHandler<AppEnv> {
  const tooLarge = () =>
    new ApiError(413, 'PAYLOAD_TOO_LARGE', `Request body larger than ${maxBytes >= 1 << 20 ? `${maxBytes / (1 << 20)} MiB` : `${maxBytes} bytes`}`, undefined, {
      Connection: 'close',
    });
  const limited: MiddlewareHandler<AppEnv> = async (c, next) => {
    const raw = c.req.raw;
    // a declared size within the limit streams on to the route untouched; asked first, because asking for the
    // body builds the whole fetch Request, and then the route reads the body through a web stream instead of
    // straight from the socket (@hono/node-server's fast path)
    const declared = raw.headers.get('content-length');
    if (declared !== null && Number(declared) <= maxBytes) return next();
    if (!raw.body) return next();
    const body = await readLimitedBody(raw, maxBytes, DRAIN);
    if (!body) throw tooLarge();
    c.req.raw = new Request(raw, { body });
    await next();
  };
  // a GET or HEAD carries no body (fetch's Request has none), and asking would build the whole Request object: it
  // passes straight on, without a promise of its own
  return (c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limited(c, next));
}
