/**
 * GET /v1/events and GET /v1/events/{id}: the organization's events of the last 30 days, newest first, paged by
 * offset or cursor (an event id: the last event of the previous page; `starting_after` is its older name), with
 * type and resource filters. The same
 * objects the webhooks deliver, so a receiver that was down can catch up here: `order=asc` pages forward in the
 * order events were committed and fanned out (`listed_seq`), so a reader polling with its last cursor never skips
 * an event whose transaction committed late. Newest-first is insertion order and is for browsing.
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { listEvents, readEvent } from '../../services/events.js';
import { envelopeOf, EVENT_DATA_SCHEMA, EVENT_TYPES, isEventType } from '../../webhooks/catalogue.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { requireAuth } from '../middleware/auth.js';
import { SCOPE_RULES } from '../middleware/scopes.js';
import { decodeIdCursor, pageOf, pageRequest } from '../pagination.js';
import { ErrorSchema, resourceIdParam, uuidField } from '../schemas/common.js';
import { DEFAULT_PAGE_SIZE, pageQuery, PaginationSchema } from '../schemas/pagination.js';
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
    data: EVENT_DATA_SCHEMA,
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
      "Events of the caller's organization from the last 30 days, newest first. Page by `cursor` (the `next_cursor` of the previous page; `starting_after`, an event id, is the same cursor under its older name) or by `offset`, not both. Filter by `type` (comma-separated list allowed) and `resource_id`; `pagination.total` counts every event the filters match. To catch up, use `order=asc`: events in the order they were committed and dispatched (an event appears there within a dispatch interval of its commit), oldest first; `next_cursor` is then set on every page, also the last (the last event returned, or the cursor given when none was), so polling with it never skips an event. Scope: read or admin.",
    request: {
      query: z.object({
        type: z
          .string()
          .optional()
          .openapi({ description: `Event types, comma-separated; any other value is a 400. The types: ${EVENT_TYPES.join(', ')}` }),
        resource_id: uuidField().optional().openapi({ description: 'The id of the resource the events are about (an identity, intent, …)' }),
        order: z.enum(['desc', 'asc']).default('desc').openapi({ description: '`asc`: catch-up order (commit order), oldest first' }),
        ...pageQuery(),
        starting_after: z.string().optional().openapi({
          format: 'uuid',
          description: 'An event id: the page after that event (the same as passing it as `cursor`). Not with `cursor` or `offset`',
        }),
      }),
    },
    responses: {
      200: {
        description: 'A page of events',
        content: { 'application/json': { schema: z.object({ events: z.array(EventSchema), pagination: PaginationSchema }) } },
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

/**
 * The event list's cursor: `cursor`, or `starting_after` (an event id, its older name). With `cursor` or `offset` it
 * is a 400 naming both; a `starting_after` that is no event id is a 400 naming it.
 */
function cursorParam(q: { cursor?: string; offset?: number }, startingAfter: string | undefined): string | undefined {
  if (!startingAfter) return q.cursor;
  const other = q.cursor ? 'cursor' : q.offset !== undefined ? 'offset' : undefined;
  if (other) {
    throw new ApiError(400, 'VALIDATION_ERROR', `starting_after: cannot be combined with ${other} (starting_after is the older name of cursor)`, {
      field: 'starting_after',
      fields: ['starting_after', other],
    });
  }
  if (!UUID.test(startingAfter)) throw new ApiError(400, 'VALIDATION_ERROR', 'starting_after: must be an event id', { field: 'starting_after' });
  return startingAfter;
}

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
  app.openapi(listRoute(deps), async (c) => {
    const auth = requireAuth(c);
    const { starting_after: startingAfter, ...q } = c.req.valid('query');
    const forward = q.order === 'asc';
    const req = pageRequest({ ...q, cursor: cursorParam(q, startingAfter) }, DEFAULT_PAGE_SIZE, decodeIdCursor);
    const { rows, total } = await listEvents(deps, auth.orgId, {
      types: q.type ? eventTypesOf(q.type) : undefined,
      resourceId: q.resource_id || undefined,
      forward,
      limit: req.limit + 1,
      offset: req.offset ?? 0,
      after: req.after ? { id: req.after, field: startingAfter ? 'starting_after' : 'cursor' } : undefined,
    });
    const { page, pagination } = pageOf(rows, req, total, (e) => e.id);
    // forward: the cursor to poll with next, even on the last page (an empty page keeps the caller's own)
    if (forward && !pagination.next_cursor) pagination.next_cursor = page[page.length - 1]?.id ?? req.after ?? null;
    return c.json({ events: page.map(envelopeOf), pagination }, 200);
  });

  app.openapi(getRoute(deps), async (c) => c.json(envelopeOf(await readEvent(deps, requireAuth(c).orgId, c.req.valid('param').id)), 200));
}
