/**
 * Webhook endpoints and the delivery log: /v1/webhooks/endpoints[/{id}[/rotate-secret|/verify]],
 * /v1/webhooks/deliveries[/{id}[/redeliver]]. Every lookup is scoped to the caller's organization: another
 * organization's id answers 404. Secrets are returned once (create, rotate) and never logged.
 */
import { randomUUID } from 'node:crypto';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { and, count, desc, eq, isNull, type SQL } from 'drizzle-orm';
import { events, organizations, webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../db/schema.js';
import { restartDelivery } from '../../temporal/webhooks.js';
import { MAX_PREVIOUS_SECRETS, PREVIOUS_SECRET_GRACE_MS, signingSecrets } from '../../webhooks/policy.js';
import { envelopeOf, EVENT_TYPES, PING_EVENT_TYPE } from '../../webhooks/catalogue.js';
import { sendWebhook } from '../../webhooks/sender.js';
import { generateSecret, isValidSecret } from '../../webhooks/signing.js';
import { checkWebhookUrl, UrlRejected } from '../../webhooks/url.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { API_KEY_SCHEME } from '../secure-route.js';
import { ErrorSchema } from '../schemas/common.js';
import { acceptedScopes, requireScope, SCOPES } from './auth-scope.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SECRET_WARNING = 'Store this secret now: it is not shown again. Rotate it if it is lost.';

const err = (description: string) => ({ description, content: { 'application/json': { schema: ErrorSchema } } });
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });
const IdParam = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' }, example: '3f1c2a9e-0d4b-4c57-9a0e-2b8f5d7c6e11' }) });

const eventTypeList = z
  .array(z.enum(EVENT_TYPES as [string, ...string[]]))
  .min(1)
  .max(64)
  .openapi({ description: 'Event types to receive; omit or null for every type.' });

const EndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string().nullable(),
    event_types: z.array(z.string()).nullable(),
    is_active: z.boolean(),
    disabled_at: z.string().nullable(),
    disabled_reason: z.string().nullable(),
    verified_at: z.string().nullable(),
    verification_error: z.string().nullable(),
    last_success_at: z.string().nullable(),
    failing_since: z.string().nullable(),
    consecutive_failures: z.number().int(),
    secret_rotated_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('WebhookEndpoint');

const CreatedEndpointSchema = EndpointSchema.extend({
  verified: z.boolean(),
  secret: z.string().openapi({ description: 'The signing secret (`whsec_…`). Shown only in this response.' }),
  warning: z.string(),
}).openapi('WebhookEndpointCreated');

