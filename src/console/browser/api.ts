/**
 * The console's client of the public REST API: same origin, the API key from session storage in X-API-Key (the
 * API's own header). The key lives only in this tab's sessionStorage; it is never put in a URL or cookie.
 */
const KEY = 'pgw.console.api_key';

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  signIn: (key: string) => sessionStorage.setItem(KEY, key),
  signOut: () => sessionStorage.removeItem(KEY),
};

/** An API error answer: status and the body's code and message. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** seconds to wait before retrying (Retry-After of a 429 or 503), if the API said */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** A JSON answer of our API, read field by field by the pages (its shapes are the OpenAPI's). */
// biome-ignore lint/suspicious/noExplicitAny: the pages read answers' fields directly; a typed client would double the bundle
export type Json = any;

/** Calls the API; returns the parsed JSON body of a 2xx answer, throws ApiFailure for any other. */
export async function api(method: string, path: string, body?: unknown): Promise<Json> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await send(method, path, headers, body === undefined ? undefined : JSON.stringify(body));
  return parsed(res, await res.text());
}

/**
 * Follows a resource without polling: a GET naming the ETag of the answer the page holds (If-None-Match) with
 * `Prefer: wait=<waitS>`, which the API holds until the resource changes. The new body and its ETag, or `unchanged`
 * when the wait ended without a change (304; at once when waitS is 0). Without an ETag yet, a plain read.
 */
export async function follow(
  path: string,
  etag: string | undefined,
  waitS: number,
  signal?: AbortSignal,
): Promise<{ body: Json; etag?: string } | 'unchanged'> {
  const headers: Record<string, string> = etag ? { 'If-None-Match': etag, ...(waitS > 0 ? { Prefer: `wait=${waitS}` } : {}) } : {};
  const res = await send('GET', path, headers, undefined, signal);
  if (res.status === 304) return 'unchanged';
  return { body: parsed(res, await res.text()), etag: res.headers.get('etag') ?? undefined };
}

function send(method: string, path: string, extra: Record<string, string>, body?: string, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...extra };
  const key = session.key();
  if (key) headers['X-API-Key'] = key;
  return fetch(path, { method, headers, body, cache: 'no-store', signal });
}

/** The JSON of a 2xx answer; ApiFailure for any other. */
function parsed(res: Response, text: string): Json {
  let value: Json;
  try {
    value = text ? JSON.parse(text) : null;
  } catch {
    value = text;
  }
  if (!res.ok) {
    const retryAfter = Number(res.headers.get('retry-after')) || undefined;
    throw new ApiFailure(res.status, value?.code ?? 'HTTP_ERROR', value?.error ?? `${res.status} ${res.statusText}`, retryAfter);
  }
  return value;
}

/** The raw text of a 2xx answer (a proof bundle: its bytes are what the verifier hashes). */
export async function apiText(path: string): Promise<string> {
  const key = session.key();
  const res = await fetch(path, { headers: key ? { 'X-API-Key': key } : {}, cache: 'no-store' });
  const text = await res.text();
  if (!res.ok) throw new ApiFailure(res.status, 'HTTP_ERROR', text);
  return text;
}
