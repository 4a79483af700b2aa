/**
 * GET /v1/events and GET /v1/events/{id}: the organization's events of the last 30 days, newest first, with a
 * cursor (`starting_after` = the last event id of the previous page), type and resource filters. The same
 * objects the webhooks deliver, so a receiver that was down can catch up here: `order=asc` pages forward in the
 * order events were committed and fanned out (`listed_seq`), so a reader polling with its last cursor never skips
 * an event whose transaction committed late. Newest-first is insertion order and is for browsing.
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { getOrgEvent, getOrgEventPosition, listOrgEvents, type EventListQuery } from '../../db/events.js';
import { EVENT_RETENTION_DAYS } from '../../webhooks/policy.js';
import { envelopeOf, EVENT_TYPES, isEventType } from '../../webhooks/catalogue.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { requireAuth } from '../middleware/auth.js';
import { SCOPE_RULES } from '../middleware/scopes.js';
import { pageOf } from '../pagination.js';
import { ErrorSchema, resourceIdParam } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';
import { UUID } from '../../db/ids.js';

const err = (description: string) => ({ description, content: { 'application/json': { schema: ErrorSchema } } });

const EventSchema = z
  .object({
    id: z.string().openapi({ description: 'Also the webhook-id of every delivery of this event' }),
    type: z.string(),
    timestamp: z.string(),
    resource_id: z.string(),
    sequence: z.number().int().openapi({ description: 'Per-resource order, from 1' }),
    data: z.record(z.string(), z.unknown()),
  })
  .openapi('Event');

const listRoute = (deps: AppDeps) =>
  secureRoute(deps, {
    method: 'get',
    path: '/v1/events',
    tags: ['Events'],
    scopes: SCOPE_RULES.eventsRead,
    summary: 'List events',
    description:
      "Events of the caller's organization from the last 30 days, newest first. Page with `starting_after` set to `next_cursor`. Filter by `type` (comma-separated list allowed) and `resource_id`. To catch up, use `order=asc`: events in the order they were committed and dispatched (an event appears there within a dispatch interval of its commit), oldest first; `next_cursor` is then always the last event returned, so polling with it never skips an event. Scope: read or admin.",
    request: {
      query: z.object({
        type: z
          .string()
          .optional()
          .openapi({ description: `Event types, comma-separated; any other value is a 400. The types: ${EVENT_TYPES.join(', ')}` }),
        resource_id: z.string().optional(),
        starting_after: z.string().optional(),
        order: z.enum(['desc', 'asc']).default('desc').openapi({ description: '`asc`: catch-up order (commit order), oldest first' }),
        limit: z.coerce.number().int().min(1).max(100).default(20),
      }),
    },
    responses: {
      200: {
        description: 'A page of events',
        content: {
          'application/json': {
            schema: z.object({ data: z.array(EventSchema), has_more: z.boolean(), next_cursor: z.string().nullable() }),
          },
        },
      },
      400: err('Invalid query'),
      401: err('Missing or invalid API key'),
      403: err('API key lacks the scope'),
    },
  });

const getRoute = (deps: AppDeps) =>
  secureRoute(deps, {
    method: 'get',
    path: '/v1/events/{id}',
    tags: ['Events'],
    scopes: SCOPE_RULES.eventsRead,
    summary: 'Get an event',
    request: { params: z.object({ id: resourceIdParam('id', { code: 'NOT_FOUND', message: 'Event not found' }, 'Event id (UUID)') }) },
    responses: {
      200: { description: 'The event', content: { 'application/json': { schema: EventSchema } } },
      401: err('Missing or invalid API key'),
      403: err('API key lacks the scope'),
      404: err('No such event in this organization (or older than 30 days)'),
    },
  });

/** The `type` filter: event types of the catalogue, comma-separated; any other value is a 400 listing the known ones. */
function eventTypesOf(param: string): string[] {
  const types = param
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = types.filter((t) => !isEventType(t));
  if (unknown.length > 0) {
    throw new ApiError(400, 'VALIDATION_ERROR', `type: unknown event type ${unknown.join(', ')}; known types: ${EVENT_TYPES.join(', ')}`, {
      field: 'type',
      known_types: EVENT_TYPES,
    });
  }
  return types;
}

export function registerEventRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const since = () => new Date(Date.now() - EVENT_RETENTION_DAYS * 24 * 3600_000);

  app.openapi(listRoute(deps), async (c) => {
    const auth = requireAuth(c);
    const q = c.req.valid('query');
    const forward = q.order === 'asc';
    const query: EventListQuery = { since: since(), resourceId: q.resource_id || undefined, forward, limit: q.limit + 1 };
    if (q.type) query.types = eventTypesOf(q.type);
    if (q.starting_after) {
      if (!UUID.test(q.starting_after)) throw new ApiError(400, 'VALIDATION_ERROR', 'starting_after: must be an event id', { field: 'starting_after' });
      const cursor = await getOrgEventPosition(db, auth.orgId, q.starting_after);
      if (!cursor) throw new ApiError(400, 'VALIDATION_ERROR', 'starting_after: no such event', { field: 'starting_after' });
      if (forward) {
        if (cursor.listedSeq === null) {
          throw new ApiError(400, 'VALIDATION_ERROR', 'starting_after: that event is not dispatched yet; use a cursor from order=asc', {
            field: 'starting_after',
          });
        }
        query.afterListedSeq = cursor.listedSeq;
      } else {
        query.beforePosition = cursor.position;
      }
    }
    const { page, hasMore } = pageOf(await listOrgEvents(db, auth.orgId, query), q.limit);
    const last = page.length > 0 ? page[page.length - 1].id : null;
    // forward: the cursor to poll with next, even on the last page (an empty page keeps the caller's own)
    const nextCursor = forward ? (last ?? q.starting_after ?? null) : hasMore ? last : null;
    return c.json({ data: page.map(envelopeOf), has_more: hasMore, next_cursor: nextCursor }, 200);
  });

  app.openapi(getRoute(deps), async (c) => {
    const auth = requireAuth(c);
    const { id } = c.req.valid('param');
    const row = UUID.test(id) ? await getOrgEvent(db, auth.orgId, id, since()) : undefined;
    if (!row) throw new ApiError(404, 'NOT_FOUND', 'Event not found');
    return c.json(envelopeOf(row), 200);
  });
}
