/**
 * Per-key (else per-client-IP) fixed one-minute windows counted in Postgres (src/db/rate-limits.ts), so every API
 * process shares one limit. Every response carries X-RateLimit-Limit, X-RateLimit-Remaining and
 * X-RateLimit-Reset (a Unix timestamp); a request over the limit gets 429 RATE_LIMIT_EXCEEDED with
 * Retry-After.
 */
import type { Context } from 'hono';
import type { Db } from '../../db/client.js';
import { countRequest } from '../../db/rate-limits.js';
import type { AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';

export const WINDOW_MS = 60_000;

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

/**
 * Fails open: when the counter cannot be written (database down) the request is let through, with headers
 * showing the full limit, and `onError` is told — health checks must still answer 503 rather than 500.
 */
export function createRateLimiter(db: Db, now: () => number = Date.now, onError: (err: unknown) => void = () => {}): RateLimiter {
  return async (bucket, limit) => {
    const t = now();
    const start = Math.floor(t / WINDOW_MS) * WINDOW_MS;
    let count = 0;
    try {
      count = await countRequest(db, bucket, new Date(start));
    } catch (err) {
      onError(err);
    }
    const resetMs = start + WINDOW_MS;
    return {
      limit,
      remaining: Math.max(0, limit - count),
      reset: Math.floor(resetMs / 1000),
      retryAfter: Math.max(1, Math.ceil((resetMs - t) / 1000)),
      exceeded: count > limit,
    };
  };
}

/** Apply a counted request to the response: headers always, and throw the 429 when over the limit. */
export function enforceRateLimit(c: Context<AppEnv>, s: RateLimitState): void {
  const headers = rateLimitHeaders(s);
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  if (s.exceeded) {
    throw new ApiError(429, 'RATE_LIMIT_EXCEEDED', 'Rate limit exceeded', undefined, {
      ...headers,
      'Retry-After': String(s.retryAfter),
    });
  }
}