const DeliverySchema = z
  .object({
    id: z.string(),
    event_id: z.string(),
    endpoint_id: z.string(),
    event_type: z.string(),
    /** pending | succeeded | failed */
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: z.string().nullable(),
    delivered_at: z.string().nullable(),
    failed_at: z.string().nullable(),
    redeliveries: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('WebhookDelivery');

const AttemptSchema = z
  .object({
    attempt: z.number().int(),
    at: z.string(),
    webhook_timestamp: z.number().int(),
    status_code: z.number().int().nullable(),
    duration_ms: z.number().int(),
    succeeded: z.boolean(),
    error: z.string().nullable(),
    response_body: z.string().nullable(),
  })
  .openapi('WebhookAttempt');

const DeliveryDetailSchema = DeliverySchema.extend({
  webhook_id: z.string().openapi({ description: 'The webhook-id header of every attempt (the event id).' }),
  payload: z.string().openapi({ description: 'The exact request body signed and sent on every attempt.' }),
  attempt_log: z.array(AttemptSchema),
}).openapi('WebhookDeliveryDetail');

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function endpointView(e: EndpointRow): z.infer<typeof EndpointSchema> {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    event_types: e.eventTypes ?? null,
    is_active: e.isActive,
    disabled_at: iso(e.disabledAt),
    disabled_reason: e.disabledReason,
    verified_at: iso(e.verifiedAt),
    verification_error: e.verificationError,
    last_success_at: iso(e.lastSuccessAt),
    failing_since: iso(e.failingSince),
    consecutive_failures: e.consecutiveFailures,
    secret_rotated_at: iso(e.secretRotatedAt),
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

function deliveryView(d: DeliveryRow): z.infer<typeof DeliverySchema> {
  return {
    id: d.id,
    event_id: d.eventId,
    endpoint_id: d.endpointId,
    event_type: d.eventType,
    status: d.status as 'pending' | 'succeeded' | 'failed',
    attempts: d.attempts,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    next_attempt_at: iso(d.nextAttemptAt),
    delivered_at: iso(d.deliveredAt),
    failed_at: iso(d.failedAt),
    redeliveries: d.redeliveries,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
  };
}

const tags = ['Webhooks'];
const security = [{ [API_KEY_SCHEME]: [] }];
const authErrors = { 401: err('Missing or invalid API key'), 403: err('API key lacks the scope') };

const createEndpoint = createRoute({
  method: 'post',
  path: '/v1/webhooks/endpoints',
  tags,
  security,
  ...acceptedScopes(SCOPES.webhookWrite),
  summary: 'Register a webhook endpoint',
  description:
    'Adds an endpoint for the caller\'s organization (several are allowed). The URL must be http(s) and must not be a loopback or private address (unless the operator set WEBHOOK_ALLOW_PRIVATE_URLS). Unless `skip_verification` is true a signed `webhook.ping` is sent and a 2xx marks the endpoint verified; the endpoint is created either way. The signing secret is generated unless given (`whsec_` + base64 of 24–64 bytes) and is returned only in this response. Scope: webhook:write or admin.',
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z.object({
            url: z.string().max(2048),
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
});

const listEndpoints = createRoute({
  method: 'get',
  path: '/v1/webhooks/endpoints',
  tags,
  security,
  ...acceptedScopes(SCOPES.webhookRead),
  summary: 'List webhook endpoints',
  description: 'Every endpoint of the caller\'s organization, newest first, without secrets. Scope: webhook:read, read or admin.',
  responses: { 200: json(z.object({ endpoints: z.array(EndpointSchema) }), 'Endpoints'), ...authErrors },
});

const getEndpoint = createRoute({
  method: 'get',
  path: '/v1/webhooks/endpoints/{id}',
  tags,
  security,
  ...acceptedScopes(SCOPES.webhookRead),
  summary: 'Get a webhook endpoint',
  request: { params: IdParam },
  responses: { 200: json(EndpointSchema, 'The endpoint'), 404: err('No such endpoint in this organization'), ...authErrors },
});

const updateEndpoint = createRoute({
  method: 'patch',
  path: '/v1/webhooks/endpoints/{id}',
  tags,
  security,
  ...acceptedScopes(SCOPES.webhookWrite),
  summary: 'Change a webhook endpoint',
  description:
    'Sets the given fields. A new URL is checked like on registration and clears `verified_at`. `is_active: true` re-enables an endpoint the gateway disabled and resets its failure count; events that arrived while it was disabled are in the delivery log as failed (`endpoint disabled`) and, like every delivery that failed meanwhile, can be sent again with redeliver. Scope: webhook:write or admin.',
  request: {
    params: IdParam,
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .object({
              url: z.string().max(2048).optional(),
              event_types: eventTypeList.nullable().optional(),
              description: z.string().max(255).nullable().optional(),
              is_active: z.boolean().optional(),
            })
            .strict(),
        },
      },
    },
  },
  responses: { 200: json(EndpointSchema, 'Endpoint updated'), 400: err('Invalid body or URL'), 404: err('No such endpoint in this organization'), ...authErrors },
});

const deleteEndpoint = createRoute({
  method: 'delete',
  path: '/v1/webhooks/endpoints/{id}',
  tags,
  security,
  ...acceptedScopes(SCOPES.webhookWrite),
  summary: 'Delete a webhook endpoint',
  description: 'Stops all deliveries to the endpoint; its delivery log stays readable. Scope: webhook:write or admin.',
  request: { params: IdParam },
  responses: { 204: { description: 'Deleted' }, 404: err('No such endpoint in this organization'), ...authErrors },
});

const rotateSecret = createRoute({
  method: 'post',
  path: '/v1/webhooks/endpoints/{id}/rotate-secret',
  tags,
  security,
  ...acceptedScopes(SCOPES.webhookWrite),
  summary: 'Rotate the signing secret',
  description:
    'Replaces the secret (generated unless given) and returns it once. For 24 hours every delivery also carries a `v1` signature with the replaced secret (with every earlier one still in its 24 hours too, up to 5), so receivers can switch without losing messages, even when a rotation is retried. 409 when another rotation of the endpoint ran at the same time. Scope: webhook:write or admin.',
  request: {
    params: IdParam,
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
});

const verifyEndpoint = createRoute({
  method: 'post',
  path: '/v1/webhooks/endpoints/{id}/verify',
  tags,
  security,
  ...acceptedScopes(SCOPES.webhookWrite),
  summary: 'Send a verification ping',
  description:
    'Posts a signed `webhook.ping` to the endpoint now and answers 200 either way: `verified` true and `verified_at` set on a 2xx, else the error. Scope: webhook:write or admin.',
  request: { params: IdParam },
  responses: {
    200: json(
      z.object({ verified: z.boolean(), error: z.string().nullable(), status_code: z.number().int().nullable(), duration_ms: z.number().int() }),
      'Result of the ping',
    ),
    404: err('No such endpoint in this organization'),
    ...authErrors,
  },
});

const listDeliveries = createRoute({
  method: 'get',
  path: '/v1/webhooks/deliveries',
  tags,
  security,
  ...acceptedScopes(SCOPES.webhookRead),
  summary: 'List webhook deliveries',
  description:
    'The delivery log of the caller\'s organization, newest first: one row per (event, endpoint) with its status and attempt count. Filter by status (`failed` is the dead-letter view), endpoint, event or event type. Scope: webhook:read, read or admin.',
  request: {
    query: z.object({
      status: z.enum(['pending', 'succeeded', 'failed']).optional(),
      endpoint_id: z.string().optional(),
      event_id: z.string().optional(),
      event_type: z.string().optional(),
      limit: z.coerce.number().int().min(1).max(500).default(50),
      offset: z.coerce.number().int().min(0).default(0),
    }),
  },
  responses: {
    200: json(
      z.object({
        deliveries: z.array(DeliverySchema),
        pagination: z.object({ limit: z.number().int(), offset: z.number().int(), total: z.number().int(), has_more: z.boolean() }),
      }),
      'Deliveries',
    ),
    400: err('Invalid query'),
    ...authErrors,
  },
});

const getDelivery = createRoute({
  method: 'get',
  path: '/v1/webhooks/deliveries/{id}',
  tags,
  security,
  ...acceptedScopes(SCOPES.webhookRead),
  summary: 'Get a webhook delivery with every attempt',
  description:
    'Includes the exact body sent (`payload`) and the `webhook-id`, so a receiver can reproduce the signature of an attempt from its `webhook_timestamp`. Scope: webhook:read, read or admin.',
  request: { params: IdParam },
  responses: { 200: json(DeliveryDetailSchema, 'The delivery'), 404: err('No such delivery in this organization'), ...authErrors },
});

const redeliver = createRoute({
  method: 'post',
  path: '/v1/webhooks/deliveries/{id}/redeliver',
  tags,
  security,
  ...acceptedScopes(SCOPES.webhookWrite),
  summary: 'Deliver again',
  description:
    'Sends the same event (same `webhook-id`) to the same endpoint again now, then on the retry schedule if that attempt fails. Works for delivered, failed and waiting deliveries. 409 when the endpoint is disabled or deleted. Scope: webhook:write or admin.',
  request: { params: IdParam },
  responses: {
    202: json(z.object({ id: z.string(), status: z.literal('pending') }), 'Redelivery started'),
    404: err('No such delivery in this organization'),
    409: err('The endpoint is disabled or deleted'),
    503: err('The delivery could not be started (workflow service unavailable); nothing changed, retry later'),
    ...authErrors,
  },
});

/** When an earlier secret of this endpoint stops signing. */
function expiryOf(e: EndpointRow, secret: string): string {
  const listed = e.previousSecrets?.find((p) => p.secret === secret);
  if (listed) return listed.expires_at;
  return (e.previousSecretExpiresAt ?? new Date(0)).toISOString();
}

export function registerWebhookRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const settings = deps.config.webhooks;

  async function validUrl(raw: string): Promise<string> {
    try {
      return (await checkWebhookUrl(raw, { allowPrivate: settings.allowPrivateUrls })).toString();
    } catch (e) {
      if (e instanceof UrlRejected) throw new ApiError(400, 'INVALID_WEBHOOK_URL', e.message);
      throw e;
    }
  }

  function validSecret(secret: string | undefined): string {
    if (secret === undefined) return generateSecret();
    if (!isValidSecret(secret)) {
      throw new ApiError(400, 'INVALID_WEBHOOK_SECRET', 'secret must be whsec_ followed by base64 of 24 to 64 random bytes');
    }
    return secret;
  }

  async function findEndpoint(orgId: string, id: string): Promise<EndpointRow> {
    if (!UUID.test(id)) throw new ApiError(404, 'NOT_FOUND', 'Webhook endpoint not found');
    const [row] = await db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, orgId), isNull(webhookEndpoints.deletedAt)));
    if (!row) throw new ApiError(404, 'NOT_FOUND', 'Webhook endpoint not found');
    return row;
  }

  async function findDelivery(orgId: string, id: string): Promise<DeliveryRow> {
    if (!UUID.test(id)) throw new ApiError(404, 'NOT_FOUND', 'Webhook delivery not found');
    const [row] = await db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.orgId, orgId)));
    if (!row) throw new ApiError(404, 'NOT_FOUND', 'Webhook delivery not found');
    return row;
  }

  /** A signed webhook.ping; records the outcome on the endpoint. */
  async function ping(endpoint: EndpointRow) {
    const now = new Date();
    const body = JSON.stringify({
      id: `ping_${randomUUID()}`,
      type: PING_EVENT_TYPE,
      timestamp: now.toISOString(),
      resource_id: endpoint.id,
      sequence: 0,
      data: { endpoint_id: endpoint.id, url: endpoint.url },
    });
    // the sender applies the URL rules on the connection itself: the address it judges is the one it connects to
    const result = await sendWebhook({
      url: endpoint.url,
      msgId: JSON.parse(body).id,
      body,
      secrets: signingSecrets(endpoint, now),
      timeoutMs: Math.min(settings.timeoutMs, 10_000),
      allowPrivate: settings.allowPrivateUrls,
    });
    const [updated] = await db
      .update(webhookEndpoints)
      .set(result.ok ? { verifiedAt: new Date(), verificationError: null } : { verificationError: result.error })
      .where(eq(webhookEndpoints.id, endpoint.id))
      .returning();
    return { result, endpoint: updated };
  }

  app.openapi(createEndpoint, async (c) => {
    const auth = requireScope(c, SCOPES.webhookWrite);
    const body = c.req.valid('json');
    const url = await validUrl(body.url);
    const secret = validSecret(body.secret);
    const row = await db.transaction(async (tx) => {
      // the organization's row lock serialises its concurrent creates, so the cap holds exactly
      await tx.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, auth.orgId)).for('update');
      const [{ n }] = await tx
        .select({ n: count() })
        .from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.orgId, auth.orgId), isNull(webhookEndpoints.deletedAt)));
      if (n >= settings.maxEndpointsPerOrg) {
        throw new ApiError(
          409,
          'WEBHOOK_ENDPOINT_LIMIT',
          `An organization may have at most ${settings.maxEndpointsPerOrg} webhook endpoints (WEBHOOK_MAX_ENDPOINTS_PER_ORG); delete one first`,
        );
      }
      const [inserted] = await tx
        .insert(webhookEndpoints)
        .values({ orgId: auth.orgId, url, description: body.description ?? null, eventTypes: body.event_types ?? null, secret })
        .returning();
      return inserted;
    });
    let endpoint = row;
    let verified = false;
    if (!body.skip_verification) {
      const pinged = await ping(row);
      endpoint = pinged.endpoint;
      verified = pinged.result.ok;
    }
    c.get('logger').info('webhook endpoint created', { org_id: auth.orgId, endpoint_id: row.id, verified });
    return c.json({ ...endpointView(endpoint), verified, secret, warning: SECRET_WARNING }, 201);
  });

  app.openapi(listEndpoints, async (c) => {
    const auth = requireScope(c, SCOPES.webhookRead);
    const rows = await db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.orgId, auth.orgId), isNull(webhookEndpoints.deletedAt)))
      .orderBy(desc(webhookEndpoints.createdAt));
    return c.json({ endpoints: rows.map(endpointView) }, 200);
  });

  app.openapi(getEndpoint, async (c) => {
    const auth = requireScope(c, SCOPES.webhookRead);
    return c.json(endpointView(await findEndpoint(auth.orgId, c.req.valid('param').id)), 200);
  });

  app.openapi(updateEndpoint, async (c) => {
    const auth = requireScope(c, SCOPES.webhookWrite);
    const current = await findEndpoint(auth.orgId, c.req.valid('param').id);
    const body = c.req.valid('json');
    const now = new Date();
    const set: Partial<typeof webhookEndpoints.$inferInsert> = { updatedAt: now };
    if (body.url !== undefined) {
      const url = await validUrl(body.url);
      if (url !== current.url) Object.assign(set, { url, verifiedAt: null, verificationError: null });
    }
    if (body.event_types !== undefined) set.eventTypes = body.event_types;
    if (body.description !== undefined) set.description = body.description;
    if (body.is_active === true && !current.isActive) {
      Object.assign(set, { isActive: true, disabledAt: null, disabledReason: null, failingSince: null, consecutiveFailures: 0 });
    } else if (body.is_active === false && current.isActive) {
      Object.assign(set, { isActive: false, disabledAt: now, disabledReason: 'disabled by the API' });
    }
    const [row] = await db.update(webhookEndpoints).set(set).where(eq(webhookEndpoints.id, current.id)).returning();
    return c.json(endpointView(row), 200);
  });

  app.openapi(deleteEndpoint, async (c) => {
    const auth = requireScope(c, SCOPES.webhookWrite);
    const current = await findEndpoint(auth.orgId, c.req.valid('param').id);
    const now = new Date();
    await db
      .update(webhookEndpoints)
      .set({ deletedAt: now, isActive: false, disabledAt: current.disabledAt ?? now, updatedAt: now })
      .where(eq(webhookEndpoints.id, current.id));
    c.get('logger').info('webhook endpoint deleted', { org_id: auth.orgId, endpoint_id: current.id });
    return c.body(null, 204);
  });

  app.openapi(rotateSecret, async (c) => {
    const auth = requireScope(c, SCOPES.webhookWrite);
    const current = await findEndpoint(auth.orgId, c.req.valid('param').id);
    const requested = (c.req.valid('json') as { secret?: string } | undefined)?.secret;
    const secret = validSecret(requested);
    const now = new Date();
    const previousSecretExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS);
    // every earlier secret still in its grace period keeps signing too: a retried rotation (its answer lost) or two
    // in a row must not cut off a secret the receiver still uses
    const previousSecrets = [
      { secret: current.secret, expires_at: previousSecretExpiresAt.toISOString() },
      ...signingSecrets({ ...current, secret: '' }, now)
        .filter((x) => x !== '' && x !== current.secret)
        .map((x) => ({ secret: x, expires_at: expiryOf(current, x) })),
    ].slice(0, MAX_PREVIOUS_SECRETS);
    // conditional on the secret read: of two concurrent rotations one wins, the other answers 409 (its secret was never stored)
    const updated = await db
      .update(webhookEndpoints)
      .set({ secret, previousSecret: current.secret, previousSecretExpiresAt, previousSecrets, secretRotatedAt: now, updatedAt: now })
      .where(and(eq(webhookEndpoints.id, current.id), eq(webhookEndpoints.secret, current.secret)))
      .returning({ id: webhookEndpoints.id });
    if (updated.length === 0) {
      throw new ApiError(409, 'CONCURRENT_ROTATION', 'The secret was rotated concurrently; read the endpoint and rotate again if needed');
    }
    c.get('logger').info('webhook secret rotated', { org_id: auth.orgId, endpoint_id: current.id });
    return c.json(
      {
        id: current.id,
        secret,
        secret_rotated_at: now.toISOString(),
        previous_secret_expires_at: previousSecretExpiresAt.toISOString(),
        warning: SECRET_WARNING,
      },
      200,
    );
  });

  app.openapi(verifyEndpoint, async (c) => {
    const auth = requireScope(c, SCOPES.webhookWrite);
    const current = await findEndpoint(auth.orgId, c.req.valid('param').id);
    const { result } = await ping(current);
    return c.json({ verified: result.ok, error: result.error, status_code: result.statusCode, duration_ms: result.durationMs }, 200);
  });

  app.openapi(listDeliveries, async (c) => {
    const auth = requireScope(c, SCOPES.webhookRead);
    const q = c.req.valid('query');
    const where: SQL[] = [eq(webhookDeliveries.orgId, auth.orgId)];
    if (q.status) where.push(eq(webhookDeliveries.status, q.status));
    if (q.endpoint_id) {
      if (!UUID.test(q.endpoint_id)) throw new ApiError(400, 'VALIDATION_ERROR', 'endpoint_id: must be a UUID', { field: 'endpoint_id' });
      where.push(eq(webhookDeliveries.endpointId, q.endpoint_id));
    }
    if (q.event_id) {
      if (!UUID.test(q.event_id)) throw new ApiError(400, 'VALIDATION_ERROR', 'event_id: must be a UUID', { field: 'event_id' });
      where.push(eq(webhookDeliveries.eventId, q.event_id));
    }
    if (q.event_type) where.push(eq(webhookDeliveries.eventType, q.event_type));
    const [{ total }] = await db.select({ total: count() }).from(webhookDeliveries).where(and(...where));
    const rows = await db
      .select()
      .from(webhookDeliveries)
      .where(and(...where))
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
      .limit(q.limit)
      .offset(q.offset);
    return c.json(
      { deliveries: rows.map(deliveryView), pagination: { limit: q.limit, offset: q.offset, total, has_more: q.offset + rows.length < total } },
      200,
    );
  });

  app.openapi(getDelivery, async (c) => {
    const auth = requireScope(c, SCOPES.webhookRead);
    const d = await findDelivery(auth.orgId, c.req.valid('param').id);
    const [event] = await db.select().from(events).where(eq(events.id, d.eventId));
    const attempts = await db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.deliveryId, d.id))
      .orderBy(webhookAttempts.attempt);
    return c.json(
      {
        ...deliveryView(d),
        webhook_id: event.id,
        payload: JSON.stringify(envelopeOf(event)),
        attempt_log: attempts.map((a) => ({
          attempt: a.attempt,
          at: a.createdAt.toISOString(),
          webhook_timestamp: a.webhookTimestamp,
          status_code: a.statusCode,
          duration_ms: a.durationMs,
          succeeded: a.succeeded,
          error: a.error,
          response_body: a.responseBody,
        })),
      },
      200,
    );
  });

  app.openapi(redeliver, async (c) => {
    const auth = requireScope(c, SCOPES.webhookWrite);
    const d = await findDelivery(auth.orgId, c.req.valid('param').id);
    const [endpoint] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, d.endpointId));
    if (!endpoint || endpoint.deletedAt || !endpoint.isActive) {
      throw new ApiError(409, 'ENDPOINT_DISABLED', 'The endpoint is disabled or deleted; re-enable it (PATCH is_active) first');
    }
    const now = new Date();
    // pending first (the workflow's proceed check needs it), but workflow_started_at only once the start succeeded:
    // a failed start is rolled back and answered 503, and whatever is left pending the dispatcher sweeps up
    await db
      .update(webhookDeliveries)
      .set({ status: 'pending', failedAt: null, nextAttemptAt: now, redeliveries: d.redeliveries + 1, updatedAt: now })
      .where(eq(webhookDeliveries.id, d.id));
    try {
      await restartDelivery(deps.temporal, deps.config.temporal.taskQueue, d.id, d.orgId);
    } catch (e) {
      await db
        .update(webhookDeliveries)
        .set({ status: d.status, failedAt: d.failedAt, nextAttemptAt: d.nextAttemptAt, redeliveries: d.redeliveries, updatedAt: new Date() })
        .where(and(eq(webhookDeliveries.id, d.id), eq(webhookDeliveries.updatedAt, now)));
      c.get('logger').warn('webhook redelivery could not start', { org_id: auth.orgId, delivery_id: d.id, error: (e as Error).message });
      throw new ApiError(503, 'REDELIVERY_UNAVAILABLE', 'The delivery could not be started now; nothing changed, retry later');
    }
    await db.update(webhookDeliveries).set({ workflowStartedAt: new Date() }).where(eq(webhookDeliveries.id, d.id));
    c.get('logger').info('webhook redelivery', { org_id: auth.orgId, delivery_id: d.id });
    return c.json({ id: d.id, status: 'pending' as const }, 202);
  });
}
