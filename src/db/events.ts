/**
 * Emitting events. A flow that changes state calls `recordEvent(tx, …)` inside the same database transaction, so
 * the event exists exactly when the change does. Nothing else is needed: the webhook dispatcher (a Temporal
 * workflow per task queue, src/workflows/webhook-dispatcher.ts) finds undispatched events, creates one delivery per
 * matching endpoint and starts a delivery workflow for each. A crash between commit and dispatch only delays
 * delivery until the dispatcher's next look. To deliver at once, nudge it after the commit:
 * `notifyWebhookDispatcher()` from workflow code, `kickWebhookDispatcher(client, taskQueue)` elsewhere.
 */
import { sql } from 'drizzle-orm';
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
