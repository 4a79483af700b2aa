/**
 * The gateway's outbound HTTP for JSON-RPC (chains, ledger) and validator rounds.
 *
 * `httpFetch` answers like fetch for what these callers use (status, headers, text/json, an AbortSignal) but is
 * built on undici's `request`: Node 20's fetch wraps every request and response in WHATWG streams and costs
 * about 3 × the CPU per request (`npx tsx bench/http-client.ts`), and a proof cycle makes a few hundred of them
 * across the worker and the validators. Differences from fetch, none of which these callers rely on: the body is
 * read at once (at most `MAX_BODY_BYTES`, so `body` is null and `text()` can be called again), and redirects are
 * not followed (a 3xx answers as itself). Failures look like fetch's: a network error is a TypeError "fetch
 * failed" with the socket error as `cause`, an aborted request rejects with the signal's reason (TimeoutError for
 * `AbortSignal.timeout`).
 */
import { Agent, request } from 'undici';

/** The largest answer read (viem's own default limit for an RPC answer). */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** keep-alive connections shared by every caller in the process */
const dispatcher = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 30_000 });

export interface HttpRequestInit {
  method?: string;
  headers?: Record<string, string> | Headers | [string, string][];
  body?: string | Uint8Array | null;
  signal?: AbortSignal | null;
}

function headerRecord(h: HttpRequestInit['headers']): Record<string, string> | undefined {
  if (!h) return undefined;
  if (Array.isArray(h)) return Object.fromEntries(h);
  if (h instanceof Headers) {
    const out: Record<string, string> = {};
    h.forEach((v, k) => {
      out[k] = v;
    });
    return out;
  }
  return h;
}

function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) h.append(k, one);
  }
  return h;
}

async function readBody(body: AsyncIterable<Buffer>, limit: number, url: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) throw new Error(`${url}: answer larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

export async function httpFetch(input: string | URL, init: HttpRequestInit = {}): Promise<Response> {
  const signal = init.signal ?? undefined;
  const url = String(input);
  if (signal?.aborted) throw signal.reason;
  let status: number;
  let headers: Headers;
  let text: string;
  try {
    const res = await request(url, {
      method: (init.method ?? 'GET') as 'GET',
      headers: headerRecord(init.headers),
      body: init.body ?? undefined,
      signal,
      dispatcher,
    });
    status = res.statusCode;
    headers = responseHeaders(res.headers);
    text = await readBody(res.body, MAX_BODY_BYTES, url);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw new TypeError('fetch failed', { cause: err });
  }
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: '',
    headers,
    url,
    redirected: false,
    type: 'basic',
    body: null,
    bodyUsed: false,
    text: async () => text,
    json: async () => JSON.parse(text),
  } as unknown as Response;
}

/**
 * httpFetch that retries a request once when the connection was reset before an answer arrived (a keep-alive
 * socket closed by the server just as it was reused). Only for requests that are safe to repeat: ledger calls
 * (queries are reads; resubmitting an identical envelope is idempotent on the ledger) and validator rounds (a
 * validator answers the same request with the same signature).
 */
export async function resetTolerantFetch(input: string, init: HttpRequestInit = {}): Promise<Response> {
  try {
    return await httpFetch(input, init);
  } catch (e) {
    const code = ((e as { cause?: { code?: string } }).cause?.code ?? '') as string;
    if (!['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(code) || init.signal?.aborted) throw e;
    return httpFetch(input, init);
  }
}
