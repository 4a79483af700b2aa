/** Fixed-window request counters shared by every API process: one atomic upsert per request. */
import { lt, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { preparedPerDb } from './prepared.js';
import { rateLimitCounters } from './schema.js';

const upsertCount = preparedPerDb((db) =>
  db
    .insert(rateLimitCounters)
    .values({ bucket: sql.placeholder('bucket'), windowStart: sql.placeholder('windowStart'), count: 1 })
    .onConflictDoUpdate({
      target: [rateLimitCounters.bucket, rateLimitCounters.windowStart],
      set: { count: sql`${rateLimitCounters.count} + 1` },
    })
    .returning({ count: rateLimitCounters.count })
    .prepare('count_request'),
);

/**
 * Count one request in `bucket` for the window starting at `windowStart` and return the count including it.
 * `INSERT … ON CONFLICT DO UPDATE SET count = count + 1 RETURNING count` is atomic in Postgres, so concurrent
 * requests from any number of processes each see a distinct count and together never exceed the limit.
 */
export async function countRequest(db: Db, bucket: string, windowStart: Date): Promise<number> {
  const [row] = await upsertCount(db).execute({ bucket, windowStart });
  return row!.count;
}

/** Delete the counters of windows that started before `cutoff`; returns how many went. */
export async function purgeRateLimitWindowsBefore(db: Db, cutoff: Date): Promise<number> {
  const gone = await db.delete(rateLimitCounters).where(lt(rateLimitCounters.windowStart, cutoff)).returning({ b: rateLimitCounters.bucket });
  return gone.length;
}
