/**
 * Webhook endpoints and the delivery log: /v1/webhooks/endpoints[/{id}[/rotate-secret|/verify]],
 * /v1/webhooks/deliveries[/{id}[/redeliver]]. The use cases are in src/services/webhooks.ts; every lookup is scoped
 * to the caller's organization (another organization's id answers 404). Secrets are returned once (create,
 * rotate) and never logged.
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { envelopeOf } from '../../webhooks/catalogue.js';
import * as webhooks from '../../services/webhooks.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { callerOf, requireAuth } from '../middleware/auth.js';
import { SCOPE_RULES } from '../middleware/scopes.js';
import { createdAtPage, pageRequest } from '../pagination.js';
import { ErrorSchema, resourceIdParam } from '../schemas/common.js';
import { pageQuery, PaginationSchema } from '../schemas/pagination.js';
import {
  attemptView,
  CreatedEndpointSchema,
  DeliveryDetailSchema,
  DeliverySchema,
  deliveryView,
  EndpointSchema,
  endpointView,
  WEBHOOK_URL_PATTERN,
  eventTypeList,
} from '../schemas/webhooks.js';
import { secureRoute } from '../secure-route.js';

const SECRET_WARNING = 'Store this secret now: it is not shown again. Rotate it if it is lost.';

const err = (description: string) => ({ description, content: { 'application/json': { schema: ErrorSchema } } });
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });
const EndpointIdParam = z.object({ id: resourceIdParam('id', { code: 'NOT_FOUND', message: 'Webhook endpoint not found' }, 'Webhook endpoint id (UUID)') });
const DeliveryIdParam = z.object({ id: resourceIdParam('id', { code: 'NOT_FOUND', message: 'Webhook delivery not found' }, 'Webhook delivery id (UUID)') });

const tags = ['Webhooks'];
const authErrors = { 401: err('Missing or invalid API key'), 403: err('API key lacks the scope') };

/** Register, list, read, change and delete endpoints. */
function registerEndpointRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/webhooks/endpoints',
      tags,
      scopes: SCOPE_RULES.webhookWrite,
      summary: 'Register a webhook endpoint',
      description:
        "Adds an endpoint for the caller's organization (several are allowed). The URL must be http(s) and must not be a loopback or private address (unless the operator set WEBHOOK_ALLOW_PRIVATE_URLS). Unless `skip_verification` is true a signed `webhook.ping` is sent and a 2xx marks the endpoint verified; the endpoint is created either way. The signing secret is generated unless given (`whsec_` + base64 of 24–64 bytes) and is returned only in this response. Scope: webhook:write or admin.",
      request: {
        body: {
          required: true,
          content: {
            'application/json': {
              schema: z.object({
                url: z.string().max(2048).openapi({ format: 'uri', pattern: WEBHOOK_URL_PATTERN }),
                event_types: eventTypeList.nullable().optional(),
                description: z.string().max(255).nullable().optional(),
                secret: z.string().min(16).max(255).optional(),
                skip_verification: z.boolean().optional(),
              }),
            },
          },
        },
      },
      responses: {
        201: json(CreatedEndpointSchema, 'Endpoint registered; the secret is shown once'),
        400: err('Invalid body or URL'),
        409: err('The organization has as many endpoints as it may (WEBHOOK_MAX_ENDPOINTS_PER_ORG)'),
        ...authErrors,
      },
    }),
    async (c) => {
      const created = await webhooks.createEndpoint(deps, callerOf(c), c.req.valid('json'));
      return c.json({ ...endpointView(created.endpoint), secret: created.secret, warning: SECRET_WARNING }, 201);
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/webhooks/endpoints',
      tags,
      scopes: SCOPE_RULES.webhookRead,
      summary: 'List webhook endpoints',
      description:
        "The endpoints of the caller's organization, newest first, without secrets. Page by `cursor` (the `next_cursor` of the previous page) or by `offset`, not both. Scope: webhook:read, read or admin.",
      request: { query: z.object(pageQuery()) },
      responses: {
        200: json(z.object({ endpoints: z.array(EndpointSchema), pagination: PaginationSchema }), 'Endpoints'),
        400: err('Invalid query'),
        ...authErrors,
      },
    }),
    async (c) => {
      const req = pageRequest(c.req.valid('query'));
      const { rows, total } = await webhooks.listEndpoints(deps, callerOf(c), { ...req, limit: req.limit + 1 });
      const { page, pagination } = createdAtPage(rows, req, total);
      return c.json({ endpoints: page.map(endpointView), pagination }, 200);
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/webhooks/endpoints/{id}',
      tags,
      scopes: SCOPE_RULES.webhookRead,
      summary: 'Get a webhook endpoint',
      request: { params: EndpointIdParam },
      responses: { 200: json(EndpointSchema, 'The endpoint'), 404: err('No such endpoint in this organization'), ...authErrors },
    }),
    async (c) => c.json(endpointView(await webhooks.findOrgEndpoint(deps.database.db, requireAuth(c).orgId, c.req.valid('param').id)), 200),
  );

  app.openapi(
    secureRoute(deps, {
      method: 'patch',
      path: '/v1/webhooks/endpoints/{id}',
      tags,
      scopes: SCOPE_RULES.webhookWrite,
      summary: 'Change a webhook endpoint',
      description:
        'Sets the given fields (at least one: a body that changes nothing is a 400 naming them). A new URL is checked like on registration and clears `verified_at`. `is_active: true` re-enables an endpoint the gateway disabled and resets its failure count; events that arrived while it was disabled are in the delivery log as failed (`endpoint disabled`) and, like every delivery that failed meanwhile, can be sent again with redeliver. Scope: webhook:write or admin.',
      request: {
        params: EndpointIdParam,
        body: {
          required: true,
          content: {
            'application/json': {
              schema: z
                .object({
                  url: z.string().max(2048).optional().openapi({ format: 'uri', pattern: WEBHOOK_URL_PATTERN }),
                  event_types: eventTypeList.nullable().optional(),
                  description: z.string().max(255).nullable().optional(),
                  is_active: z.boolean().optional(),
                })
                .strict()
                // a PATCH that changes nothing is a mistake (an empty or missing body), not a no-op
                .refine((patch) => Object.values(patch).some((v) => v !== undefined), {
                  error: 'nothing to change: send at least one of url, event_types, description, is_active',
                })
                .openapi({ minProperties: 1 }),
            },
          },
        },
      },
      responses: {
        200: json(EndpointSchema, 'Endpoint updated'),
        400: err('Invalid body or URL'),
        404: err('No such endpoint in this organization'),
        ...authErrors,
      },
    }),
    async (c) => c.json(endpointView(await webhooks.changeEndpoint(deps, callerOf(c), c.req.valid('param').id, c.req.valid('json'))), 200),
  );

  app.openapi(
    secureRoute(deps, {
      method: 'delete',
      path: '/v1/webhooks/endpoints/{id}',
      tags,
      scopes: SCOPE_RULES.webhookWrite,
      summary: 'Delete a webhook endpoint',
      description: 'Stops all deliveries to the endpoint; its delivery log stays readable. Scope: webhook:write or admin.',
      request: { params: EndpointIdParam },
      responses: { 204: { description: 'Deleted' }, 404: err('No such endpoint in this organization'), ...authErrors },
    }),
    async (c) => {
      await webhooks.removeEndpoint(deps, callerOf(c), c.req.valid('param').id);
      return c.body(null, 204);
    },
  );
}

