/**
 * Emitting events. A flow that changes state calls `recordEvent(tx, …)` inside the same database transaction, so
 * the event exists exactly when the change does. Nothing else is needed: the webhook dispatcher (a Temporal
 * workflow per task queue, src/workflows/webhook-dispatcher.ts) finds undispatched events, creates one delivery per
 * matching endpoint and starts a delivery workflow for each. A crash between commit and dispatch only delays
 * delivery until the dispatcher's next look. To deliver at once, nudge it after the commit:
 * `notifyWebhookDispatcher()` from workflow code, `kickWebhookDispatcher(client, taskQueue)` elsewhere.
 */
import { and, asc, count, desc, eq, gt, gte, inArray, isNotNull, lt, sql, type SQL } from 'drizzle-orm';
import { EVENT_SCHEMAS, type EventData, type EventType } from '../webhooks/catalogue.js';
import type { Db } from './client.js';
import { eventSequences, events } from './schema.js';

/** The database or a transaction of it (drizzle's transaction type is a subtype of the database type). */
export type DbOrTx = Db | Parameters<Parameters<Db['transaction']>[0]>[0];

export interface RecordEventInput<T extends EventType> {
  orgId: string;
  type: T;
  /** the id of the resource the event is about (identity, intent, governance operation, pending action, endpoint) */
  resourceId: string;
  /** validated against EVENT_SCHEMAS[type] */
  data: EventData<T>;
}

export interface RecordedEvent {
  id: string;
  type: EventType;
  orgId: string;
  resourceId: string;
  sequence: number;
  createdAt: Date;
}

export class InvalidEventError extends Error {
  constructor(type: string, message: string) {
    super(`invalid ${type} event: ${message}`);
    this.name = 'InvalidEventError';
  }
}

/**
 * Write an event row with the next per-resource sequence number. Call it with the transaction that makes the
 * state change; throws InvalidEventError (rolling that transaction back) when `data` breaks the catalogue.
 */
export async function recordEvent<T extends EventType>(tx: DbOrTx, input: RecordEventInput<T>): Promise<RecordedEvent> {
  const schema = EVENT_SCHEMAS[input.type];
  if (!schema) throw new InvalidEventError(String(input.type), 'unknown event type');
  const parsed = schema.safeParse(input.data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEventError(input.type, `${issue?.path.join('.') || '(data)'}: ${issue?.message}`);
  }
  // Atomic per-resource counter: concurrent writers for the same resource serialise on this row.
  const [seq] = await tx
    .insert(eventSequences)
    .values({ orgId: input.orgId, resourceId: input.resourceId, lastSequence: 1 })
    .onConflictDoUpdate({
      target: [eventSequences.orgId, eventSequences.resourceId],
      set: { lastSequence: sql`${eventSequences.lastSequence} + 1` },
    })
    .returning({ n: eventSequences.lastSequence });
  const [row] = await tx
    .insert(events)
    .values({
      orgId: input.orgId,
      type: input.type,
      resourceId: input.resourceId,
      sequence: seq.n,
      data: parsed.data as Record<string, unknown>,
    })
    .returning();
  return { id: row.id, type: input.type, orgId: row.orgId, resourceId: row.resourceId, sequence: row.sequence, createdAt: row.createdAt };
}

// ------------------------------------------------------------------------------------------------ the event log

export type EventRow = typeof events.$inferSelect;

/** Where an event of the organization stands in the two orders of the log; undefined when there is no such event. */
export async function getOrgEventPosition(db: Db, orgId: string, id: string): Promise<{ position: number; listedSeq: number | null } | undefined> {
  const [row] = await db
    .select({ position: events.position, listedSeq: events.listedSeq })
    .from(events)
    .where(and(eq(events.id, id), eq(events.orgId, orgId)));
  return row;
}

export interface EventListQuery {
  /** created at or after */
  since: Date;
  types?: string[];
  resourceId?: string;
  /** true: dispatch order (listed_seq), oldest first, dispatched events only; false: insertion order, newest first */
  forward: boolean;
  /** forward: only the events listed after this listed_seq */
  afterListedSeq?: number;
  /** newest first: only the events inserted before this position */
  beforePosition?: number;
  limit: number;
  /** events of the order to skip first */
  offset?: number;
}

/** What the list's filters match, before any cursor: the rows a page is cut from and their total. */
function eventFilter(orgId: string, q: EventListQuery): SQL[] {
  const where: SQL[] = [eq(events.orgId, orgId), gte(events.createdAt, q.since)];
  if (q.types) where.push(inArray(events.type, q.types));
  if (q.resourceId) where.push(eq(events.resourceId, q.resourceId));
  if (q.forward) where.push(isNotNull(events.listedSeq));
  return where;
}

/** The organization's events in the order asked for, at most `limit`, after `offset` of them. */
export async function listOrgEvents(db: Db, orgId: string, q: EventListQuery): Promise<EventRow[]> {
  const where = eventFilter(orgId, q);
  if (q.afterListedSeq !== undefined) where.push(gt(events.listedSeq, q.afterListedSeq));
  if (q.beforePosition !== undefined) where.push(lt(events.position, q.beforePosition));
  return db
    .select()
    .from(events)
    .where(and(...where))
    .orderBy(q.forward ? asc(events.listedSeq) : desc(events.position))
    .limit(q.limit)
    .offset(q.offset ?? 0);
}

/** How many of the organization's events the list's filters match (the cursor aside). */
export async function countOrgEvents(db: Db, orgId: string, q: EventListQuery): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(events)
    .where(and(...eventFilter(orgId, q)));
  return Number(row?.n ?? 0);
}

/** An event of the organization created at or after `since`. */
export async function getOrgEvent(db: Db, orgId: string, id: string, since: Date): Promise<EventRow | undefined> {
  const [row] = await db
    .select()
    .from(events)
    .where(and(eq(events.id, id), eq(events.orgId, orgId), gte(events.createdAt, since)));
  return row;
}
