/**
 * Fixed-window request counters shared by every API process. A process leases a block of the window's requests at
 * once (one atomic upsert adds the block to the count) and hands them out from memory: see
 * src/api/middleware/rate-limit.ts for the bound this gives across processes.
 */
import { lt, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { preparedPerDb } from './prepared.js';
import { rateLimitCounters } from './schema.js';

const upsertLease = preparedPerDb((db) =>
  db
    .insert(rateLimitCounters)
    .values({ bucket: sql.placeholder('bucket'), windowStart: sql.placeholder('windowStart'), count: sql.placeholder('n') })
    .onConflictDoUpdate({
      target: [rateLimitCounters.bucket, rateLimitCounters.windowStart],
      set: { count: sql`${rateLimitCounters.count} + excluded.count` },
    })
    .returning({ count: rateLimitCounters.count })
    .prepare('lease_requests'),
);

/**
 * Lease `n` requests of `bucket`'s window starting at `windowStart` and return the count including them: the lease
 * is the requests numbered count − n + 1 … count. `INSERT … ON CONFLICT DO UPDATE SET count = count + n RETURNING
 * count` is atomic in Postgres, so concurrent leases from any number of processes get disjoint ranges.
 */
export async function leaseRequests(db: Db, bucket: string, windowStart: Date, n: number): Promise<number> {
  const [row] = await upsertLease(db).execute({ bucket, windowStart, n });
  return row!.count;
}

/** Delete the counters of windows that started before `cutoff`; returns how many went. */
export async function purgeRateLimitWindowsBefore(db: Db, cutoff: Date): Promise<number> {
  const gone = await db.delete(rateLimitCounters).where(lt(rateLimitCounters.windowStart, cutoff)).returning({ b: rateLimitCounters.bucket });
  return gone.length;
}
