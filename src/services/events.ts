/**
 * The event log behind GET /v1/events: the organization's events of the last EVENT_RETENTION_DAYS, newest first
 * (insertion order) or, for catching up, in the order they were committed and dispatched (`forward`). A page is read
 * from an offset or after an event (the cursor is an event id).
 */
import { ApiError } from './errors.js';
import { countOrgEvents, getOrgEvent, getOrgEventPosition, listOrgEvents, type EventListQuery, type EventRow } from '../db/events.js';
import { UUID } from '../db/ids.js';
import { EVENT_RETENTION_DAYS } from '../webhooks/policy.js';
import type { ServiceDeps } from './deps.js';

type EventDeps = Pick<ServiceDeps, 'database'>;

const since = () => new Date(Date.now() - EVENT_RETENTION_DAYS * 24 * 3600_000);

export interface EventListRequest {
  types?: string[];
  resourceId?: string;
  /** dispatch order, oldest first (dispatched events only); else insertion order, newest first */
  forward: boolean;
  /** rows to read (the caller asks for one to spare) */
  limit: number;
  offset: number;
  /** the id of the event the page starts after, and the query parameter that named it (for the 400s) */
  after?: { id: string; field: string };
}

/**
 * A page of the organization's events and how many the filters match. An `after` event that is not the
 * organization's (or is older than the retention) is a 400 naming its field; in dispatch order, so is one not
 * dispatched yet.
 */
export async function listEvents(deps: EventDeps, orgId: string, r: EventListRequest): Promise<{ rows: EventRow[]; total: number }> {
  const db = deps.database.db;
  const query: EventListQuery = { since: since(), types: r.types, resourceId: r.resourceId, forward: r.forward, limit: r.limit, offset: r.offset };
  if (r.after) {
    const { id, field } = r.after;
    const position = await getOrgEventPosition(db, orgId, id);
    if (!position) throw new ApiError(400, 'VALIDATION_ERROR', `${field}: no such event`, { field });
    if (r.forward) {
      if (position.listedSeq === null) {
        throw new ApiError(400, 'VALIDATION_ERROR', `${field}: that event is not dispatched yet; use a cursor from order=asc`, { field });
      }
      query.afterListedSeq = position.listedSeq;
    } else {
      query.beforePosition = position.position;
    }
  }
  const [rows, total] = await Promise.all([listOrgEvents(db, orgId, query), countOrgEvents(db, orgId, query)]);
  return { rows, total };
}

/** One event of the organization within the retention, or 404. */
export async function readEvent(deps: EventDeps, orgId: string, id: string): Promise<EventRow> {
  const row = UUID.test(id) ? await getOrgEvent(deps.database.db, orgId, id, since()) : undefined;
  if (!row) throw new ApiError(404, 'NOT_FOUND', 'Event not found');
  return row;
}
