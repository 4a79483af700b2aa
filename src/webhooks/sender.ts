/** One signed POST to a receiver: never throws; reports status, duration and what went wrong. */
import { signedHeaders } from './signing.js';

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** the first 1 kB of the answer */
  responseBody: string | null;
  /** from Retry-After on 429/503, in ms */
  retryAfterMs: number | null;
  /** the webhook-timestamp sent */
  timestamp: number;
}

export const USER_AGENT = 'proof-gateway-webhooks/1';

function parseRetryAfter(value: string | null): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e.message}: ${cause}` : (e?.message ?? String(err));
}

/** The first `limit` bytes of a response body as text; the rest is not read (a receiver may answer with a lot). */
async function head(res: Response, limit: number): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // a body cut short still tells something
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

export async function sendWebhook(opts: {
  url: string;
  msgId: string;
  body: string;
  secrets: string[];
  timeoutMs: number;
  now?: () => number;
}): Promise<SendResult> {
  const timestamp = Math.floor((opts.now?.() ?? Date.now()) / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    ...signedHeaders(opts.secrets, opts.msgId, timestamp, opts.body),
  };
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await fetch(opts.url, {
      method: 'POST',
      headers,
      body: opts.body,
      // 3xx is a failure (Standard Webhooks): the receiver must answer at the registered URL
      redirect: 'manual',
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    const text = await head(res, 1024);
    const ok = res.status >= 200 && res.status < 300;
    return {
      ok,
      statusCode: res.status,
      durationMs: elapsed(),
      error: ok ? null : `HTTP ${res.status}`,
      responseBody: text,
      retryAfterMs: res.status === 429 || res.status === 503 ? parseRetryAfter(res.headers.get('retry-after')) : null,
      timestamp,
    };
  } catch (err) {
    return { ok: false, statusCode: null, durationMs: elapsed(), error: describe(err, opts.timeoutMs), responseBody: null, retryAfterMs: null, timestamp };
  }
}
