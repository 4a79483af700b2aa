/**
 * A POST whose body is optional, sent with `Content-Type: application/json` and no body at all, is a request without
 * a body, as it is on the POSTs that declare none (their body is never read). Without this the JSON validator would
 * parse the empty body and answer 400 "malformed JSON". A body that is present, even only whitespace, is still
 * parsed and checked as JSON.
 */
import type { MiddlewareHandler } from 'hono';

export const emptyBodyIsNoBody: MiddlewareHandler = async (c, next) => {
  const raw = c.req.raw;
  // c.req's body readers cache what they read (the Idempotency-Key middleware may have read the text already), where
  // the raw request's stream can be read once only
  if (raw.headers.get('content-type') !== null && (raw.body === null || (await c.req.arrayBuffer()).byteLength === 0)) {
    const headers = new Headers(raw.headers);
    headers.delete('content-type');
    headers.delete('content-length');
    c.req.raw = new Request(raw.url, { method: raw.method, headers, signal: raw.signal });
  }
  await next();
};