/** Rotate an endpoint's secret; ping it. */
function registerEndpointActionRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/webhooks/endpoints/{id}/rotate-secret',
      tags,
      scopes: SCOPE_RULES.webhookWrite,
      summary: 'Rotate the signing secret',
      description:
        'Replaces the secret (generated unless given) and returns it once. For 24 hours every delivery also carries a `v1` signature with the replaced secret (with every earlier one still in its 24 hours too, up to 5), so receivers can switch without losing messages, even when a rotation is retried. 409 when another rotation of the endpoint ran at the same time. Scope: webhook:write or admin.',
      request: {
        params: EndpointIdParam,
        body: { required: false, content: { 'application/json': { schema: z.object({ secret: z.string().min(16).max(255).optional() }).strict() } } },
      },
      responses: {
        200: json(
          z.object({ id: z.string(), secret: z.string(), secret_rotated_at: z.string(), previous_secret_expires_at: z.string(), warning: z.string() }),
          'Secret rotated; shown once',
        ),
        400: err('Invalid secret'),
        404: err('No such endpoint in this organization'),
        409: err('Rotated concurrently by another request: nothing changed by this one'),
        ...authErrors,
      },
    }),
    async (c) => {
      const requested = (c.req.valid('json') as { secret?: string } | undefined)?.secret;
      const r = await webhooks.rotateSecret(deps, callerOf(c), c.req.valid('param').id, requested);
      const view = {
        id: r.id,
        secret: r.secret,
        secret_rotated_at: r.rotatedAt.toISOString(),
        previous_secret_expires_at: r.previousSecretExpiresAt.toISOString(),
        warning: SECRET_WARNING,
      };
      return c.json(view, 200);
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/webhooks/endpoints/{id}/verify',
      tags,
      scopes: SCOPE_RULES.webhookWrite,
      summary: 'Send a verification ping',
      description:
        'Posts a signed `webhook.ping` to the endpoint now and answers 200 either way: `verified` true and `verified_at` set on a 2xx, else the error. Scope: webhook:write or admin.',
      request: { params: EndpointIdParam },
      responses: {
        200: json(
          z.object({ verified: z.boolean(), error: z.string().nullable(), status_code: z.number().int().nullable(), duration_ms: z.number().int() }),
          'Result of the ping',
        ),
        404: err('No such endpoint in this organization'),
        ...authErrors,
      },
    }),
    async (c) => {
      const result = await webhooks.verifyEndpoint(deps, callerOf(c), c.req.valid('param').id);
      return c.json({ verified: result.ok, error: result.error, status_code: result.statusCode, duration_ms: result.durationMs }, 200);
    },
  );
}

