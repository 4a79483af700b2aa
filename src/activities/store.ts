/** Activities over our own database. Factories close over their dependencies (DESIGN.md §2). */
import { lt } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { idempotencyKeys, rateLimitCounters } from '../db/schema.js';

export interface PurgeResult {
  idempotencyKeys: number;
  rateLimitWindows: number;
}

export function createStoreActivities(db: Db) {
  return {
    /**
     * Delete idempotency records past their 24-hour retention and rate-limit windows that have closed.
     * Both deletes are naturally idempotent, so a retry after a crash is harmless.
     */
    async purgeExpired(nowIso?: string): Promise<PurgeResult> {
      const now = nowIso ? new Date(nowIso) : new Date();
      const keys = await db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now)).returning({ k: idempotencyKeys.key });
      // A window is at most a minute long; anything that started over two minutes ago is closed.
      const cutoff = new Date(now.getTime() - 120_000);
      const windows = await db
        .delete(rateLimitCounters)
        .where(lt(rateLimitCounters.windowStart, cutoff))
        .returning({ b: rateLimitCounters.bucket });
      return { idempotencyKeys: keys.length, rateLimitWindows: windows.length };
    },
  };
}
export type StoreActivities = ReturnType<typeof createStoreActivities>;
