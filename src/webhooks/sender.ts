/**
 * One signed POST to a receiver: never throws; reports status, duration and what went wrong. The URL rules are
 * applied here, on the connection itself: the host name is resolved by `guardedLookup`, which refuses private
 * addresses (unless allowed) and hands the socket the very addresses it judged. Nothing is sent, and no response
 * body is read, from a connection that did not pass.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { signedHeaders } from './signing.js';
import { checkWebhookUrl, guardedLookup, privateAddressAllowed, UrlRejected, type PrivateUrls, type Resolver } from './url.js';

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
  if (e instanceof UrlRejected) return `not sent: ${e.message}`;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e.message}: ${cause}` : (e?.message ?? String(err));
}

/** The first `limit` bytes of a response body as text; the rest is not read (a receiver may answer with a lot). */
async function head(res: http.IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) break;
    }
  } catch {
    // a body cut short still tells something
  } finally {
    res.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/** POST over a fresh connection whose address came from `lookup`; resolves with the response head. */
function post(url: URL, headers: Record<string, string>, body: string, lookup: ReturnType<typeof guardedLookup>, signal: AbortSignal) {
  return new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup,
      // no pooled sockets: every attempt connects (and is checked) anew
      agent: false,
      signal,
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end(body);
  });
}

export async function sendWebhook(opts: {
  url: string;
  msgId: string;
  body: string;
  secrets: string[];
  timeoutMs: number;
  /** loopback and private receiver addresses are allowed (WEBHOOK_ALLOW_PRIVATE_URLS) */
  allowPrivate: PrivateUrls;
  /** name resolution (default: the system resolver), with `dnsTimeoutMs` as its deadline */
  resolve?: Resolver;
  dnsTimeoutMs?: number;
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
    // the static rules (scheme, credentials, loopback names); the addresses are judged at connect time below
    const url = await checkWebhookUrl(opts.url, { allowPrivate: opts.allowPrivate, dns: false });
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    // an IP literal is not looked up: judge it here (it cannot change between this check and the connection)
    if (isIP(literal) && !privateAddressAllowed(literal, opts.allowPrivate)) {
      throw new UrlRejected('url must not point to a loopback or private address');
    }
    const lookup = guardedLookup({ allowPrivate: opts.allowPrivate, resolve: opts.resolve, timeoutMs: opts.dnsTimeoutMs });
    const res = await post(url, headers, opts.body, lookup, AbortSignal.timeout(opts.timeoutMs));
    const status = res.statusCode ?? 0;
    const text = await head(res, 1024);
    const ok = status >= 200 && status < 300;
    const retryAfter = res.headers['retry-after'];
    return {
      ok,
      statusCode: status,
      durationMs: elapsed(),
      // 3xx is a failure (Standard Webhooks): the receiver must answer at the registered URL; redirects are not followed
      error: ok ? null : `HTTP ${status}`,
      responseBody: text,
      retryAfterMs: status === 429 || status === 503 ? parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : null) : null,
      timestamp,
    };
  } catch (err) {
    return { ok: false, statusCode: null, durationMs: elapsed(), error: describe(err, opts.timeoutMs), responseBody: null, retryAfterMs: null, timestamp };
  }
}
