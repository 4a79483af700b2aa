/**
 * Webhook queries, per aggregate: endpoints (registration, verification, rotation, failure streaks), deliveries
 * (the log, the fan-out of events, the attempts' bookkeeping) and the retention purge. The API routes and the
 * webhook activities call these; the decisions (what to set, when to disable) stay with them.
 */
import { and, asc, count, desc, eq, inArray, isNotNull, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from './client.js';
import type { DbOrTx } from './events.js';
import { ADVISORY_LOCKS } from './locks.js';
import { olderThan, type RowPage } from './pagination.js';
import { events, organizations, webhookAttempts, webhookDeliveries, webhookEndpoints } from './schema.js';

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;
export type EventRow = typeof events.$inferSelect;

/** Rows affected, from either driver's result shape. */
function rowCount(result: unknown): number {
  if (Array.isArray(result)) return result.length;
  const r = result as { rows?: unknown[]; affectedRows?: number };
  return r.rows?.length ?? r.affectedRows ?? 0;
}

// ------------------------------------------------------------------------------------------------ endpoints

/** An endpoint of the organization that is not deleted. */
export async function getOrgEndpoint(db: Db, orgId: string, id: string): Promise<EndpointRow | undefined> {
  const [row] = await db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, orgId), isNull(webhookEndpoints.deletedAt)));
  return row;
}

/** Any endpoint by id, deleted ones too. */
export async function getEndpoint(db: Db, id: string): Promise<EndpointRow | undefined> {
  const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  return row;
}

/**
 * A page of the organization's endpoints that are not deleted, newest first (`page.limit` rows from `page.offset` or
 * after `page.after`), and how many there are.
 */
export async function listOrgEndpoints(db: Db, orgId: string, page: RowPage): Promise<{ rows: EndpointRow[]; total: number }> {
  const where = and(eq(webhookEndpoints.orgId, orgId), isNull(webhookEndpoints.deletedAt));
  const [rows, [counted]] = await Promise.all([
    db
      .select()
      .from(webhookEndpoints)
      .where(page.after ? and(where, olderThan(webhookEndpoints.createdAt, webhookEndpoints.id, page.after)) : where)
      .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id))
      .limit(page.limit)
      .offset(page.offset ?? 0),
    db.select({ n: count() }).from(webhookEndpoints).where(where),
  ]);
  return { rows, total: Number(counted?.n ?? 0) };
}

export interface NewEndpoint {
  orgId: string;
  url: string;
  description: string | null;
  eventTypes: string[] | null;
  secret: string;
}

/**
 * Insert an endpoint unless the organization already has `max` (not deleted); undefined then, and nothing written.
 * The organization's row lock serialises its concurrent creates, so the cap holds exactly.
 */
export async function insertEndpointUnderCap(db: Db, e: NewEndpoint, max: number): Promise<EndpointRow | undefined> {
  return db.transaction(async (tx) => {
    await tx.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, e.orgId)).for('update');
    const [{ n }] = await tx
      .select({ n: count() })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.orgId, e.orgId), isNull(webhookEndpoints.deletedAt)));
    if (n >= max) return undefined;
    const [inserted] = await tx.insert(webhookEndpoints).values(e).returning();
    return inserted;
  });
}

export type EndpointChanges = Partial<typeof webhookEndpoints.$inferInsert>;

/** Set `changes` on the endpoint; the updated row. */
export async function updateEndpoint(db: Db, id: string, changes: EndpointChanges): Promise<EndpointRow> {
  const [row] = await db.update(webhookEndpoints).set(changes).where(eq(webhookEndpoints.id, id)).returning();
  return row;
}

/** Soft delete: the endpoint stops receiving; its delivery log stays. */
export async function deleteEndpoint(db: Db, current: Pick<EndpointRow, 'id' | 'disabledAt'>, now: Date): Promise<void> {
  await db
    .update(webhookEndpoints)
    .set({ deletedAt: now, isActive: false, disabledAt: current.disabledAt ?? now, updatedAt: now })
    .where(eq(webhookEndpoints.id, current.id));
}

/**
 * Replace the secret, conditional on the one read (`expectedSecret`): of two concurrent rotations one wins.
 * False when the secret had changed meanwhile (nothing written).
 */
