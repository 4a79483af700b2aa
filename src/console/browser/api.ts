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
  const headers: Record<string, string> = { accept: 'application/json' };
  const key = session.key();
  if (key) headers['X-API-Key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  const text = await res.text();
  let parsed: Json;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (!res.ok) {
    const retryAfter = Number(res.headers.get('retry-after')) || undefined;
    throw new ApiFailure(res.status, parsed?.code ?? 'HTTP_ERROR', parsed?.error ?? `${res.status} ${res.statusText}`, retryAfter);
  }
  return parsed;
}

/** The raw text of a 2xx answer (a proof bundle: its bytes are what the verifier hashes). */
export async function apiText(path: string): Promise<string> {
  const key = session.key();
  const res = await fetch(path, { headers: key ? { 'X-API-Key': key } : {}, cache: 'no-store' });
  const text = await res.text();
  if (!res.ok) throw new ApiFailure(res.status, 'HTTP_ERROR', text);
  return text;
}
