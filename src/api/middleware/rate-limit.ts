/**
 * Per-key (else per-client-IP) fixed one-minute windows counted in Postgres (src/db/rate-limits.ts), so every API
 * process shares one limit. Every response carries X-RateLimit-Limit, X-RateLimit-Remaining and
 * X-RateLimit-Reset (a Unix timestamp); a request over the limit gets 429 RATE_LIMIT_EXCEEDED with
 * Retry-After.
 *
 * Leases. A process does not write the counter for every request: it leases a block of the window's requests (one
 * atomic upsert adds the block to the shared count; the block is the requests numbered count − block + 1 … count)
 * and numbers its requests from that block in memory. Only numbers up to the limit are handed out, and the upsert
 * gives every lease a disjoint range, so:
 *   - the limit is never exceeded, whatever the number of processes (each admitted request holds a distinct number
 *     ≤ limit);
 *   - a request may be refused early while other processes still hold unused numbers of their blocks: with N
 *     processes and blocks of at most B, at most (N − 1) × (B − 1) requests of a window are refused below the limit
 *     (a process leases only when a request needs a number and uses the block's first one at once). With one
 *     process, or when every process keeps receiving requests until the limit, the count is exact.
 * The block starts at 1 in each window and doubles with each lease, up to `maxBlock(limit)` = limit / 32 (at least
 * 1, at most 1,000): a key with the default 60/min is counted request by request as before, a busy key costs one
 * write per up to 1,000 requests, and the early refusals stay under 1/32 of the limit per other process.
 */
import type { Context } from 'hono';
import type { Db } from '../../db/client.js';
import { leaseRequests } from '../../db/rate-limits.js';
import type { AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { setResponseHeader } from '../response-headers.js';

export const WINDOW_MS = 60_000;
/** the largest block is 1/BLOCK_FRACTION of the limit… */
export const BLOCK_FRACTION = 32;
/** …and at most this many requests */
export const MAX_BLOCK = 1000;
/** buckets held in memory at most (per-IP buckets grow with the clients); beyond it the held blocks are dropped */
const MAX_BUCKETS = 50_000;

export function maxBlock(limit: number): number {
  return Math.max(1, Math.min(MAX_BLOCK, Math.floor(limit / BLOCK_FRACTION)));
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds at which the window ends */
  reset: number;
  /** seconds until reset, at least 1 */
  retryAfter: number;
  exceeded: boolean;
}

export function rateLimitHeaders(s: RateLimitState): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(s.limit),
    'X-RateLimit-Remaining': String(s.remaining),
    'X-RateLimit-Reset': String(s.reset),
  };
}

export type RateLimiter = (bucket: string, limit: number) => Promise<RateLimitState>;

/** A bucket's numbers held by this process for one window. */
interface Lease {
  window: number;
  /** the next number to hand out, and the last one held (next > last: none held) */
  next: number;
  last: number;
  /** the shared count has reached the limit: no further lease can yield a number this window */
  exhausted: boolean;
  /** the size of the last block leased (0: none yet) */
  block: number;
  /** the lease in flight: resolves false when the counter could not be written */
  pending?: Promise<boolean>;
}

/**
 * Fails open: when the counter cannot be written (database down) the request is let through, with headers
 * showing the full limit, and `onError` is told — health checks must still answer 503 rather than 500.
 */
export function createRateLimiter(db: Db, now: () => number = Date.now, onError: (err: unknown) => void = () => {}): RateLimiter {
  const leases = new Map<string, Lease>();
  let sweptWindow = 0;

  const lease = async (bucket: string, limit: number, s: Lease): Promise<boolean> => {
    const block = s.block === 0 ? 1 : Math.min(s.block * 2, maxBlock(limit));
    s.block = block;
    try {
      const count = await leaseRequests(db, bucket, new Date(s.window), block);
      const first = count - block + 1;
      if (first <= limit) {
        s.next = first;
        s.last = Math.min(count, limit);
      }
      if (count >= limit) s.exhausted = true;
      return true;
    } catch (err) {
      onError(err);
      return false;
    }
  };

  /** the number this request holds in the window (limit + 1: over), or 0 when the counter is unavailable */
  const take = async (bucket: string, limit: number, window: number): Promise<number> => {
    if (window !== sweptWindow || leases.size > MAX_BUCKETS) {
      for (const [b, s] of leases) if (s.window !== window || leases.size > MAX_BUCKETS) leases.delete(b);
      sweptWindow = window;
    }
    let s = leases.get(bucket);
    if (!s || s.window !== window) {
      s = { window, next: 1, last: 0, exhausted: false, block: 0 };
      leases.set(bucket, s);
    }
    for (;;) {
      if (s.next <= s.last) return s.next++;
      if (s.exhausted) return limit + 1;
      let ok: boolean;
      if (s.pending) ok = await s.pending;
      else {
        const held = s;
        held.pending = lease(bucket, limit, held).finally(() => (held.pending = undefined));
        ok = await held.pending;
      }
      if (!ok) return 0;
    }
  };

  return async (bucket, limit) => {
    const t = now();
    const start = Math.floor(t / WINDOW_MS) * WINDOW_MS;
    const n = await take(bucket, limit, start);
    const resetMs = start + WINDOW_MS;
    return {
      limit,
      remaining: n === 0 ? limit : Math.max(0, limit - n),
      reset: Math.floor(resetMs / 1000),
      retryAfter: Math.max(1, Math.ceil((resetMs - t) / 1000)),
      exceeded: n > limit,
    };
  };
}

/** Apply a counted request to the response: headers always, and throw the 429 when over the limit. */
export function enforceRateLimit(c: Context<AppEnv>, s: RateLimitState): void {
  const headers = rateLimitHeaders(s);
  for (const [k, v] of Object.entries(headers)) setResponseHeader(c, k, v);
  if (s.exceeded) {
    throw new ApiError(429, 'RATE_LIMIT_EXCEEDED', 'Rate limit exceeded', undefined, {
      ...headers,
      'Retry-After': String(s.retryAfter),
    });
  }
}
