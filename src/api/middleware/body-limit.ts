/**
 * Request bodies up to `maxBytes`; anything larger is a 413 PAYLOAD_TOO_LARGE before any route reads it.
 * A declared Content-Length is checked at once; a body without one (chunked) is read with a running count and
 * buffered (at most maxBytes), so later readers (idempotency fingerprint, zod validator) see the same bytes.
 *
 * A 413 ends its connection: the rest of the body is still on the wire, so the connection cannot carry another
 * request. The answer says `Connection: close` (Node's server then ends the socket after it, and a pooled client
 * opens a new one for its next request instead of reusing one that is about to go), and before answering, the
 * rest of the body is read and discarded, up to DRAIN_BYTES or DRAIN_MS, so closing a socket with unread bytes
 * does not reset the connection under the answer before the client has read it.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';

/** The most of an oversized body read (and discarded) before the 413 is sent. */
export const DRAIN_BYTES = 64 << 20;
/** How long an oversized body is read before the 413 is sent anyway. */
export const DRAIN_MS = 2_000;

type Reader = ReadableStreamDefaultReader<Uint8Array>;

/** Read and discard what is left of a body, within the byte and time budget; then let it go. */
async function discardRest(reader: Reader, alreadyRead: number): Promise<void> {
  let read = alreadyRead;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), DRAIN_MS);
  });
  try {
    while (read <= DRAIN_BYTES) {
      const r = await Promise.race([reader.read(), timeout]);
      if (r === 'timeout' || r.done) break;
      read += r.value.byteLength;
    }
  } catch {
    // the client went away: nothing left to answer
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
}

export function bodyLimit(maxBytes: number): MiddlewareHandler<AppEnv> {
  const tooLarge = () =>
    new ApiError(413, 'PAYLOAD_TOO_LARGE', `Request body larger than ${maxBytes >= 1 << 20 ? `${maxBytes / (1 << 20)} MiB` : `${maxBytes} bytes`}`, undefined, {
      Connection: 'close',
    });
  return async (c, next) => {
    const raw = c.req.raw;
    if (!raw.body) return next();
    const declared = raw.headers.get('content-length');
    if (declared !== null) {
      if (Number(declared) > maxBytes) {
        if (Number(declared) <= DRAIN_BYTES) await discardRest(raw.body.getReader(), 0);
        throw tooLarge();
      }
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
        await discardRest(reader, size);
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
