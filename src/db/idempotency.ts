/**
 * Idempotency-Key records, one per (organization, key). A record is claimed (`in_progress`) before the handler
 * runs and completed with the response afterwards; a claim that is never completed (a crashed process) can be
 * taken over once its lease has passed. Rows expire after the retention period (purged by maintenanceWorkflow).
 */
import { and, eq, lt } from 'drizzle-orm';
import type { Db } from './client.js';
import { idempotencyKeys } from './schema.js';

export type IdempotencyRecord = typeof idempotencyKeys.$inferSelect;

/** What a replay gives back: the stored body and the allow-listed response headers. */
export interface StoredResponse {
  body: unknown;
  headers: Record<string, string>;
}

/**
 * response_body holds `{ [ENVELOPE]: 1, body, headers }`, so headers need no column of their own. Rows written
 * before the envelope hold the bare body; they replay without headers.
 */
const ENVELOPE = '__idempotency_stored_response';

export function storedResponse(rec: IdempotencyRecord): StoredResponse {
  const raw = rec.responseBody as unknown;
  if (raw && typeof raw === 'object' && !Array.isArray(raw) && (raw as Record<string, unknown>)[ENVELOPE] === 1) {
    const env = raw as { body?: unknown; headers?: Record<string, string> };
    return { body: env.body ?? null, headers: env.headers ?? {} };
  }
  return { body: raw ?? null, headers: {} };
}

export interface ClaimInput {
  orgId: string;
  key: string;
  method: string;
  path: string;
  requestHash: string;
  now: Date;
  expiresAt: Date;
}

/** Insert an in-progress record; true when this caller now owns the key. */
export async function claimIdempotencyKey(db: Db, c: ClaimInput): Promise<boolean> {
  const rows = await db
    .insert(idempotencyKeys)
    .values({
      orgId: c.orgId,
      key: c.key,
      method: c.method,
      path: c.path,
      requestHash: c.requestHash,
      state: 'in_progress',
      createdAt: c.now,
      expiresAt: c.expiresAt,
    })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  return rows.length === 1;
}

export async function getIdempotencyRecord(db: Db, orgId: string, key: string): Promise<IdempotencyRecord | undefined> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.orgId, orgId), eq(idempotencyKeys.key, key)));
  return row;
}

/**
 * Take over a record whose owner is presumed dead (in progress since before `staleBefore`) or that has expired.
 * Atomic: of several callers at most one gets true.
 */
export async function takeOverIdempotencyKey(db: Db, c: ClaimInput, previousCreatedAt: Date): Promise<boolean> {
  const rows = await db
    .update(idempotencyKeys)
    .set({
      method: c.method,
      path: c.path,
      requestHash: c.requestHash,
      state: 'in_progress',
      responseStatus: null,
      responseBody: null,
      createdAt: c.now,
      expiresAt: c.expiresAt,
    })
    .where(and(eq(idempotencyKeys.orgId, c.orgId), eq(idempotencyKeys.key, c.key), eq(idempotencyKeys.createdAt, previousCreatedAt)))
    .returning({ key: idempotencyKeys.key });
  return rows.length === 1;
}

export async function completeIdempotencyKey(db: Db, orgId: string, key: string, createdAt: Date, status: number, response: StoredResponse): Promise<void> {
  const envelope = { [ENVELOPE]: 1, body: response.body, headers: response.headers };
  await db
    .update(idempotencyKeys)
    .set({ state: 'completed', responseStatus: status, responseBody: envelope })
    .where(ownClaim(orgId, key, createdAt));
}

/** The in-progress claim this request made (its creation time tells it apart from a later claim of the same key). */
function ownClaim(orgId: string, key: string, createdAt: Date) {
  return and(
    eq(idempotencyKeys.orgId, orgId),
    eq(idempotencyKeys.key, key),
    eq(idempotencyKeys.state, 'in_progress'),
    eq(idempotencyKeys.createdAt, createdAt),
  );
}

/** Forget an in-progress claim (the response is not stored, e.g. a 5xx): the key can be used again. */
export async function releaseIdempotencyKey(db: Db, orgId: string, key: string, createdAt: Date): Promise<void> {
  await db.delete(idempotencyKeys).where(ownClaim(orgId, key, createdAt));
}

/** Delete the records past their retention; returns how many went. */
export async function purgeExpiredIdempotencyKeys(db: Db, now: Date): Promise<number> {
  const gone = await db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now)).returning({ k: idempotencyKeys.key });
  return gone.length;
}
