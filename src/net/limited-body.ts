/**
 * Reading a request body with a size limit, shared by the API and the validators' HTTP API.
 *
 * A body larger than the limit ends its connection: the rest of it is still on the wire, so the connection cannot
 * carry another request, and the answer (a 413) says `Connection: close`. Before that answer the rest of the body is
 * read and discarded within a budget (bytes and time), because closing a socket with unread bytes resets the
 * connection, which could reach the client before it has read the 413.
 */

/** How much of an oversized body is read and discarded before the answer, and for how long at most. */
export interface DrainBudget {
  bytes: number;
  ms: number;
}

/** Read and discard what is left of a body, within the budget; then let it go. */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, alreadyRead: number, budget: DrainBudget): Promise<void> {
  let read = alreadyRead;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), budget.ms);
  });
  try {
    while (read <= budget.bytes) {
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

/**
 * The body's bytes, or undefined when it declares or turns out to be larger than `max` (its rest then drained within
 * `budget`). A body without Content-Length (chunked) is read with a running count, never more than `max` kept.
 */
export async function readLimitedBody(req: Request, max: number, budget: DrainBudget): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const declared = req.headers.get('content-length');
  const stream = req.body;
  if (declared !== null && Number(declared) > max) {
    if (stream && Number(declared) <= budget.bytes) await discardRest(stream.getReader(), 0, budget);
    return undefined;
  }
  if (!stream) return new Uint8Array();
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await discardRest(reader, size, budget);
      return undefined;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const ch of chunks) {
    body.set(ch, offset);
    offset += ch.byteLength;
  }
  return body;
}
