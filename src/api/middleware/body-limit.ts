/**
 * Request bodies up to `maxBytes`; anything larger is a 413 PAYLOAD_TOO_LARGE before any route reads it.
 * A declared Content-Length is checked at once; a body without one (chunked) is read with a running count and
 * buffered (at most maxBytes), so later readers (idempotency fingerprint, zod validator) see the same bytes.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';

export function bodyLimit(maxBytes: number): MiddlewareHandler<AppEnv> {
  const tooLarge = () =>
    new ApiError(413, 'PAYLOAD_TOO_LARGE', `Request body larger than ${maxBytes >= 1 << 20 ? `${maxBytes / (1 << 20)} MiB` : `${maxBytes} bytes`}`);
  return async (c, next) => {
    const raw = c.req.raw;
    if (!raw.body) return next();
    const declared = raw.headers.get('content-length');
    if (declared !== null) {
      if (Number(declared) > maxBytes) throw tooLarge();
      return next();
    }
    const reader = raw.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
    const body = new Uint8Array(size);
    let offset = 0;
    for (const ch of chunks) {
      body.set(ch, offset);
      offset += ch.byteLength;
    }
    c.req.raw = new Request(raw, { body });
    await next();
  };
}