export async function rotateEndpointSecret(
  db: Db,
  id: string,
  expectedSecret: string,
  changes: Pick<EndpointChanges, 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'previousSecrets' | 'secretRotatedAt' | 'updatedAt'>,
): Promise<boolean> {
  const updated = await db
    .update(webhookEndpoints)
    .set(changes)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.secret, expectedSecret)))
    .returning({ id: webhookEndpoints.id });
  return updated.length > 0;
}

/** A success resets the endpoint's failing streak. */
export async function recordEndpointSuccess(tx: DbOrTx, endpointId: string, at: Date): Promise<void> {
  await tx.update(webhookEndpoints).set({ consecutiveFailures: 0, failingSince: null, lastSuccessAt: at }).where(eq(webhookEndpoints.id, endpointId));
}

/**
 * Count a failure in the endpoint's streak. A failure more than `streakGapMs` after the previous one starts a new
 * streak: an old failing_since left behind by one failure and then silence must not disable a healthy endpoint on
 * its next transient failure. Returns the streak as it stands.
 */
export async function recordEndpointFailure(
  tx: DbOrTx,
  endpointId: string,
  at: Date,
  streakGapMs: number,
): Promise<{ failingSince: Date | null; consecutiveFailures: number }> {
  const atSql = sql`${at.toISOString()}::timestamptz`;
  const staleBefore = sql`${new Date(at.getTime() - streakGapMs).toISOString()}::timestamptz`;
  const newStreak = sql`(${webhookEndpoints.failingSince} is null or ${webhookEndpoints.lastFailureAt} is null or ${webhookEndpoints.lastFailureAt} < ${staleBefore})`;
  const [ep] = await tx
    .update(webhookEndpoints)
    .set({
      consecutiveFailures: sql`case when ${newStreak} then 1 else ${webhookEndpoints.consecutiveFailures} + 1 end`,
      failingSince: sql`case when ${newStreak} then ${atSql} else ${webhookEndpoints.failingSince} end`,
      lastFailureAt: at,
    })
    .where(eq(webhookEndpoints.id, endpointId))
    .returning({ failingSince: webhookEndpoints.failingSince, consecutiveFailures: webhookEndpoints.consecutiveFailures });
  return ep;
}

/** Disable an active endpoint; false when it was not active (disabled by someone else first). */
export async function disableEndpoint(tx: DbOrTx, endpointId: string, at: Date, reason: string): Promise<boolean> {
  const flipped = await tx
    .update(webhookEndpoints)
    .set({ isActive: false, disabledAt: at, disabledReason: reason, updatedAt: at })
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.isActive, true)))
    .returning({ id: webhookEndpoints.id });
  return flipped.length > 0;
}

// ----------------------------------------------------------------------------------------------- deliveries

/** A delivery of the organization. */
export async function getOrgDelivery(db: Db, orgId: string, id: string): Promise<DeliveryRow | undefined> {
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.orgId, orgId)));
  return row;
}

export interface DeliveryFilter {
  status?: string;
  endpointId?: string;
  eventId?: string;
  eventType?: string;
}

/**
 * A page of the organization's delivery log, newest first (`page.limit` rows from `page.offset` or after
 * `page.after`), and how many rows match in all.
 */
export async function listOrgDeliveries(db: Db, orgId: string, f: DeliveryFilter, page: RowPage): Promise<{ rows: DeliveryRow[]; total: number }> {
  const conds: SQL[] = [eq(webhookDeliveries.orgId, orgId)];
  if (f.status) conds.push(eq(webhookDeliveries.status, f.status));
  if (f.endpointId) conds.push(eq(webhookDeliveries.endpointId, f.endpointId));
  if (f.eventId) conds.push(eq(webhookDeliveries.eventId, f.eventId));
  if (f.eventType) conds.push(eq(webhookDeliveries.eventType, f.eventType));
  const where = and(...conds);
  const [rows, [counted]] = await Promise.all([
    db
      .select()
      .from(webhookDeliveries)
      .where(page.after ? and(where, olderThan(webhookDeliveries.createdAt, webhookDeliveries.id, page.after)) : where)
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
      .limit(page.limit)
      .offset(page.offset ?? 0),
    db.select({ n: count() }).from(webhookDeliveries).where(where),
  ]);
  return { rows, total: Number(counted?.n ?? 0) };
}

