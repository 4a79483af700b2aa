/**
 * One request to one validator: its answer, or what went wrong as a ValidatorOutcome (refused, failed, timed out).
 * Each attempt is signed anew with the gateway key (src/protocol/validator-auth.ts). The validator holds a request
 * for its poll bound at most: a 202 PENDING (work still under way) or a 503 BUSY (too many requests) is asked again
 * after the delay it names, until an answer comes or `timeoutMs` (the overall deadline) passes.
 */
import type { httpFetch } from '../../net/fetch.js';
import { type GatewayKey, signValidatorRequest } from '../../protocol/validator-auth.js';
import type { MemberRefusal } from '../../protocol/validator-wire.js';
import type { QuorumValidator, ValidatorOutcome } from './types.js';

export type PostResult<T> = { ok: true; data: T } | { ok: false; outcome: Omit<ValidatorOutcome, 'index' | 'url'> };

type Fetch = typeof fetch | typeof httpFetch;

const RESET_CODES = ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'];
/** the longest pause between two polls, whatever the validator asks */
const MAX_RETRY_PAUSE_MS = 2_000;
/** the shortest: a validator that answers PENDING at once (not holding the request) is not asked in a tight loop */
const MIN_RETRY_PAUSE_MS = 50;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The pause a 202 PENDING or a 503 BUSY asks for, or undefined when the answer is neither. */
function retryPause(status: number, data: Record<string, unknown> | null, retryAfter: string | null): number | undefined {
  if (status === 202 && data?.code === 'PENDING') return typeof data.retryAfterMs === 'number' ? data.retryAfterMs : 0;
  if (status === 503 && data?.code === 'BUSY') return retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : 1000;
  return undefined;
}

export async function postToValidator<T>(
  doFetch: Fetch,
  key: GatewayKey,
  v: QuorumValidator,
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<PostResult<T>> {
  const t0 = performance.now();
  const deadline = t0 + timeoutMs;
  const elapsedMs = () => Math.round(performance.now() - t0);
  const text = JSON.stringify(body);
  const url = `${v.url.replace(/\/$/, '')}${path}`;
  let resets = 0;
  let last: Omit<ValidatorOutcome, 'index' | 'url'> | undefined;
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) {
      const waited = last ? ` (last answer: ${last.code})` : '';
      return { ok: false, outcome: { status: 'timed-out', code: 'TIMEOUT', reason: `no answer within ${timeoutMs} ms${waited}`, elapsedMs: elapsedMs() } };
    }
    let res: Response;
    let raw: string;
    try {
      res = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signValidatorRequest(key, { method: 'POST', path, validatorIndex: v.index, body: text }) },
        body: text,
        signal: AbortSignal.timeout(Math.max(1, Math.ceil(left))),
      });
      raw = await res.text();
    } catch (e) {
      const err = e as Error & { cause?: { code?: string } };
      const timedOut = err.name === 'TimeoutError' || err.name === 'AbortError';
      // a keep-alive socket closed by the validator just as it was reused: once more, signed anew (a nonce is
      // never sent twice)
      if (!timedOut && RESET_CODES.includes(err.cause?.code ?? '') && resets++ < 1) continue;
      return {
        ok: false,
        outcome: {
          status: timedOut ? 'timed-out' : 'failed',
          code: timedOut ? 'TIMEOUT' : 'NETWORK',
          reason: timedOut ? `no answer within ${timeoutMs} ms` : `${err.message}${err.cause?.code ? ` (${err.cause.code})` : ''}`,
          elapsedMs: elapsedMs(),
        },
      };
    }
    let data: Record<string, unknown> | null;
    try {
      data = JSON.parse(raw);
    } catch {
      return { ok: false, outcome: { status: 'failed', code: `HTTP_${res.status}`, reason: `not JSON: ${raw.slice(0, 120)}`, elapsedMs: elapsedMs() } };
    }
    const pause = retryPause(res.status, data, res.headers.get('retry-after'));
    if (pause !== undefined) {
      last = { status: 'pending', code: String(data?.code) };
      await sleep(Math.min(Math.max(pause, MIN_RETRY_PAUSE_MS), MAX_RETRY_PAUSE_MS, Math.max(0, deadline - performance.now())));
      continue;
    }
    if (res.status === 422 && data?.ok === false) {
      const members = Array.isArray(data.members) ? { members: data.members as MemberRefusal[] } : {};
      return { ok: false, outcome: { status: 'refused', code: String(data.code), reason: String(data.reason), ...members, elapsedMs: elapsedMs() } };
    }
    if (!res.ok || data?.ok !== true) {
      return {
        ok: false,
        outcome: {
          status: 'failed',
          code: (data?.code as string | undefined) ?? `HTTP_${res.status}`,
          reason: String(data?.reason ?? `HTTP ${res.status}`),
          elapsedMs: elapsedMs(),
        },
      };
    }
    return { ok: true, data: data as T };
  }
}
