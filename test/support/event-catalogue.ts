/**
 * Every event an organization has, checked against the event catalogue (src/webhooks/catalogue.ts): each event as
 * the gateway serves it (`envelopeOf`, the body of GET /v1/events and of every delivery) must be of a catalogue type
 * and parse against that type's strict schema, and each stored row must already be in the current forms (the
 * serving path's normalisation of older rows must not be what makes a new event pass).
 */
import { isDeepStrictEqual } from 'node:util';
import { asc, eq } from 'drizzle-orm';
import type { Db } from '../../src/db/client.js';
import { events } from '../../src/db/schema.js';
import { envelopeOf, EVENT_SCHEMAS, isEventType } from '../../src/webhooks/catalogue.js';

/** The `<type> <id> <path>: <problem>` lines of one served event's data against its schema. */
export function eventDeviations(type: string, id: string, data: unknown): string[] {
  if (!isEventType(type)) return [`${type} ${id}: not an event type of the catalogue`];
  const parsed = EVENT_SCHEMAS[type].safeParse(data);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${type} ${id} ${i.path.join('.') || '(data)'}: ${i.message}`);
}

/** The organization's events (oldest first): the types seen and every deviation found. */
export async function checkOrgEvents(db: Db, orgId: string): Promise<{ types: string[]; problems: string[] }> {
  const rows = await db.select().from(events).where(eq(events.orgId, orgId)).orderBy(asc(events.position));
  const problems: string[] = [];
  for (const row of rows) {
    const served = envelopeOf(row);
    problems.push(...eventDeviations(row.type, row.id, served.data));
    // deep equality: the database's jsonb keeps its own key order
    if (!isDeepStrictEqual(served.data, row.data)) problems.push(`${row.type} ${row.id}: stored in an earlier form`);
  }
  return { types: [...new Set(rows.map((r) => r.type))].sort(), problems };
}