/** The delivery's event and every attempt, in order. */
export async function getDeliveryDetail(db: Db, d: Pick<DeliveryRow, 'id' | 'eventId'>): Promise<{ event: EventRow; attempts: AttemptRow[] }> {
  const [event] = await db.select().from(events).where(eq(events.id, d.eventId));
  const attempts = await db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, d.id)).orderBy(webhookAttempts.attempt);
  return { event, attempts };
}

export type DeliveryChanges = Partial<typeof webhookDeliveries.$inferInsert>;

/** Set `changes` on the delivery; with `ifUpdatedAt`, only while nobody has written it since. */
export async function updateDelivery(db: DbOrTx, id: string, changes: DeliveryChanges, ifUpdatedAt?: Date): Promise<void> {
  const where = ifUpdatedAt ? and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.updatedAt, ifUpdatedAt)) : eq(webhookDeliveries.id, id);
  await db.update(webhookDeliveries).set(changes).where(where);
}

/** Record that the deliveries' workflows were started now (those still pending). */
export async function markDeliveriesStarted(db: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(webhookDeliveries)
    .set({ workflowStartedAt: new Date() })
    .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.status, 'pending')));
}

/** A pending delivery given up on: failed with `error`. */
export async function failPendingDelivery(db: Db, id: string, error: string): Promise<void> {
  const at = new Date();
  await db
    .update(webhookDeliveries)
    .set({ status: 'failed', lastError: error, failedAt: at, nextAttemptAt: null, updatedAt: at })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'pending')));
}

/** The delivery's status, or undefined when there is no such delivery. */
export async function getDeliveryStatus(db: Db, id: string): Promise<string | undefined> {
  const [d] = await db.select({ status: webhookDeliveries.status }).from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return d?.status;
}

/** A delivery with its event and endpoint: what an attempt sends and where. */
export async function getDeliveryForAttempt(db: Db, id: string): Promise<{ delivery: DeliveryRow; event: EventRow; endpoint: EndpointRow } | undefined> {
  const [row] = await db
    .select({ delivery: webhookDeliveries, event: events, endpoint: webhookEndpoints })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(eq(webhookDeliveries.id, id));
  return row;
}

/** Count one more attempt of the delivery; its number. */
export async function nextAttemptNumber(tx: DbOrTx, deliveryId: string): Promise<number> {
  const [{ attempts }] = await tx
    .update(webhookDeliveries)
    .set({ attempts: sql`${webhookDeliveries.attempts} + 1` })
    .where(eq(webhookDeliveries.id, deliveryId))
    .returning({ attempts: webhookDeliveries.attempts });
  return attempts;
}

export async function insertAttempt(tx: DbOrTx, a: typeof webhookAttempts.$inferInsert): Promise<void> {
  await tx.insert(webhookAttempts).values(a);
}

// -------------------------------------------------------------------------------------------------- fan-out

/**
 * Fan up to `limit` undispatched events out to their organizations' matching endpoints as delivery rows and mark
 * them dispatched; true when more undispatched events remain.
 */
