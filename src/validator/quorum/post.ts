/** One request to one validator: its answer, or what went wrong as a ValidatorOutcome (refused, failed, timed out). */
import type { resetTolerantFetch } from '../../net/fetch.js';
import type { QuorumValidator, ValidatorOutcome } from './types.js';

export type PostResult<T> = { ok: true; data: T } | { ok: false; outcome: Omit<ValidatorOutcome, 'index' | 'url'> };

export async function postToValidator<T>(
  doFetch: typeof fetch | typeof resetTolerantFetch,
  v: QuorumValidator,
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<PostResult<T>> {
  const t0 = performance.now();
  try {
    const res = await doFetch(`${v.url.replace(/\/$/, '')}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let data: Record<string, unknown> | null;
    try {
      data = JSON.parse(text);
    } catch {
      return {
        ok: false,
        outcome: { status: 'failed', code: `HTTP_${res.status}`, reason: `not JSON: ${text.slice(0, 120)}`, elapsedMs: Math.round(performance.now() - t0) },
      };
    }
    if (res.status === 422 && data?.ok === false) {
      return { ok: false, outcome: { status: 'refused', code: String(data.code), reason: String(data.reason), elapsedMs: Math.round(performance.now() - t0) } };
    }
    if (!res.ok || data?.ok !== true) {
      return {
        ok: false,
        outcome: {
          status: 'failed',
          code: (data?.code as string | undefined) ?? `HTTP_${res.status}`,
          reason: String(data?.reason ?? `HTTP ${res.status}`),
          elapsedMs: Math.round(performance.now() - t0),
        },
      };
    }
    return { ok: true, data: data as T };
  } catch (e) {
    const err = e as Error;
    const timedOut = err.name === 'TimeoutError' || err.name === 'AbortError';
    return {
      ok: false,
      outcome: {
        status: timedOut ? 'timed-out' : 'failed',
        code: timedOut ? 'TIMEOUT' : 'NETWORK',
        reason: timedOut
          ? `no answer within ${timeoutMs} ms`
          : `${err.message}${(err as { cause?: { code?: string } }).cause?.code ? ` (${(err as { cause?: { code?: string } }).cause!.code})` : ''}`,
        elapsedMs: Math.round(performance.now() - t0),
      },
    };
  }
}