/** The delivery log and redelivery. */
function registerDeliveryRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/webhooks/deliveries',
      tags,
      scopes: SCOPE_RULES.webhookRead,
      summary: 'List webhook deliveries',
      description:
        "The delivery log of the caller's organization, newest first: one row per (event, endpoint) with its status and attempt count. Filter by status (`failed` is the dead-letter view), endpoint, event or event type. Page by `cursor` (the `next_cursor` of the previous page) or by `offset`, not both; `pagination.total` counts every delivery the filters match. Scope: webhook:read, read or admin.",
      request: {
        query: z.object({
          status: z.enum(['pending', 'succeeded', 'failed']).optional(),
          endpoint_id: z.string().optional().openapi({ format: 'uuid' }),
          event_id: z.string().optional().openapi({ format: 'uuid' }),
          event_type: z.string().optional(),
          ...pageQuery(),
        }),
      },
      responses: {
        200: json(z.object({ deliveries: z.array(DeliverySchema), pagination: PaginationSchema }), 'Deliveries'),
        400: err('Invalid query'),
        ...authErrors,
      },
    }),
    async (c) => {
      const { limit, offset, cursor, ...filter } = c.req.valid('query');
      const req = pageRequest({ limit, offset, cursor });
      const { rows, total } = await webhooks.listDeliveries(deps, callerOf(c), filter, { ...req, limit: req.limit + 1 });
      const { page, pagination } = createdAtPage(rows, req, total);
      return c.json({ deliveries: page.map(deliveryView), pagination }, 200);
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/webhooks/deliveries/{id}',
      tags,
      scopes: SCOPE_RULES.webhookRead,
      summary: 'Get a webhook delivery with every attempt',
      description:
        'Includes the exact body sent (`payload`) and the `webhook-id`, so a receiver can reproduce the signature of an attempt from its `webhook_timestamp`. Scope: webhook:read, read or admin.',
      request: { params: DeliveryIdParam },
      responses: { 200: json(DeliveryDetailSchema, 'The delivery'), 404: err('No such delivery in this organization'), ...authErrors },
    }),
    async (c) => {
      const { delivery, event, attempts } = await webhooks.readDelivery(deps, callerOf(c), c.req.valid('param').id);
      const detail = { webhook_id: event.id, payload: JSON.stringify(envelopeOf(event)), attempt_log: attempts.map(attemptView) };
      return c.json({ ...deliveryView(delivery), ...detail }, 200);
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/webhooks/deliveries/{id}/redeliver',
      tags,
      scopes: SCOPE_RULES.webhookWrite,
      summary: 'Deliver again',
      description:
        'Sends the same event (same `webhook-id`) to the same endpoint again now, then on the retry schedule if that attempt fails. Works for delivered, failed and waiting deliveries. 409 when the endpoint is disabled or deleted. Scope: webhook:write or admin.',
      request: { params: DeliveryIdParam },
      responses: {
        202: json(z.object({ id: z.string(), status: z.literal('pending') }), 'Redelivery started'),
        404: err('No such delivery in this organization'),
        409: err('The endpoint is disabled or deleted'),
        503: err('The delivery could not be started (workflow service unavailable); nothing changed, retry later'),
        ...authErrors,
      },
    }),
    async (c) => {
      const d = await webhooks.redeliver(deps, callerOf(c), c.req.valid('param').id);
      return c.json({ id: d.id, status: 'pending' as const }, 202);
    },
  );
}

export function registerWebhookRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  registerEndpointRoutes(app, deps);
  registerEndpointActionRoutes(app, deps);
  registerDeliveryRoutes(app, deps);
}