export async function fanOutEvents(db: Db, limit: number): Promise<boolean> {
  return db.transaction(async (tx) => {
    // One dispatch at a time (the lock ends with the transaction): listed_seq values are then handed out and
    // committed in the same order, which is what lets GET /v1/events?order=asc page forward without gaps.
    await tx.execute(sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.dispatchWebhookEvents})`);
    const batch = await tx
      .select()
      .from(events)
      .where(isNull(events.dispatchedAt))
      .orderBy(asc(events.position))
      .limit(limit + 1)
      .for('update', { skipLocked: true });
    const chunk = batch.slice(0, limit);
    if (chunk.length === 0) return false;
    const orgIds = [...new Set(chunk.map((e) => e.orgId))];
    // Disabled (not deleted) endpoints get their delivery too, recorded failed at once: nothing is sent, but once
    // the endpoint is re-enabled the event can be redelivered from the log like any failed delivery.
    const endpoints = await tx
      .select({ id: webhookEndpoints.id, orgId: webhookEndpoints.orgId, eventTypes: webhookEndpoints.eventTypes, isActive: webhookEndpoints.isActive })
      .from(webhookEndpoints)
      .where(and(inArray(webhookEndpoints.orgId, orgIds), isNull(webhookEndpoints.deletedAt)));
    const at = new Date();
    const rows = chunk.flatMap((e) =>
      endpoints
        .filter((ep) => ep.orgId === e.orgId && (!ep.eventTypes || ep.eventTypes.includes(e.type)))
        .map((ep) => ({
          orgId: e.orgId,
          eventId: e.id,
          endpointId: ep.id,
          eventType: e.type,
          ...(ep.isActive ? {} : { status: 'failed', lastError: 'endpoint disabled', failedAt: at }),
        })),
    );
    if (rows.length > 0) await tx.insert(webhookDeliveries).values(rows).onConflictDoNothing();
    // listed_seq in position order within the batch too: nextval in an UPDATE's SET is taken in whatever order
    // the rows are visited, so the values are drawn first (ascending) and handed out in the chunk's order
    const drawn = await tx.execute(sql`select nextval('events_listed_seq')::text as s from generate_series(1, ${chunk.length})`);
    const seqs = ((drawn as unknown as { rows?: { s: string }[] }).rows ?? (drawn as unknown as { s: string }[]))
      .map((r) => BigInt(r.s))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const listed = sql.join(
      chunk.map((e, i) => sql`(${e.id}::uuid, ${seqs[i]!.toString()}::bigint)`),
      sql`, `,
    );
    await tx.execute(
      sql`update ${events} set dispatched_at = ${at.toISOString()}::timestamptz, listed_seq = v.seq from (values ${listed}) as v(id, seq) where ${events.id} = v.id`,
    );
    return batch.length > limit;
  });
}

/**
 * Pending deliveries whose workflow is to be started, oldest first: never started, or started but with the later
 * of that start and their next attempt before `staleBefore` (their workflow was lost).
 */
export async function listDeliveriesToStart(db: Db, staleBefore: Date, limit: number): Promise<{ id: string; orgId: string }[]> {
  const stale = staleBefore.toISOString();
  return db
    .select({ id: webhookDeliveries.id, orgId: webhookDeliveries.orgId })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, 'pending'),
        or(
          isNull(webhookDeliveries.workflowStartedAt),
          and(
            isNotNull(webhookDeliveries.workflowStartedAt),
            sql`greatest(${webhookDeliveries.workflowStartedAt}, coalesce(${webhookDeliveries.nextAttemptAt}, ${webhookDeliveries.workflowStartedAt})) < ${stale}::timestamptz`,
          ),
        ),
      ),
    )
    .orderBy(asc(webhookDeliveries.createdAt))
    .limit(limit);
}

// ------------------------------------------------------------------------------------------------ retention

/**
 * Delete events created before `cutoff` with their finished deliveries and attempts; deliveries still pending keep
 * their event. Per-resource sequence counters stay, so numbering continues.
 */
export async function purgeWebhookHistory(db: Db, cutoff: Date): Promise<{ events: number; deliveries: number }> {
  const before = cutoff.toISOString();
  return db.transaction(async (tx) => {
    // One purge at a time (the dispatcher's own and an operator's may overlap): two concurrent purges deleting the
    // same rows in different orders would deadlock. The lock ends with the transaction.
    await tx.execute(sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.purgeWebhookHistory})`);
    const old = sql`select d.id from ${webhookDeliveries} d join ${events} e on e.id = d.event_id
      where e.created_at < ${before}::timestamptz and d.status <> 'pending'`;
    await tx.execute(sql`delete from ${webhookAttempts} where delivery_id in (${old})`);
    const deliveries = await tx.execute(sql`delete from ${webhookDeliveries} where id in (${old}) returning id`);
    const gone = await tx.execute(sql`delete from ${events} e where e.created_at < ${before}::timestamptz
      and not exists (select 1 from ${webhookDeliveries} d where d.event_id = e.id) returning e.id`);
    return { events: rowCount(gone), deliveries: rowCount(deliveries) };
  });
}
