/** The webhook API's objects: endpoints (the secret never shown but once), deliveries and their attempts. */
import { z } from '@hono/zod-openapi';
import type { AttemptRow, DeliveryRow, EndpointRow } from '../../db/webhooks.js';
import { EVENT_TYPES } from '../../webhooks/catalogue.js';

/** An absolute http or https URL: the form a webhook endpoint's url takes (where it may point is checked when it is registered). */
export const WEBHOOK_URL_PATTERN = '^[hH][tT][tT][pP][sS]?://[^/?#@\\s]+';

export const eventTypeList = z
  .array(z.enum(EVENT_TYPES as [string, ...string[]]))
  .min(1)
  .max(64)
  .openapi({ description: 'Event types to receive; omit or null for every type.' });

export const EndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string().nullable(),
    event_types: z.array(z.string()).nullable(),
    is_active: z.boolean(),
    disabled_at: z.string().nullable(),
    disabled_reason: z.string().nullable(),
    verified: z.boolean().openapi({ description: 'Whether a verification ping succeeded (verified_at is set); a new URL clears it' }),
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

export const CreatedEndpointSchema = EndpointSchema.extend({
  secret: z.string().openapi({ description: 'The signing secret (`whsec_…`). Shown only in this response.' }),
  warning: z.string(),
}).openapi('WebhookEndpointCreated');

export const DeliverySchema = z
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

export const DeliveryDetailSchema = DeliverySchema.extend({
  webhook_id: z.string().openapi({ description: 'The webhook-id header of every attempt (the event id).' }),
  payload: z.string().openapi({ description: 'The exact request body signed and sent on every attempt.' }),
  attempt_log: z.array(AttemptSchema),
}).openapi('WebhookDeliveryDetail');

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
    verified: e.verifiedAt !== null,
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

export function deliveryView(d: DeliveryRow): z.infer<typeof DeliverySchema> {
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

export function attemptView(a: AttemptRow): z.infer<typeof AttemptSchema> {
  return {
    attempt: a.attempt,
    at: a.createdAt.toISOString(),
    webhook_timestamp: a.webhookTimestamp,
    status_code: a.statusCode,
    duration_ms: a.durationMs,
    succeeded: a.succeeded,
    error: a.error,
    response_body: a.responseBody,
  };
}
