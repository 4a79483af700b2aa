/**
 * Events and webhooks. An event row is written in the same transaction as the state change it reports
 * (src/db/events.ts); the webhook dispatcher fans it out to matching endpoints as delivery rows, each delivered by its
 * own Temporal workflow.
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgSequence, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns.js';
import { organizations } from './platform.js';

/** Hands out `events.listed_seq`. */
export const eventsListedSeq = pgSequence('events_listed_seq');

/** One row per event. `dispatched_at` null = not yet fanned out to endpoints (the transactional outbox). */
export const events = pgTable(
  'events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** global insertion order: the cursor of GET /v1/events */
    position: bigint('position', { mode: 'number' }).generatedAlwaysAsIdentity(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    type: text('type').notNull(),
    resourceId: text('resource_id').notNull(),
    /** 1, 2, 3, … per (organization, resource): receivers drop events older than the last one they applied */
    sequence: integer('sequence').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
    dispatchedAt: timestamp('dispatched_at', { withTimezone: true, mode: 'date' }),
    /**
     * Commit-ordered listing position, assigned by the dispatcher (one dispatch at a time, under an advisory lock)
     * when it fans the event out: an event listed later always has a larger value, so a catch-up reader paging
     * forward (GET /v1/events?order=asc) never skips one. `position` is insertion order, not commit order.
     */
    listedSeq: bigint('listed_seq', { mode: 'number' }),
  },
  (t) => [
    uniqueIndex('events_position_uq').on(t.position),
    uniqueIndex('events_listed_seq_uq').on(t.listedSeq),
    index('events_org_listed_idx').on(t.orgId, t.listedSeq),
    uniqueIndex('events_resource_seq_uq').on(t.orgId, t.resourceId, t.sequence),
    index('events_org_position_idx').on(t.orgId, t.position),
    index('events_undispatched_idx').on(t.position).where(sql`${t.dispatchedAt} is null`),
  ],
);

/** The last sequence number handed out per (organization, resource); an atomic upsert serialises writers. */
export const eventSequences = pgTable(
  'event_sequences',
  {
    orgId: uuid('org_id').notNull(),
    resourceId: text('resource_id').notNull(),
    lastSequence: integer('last_sequence').notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.resourceId] })],
);

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    url: text('url').notNull(),
    description: text('description'),
    /** null = every event type */
    eventTypes: jsonb('event_types').$type<string[] | null>(),
    /** `whsec_` + base64; HMAC needs the secret itself, so it is stored (never logged, returned once) */
    secret: text('secret').notNull(),
    /** the secret before the last rotation, still signed with until `previous_secret_expires_at` */
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, mode: 'date' }),
    /**
     * Every earlier secret still in its grace period (newest first, at most MAX_PREVIOUS_SECRETS): a retried or
     * repeated rotation must not drop a secret a receiver may still verify with. `previous_secret` mirrors the newest.
     */
    previousSecrets: jsonb('previous_secrets').$type<{ secret: string; expires_at: string }[]>().notNull().default([]),
    secretRotatedAt: timestamp('secret_rotated_at', { withTimezone: true, mode: 'date' }),
    isActive: boolean('is_active').notNull().default(true),
    disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
    disabledReason: text('disabled_reason'),
    verifiedAt: timestamp('verified_at', { withTimezone: true, mode: 'date' }),
    verificationError: text('verification_error'),
    lastSuccessAt: timestamp('last_success_at', { withTimezone: true, mode: 'date' }),
    /** first failed attempt since the last success; null while healthy */
    failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    /** the latest failed attempt: a failure long after it starts a new failing streak (failing_since is stale) */
    lastFailureAt: timestamp('last_failure_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('webhook_endpoints_org_idx').on(t.orgId, t.createdAt)],
);

/** One row per (event, endpoint). */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id),
    eventType: text('event_type').notNull(),
    /** pending | succeeded | failed */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
    failedAt: timestamp('failed_at', { withTimezone: true, mode: 'date' }),
    /** set once the dispatcher has started the delivery workflow */
    workflowStartedAt: timestamp('workflow_started_at', { withTimezone: true, mode: 'date' }),
    redeliveries: integer('redeliveries').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_event_endpoint_uq').on(t.eventId, t.endpointId),
    index('webhook_deliveries_org_idx').on(t.orgId, t.createdAt),
    index('webhook_deliveries_unstarted_idx').on(t.createdAt).where(sql`${t.workflowStartedAt} is null`),
    /** the dispatcher's sweep for deliveries whose workflow was lost */
    index('webhook_deliveries_pending_idx').on(t.createdAt).where(sql`${t.status} = 'pending'`),
  ],
);

/** Every HTTP attempt of a delivery. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id),
    attempt: integer('attempt').notNull(),
    /** the webhook-timestamp header sent (unix seconds) */
    webhookTimestamp: bigint('webhook_timestamp', { mode: 'number' }).notNull(),
    statusCode: integer('status_code'),
    durationMs: integer('duration_ms').notNull(),
    error: text('error'),
    /** the first 1 kB of the receiver's answer */
    responseBody: text('response_body'),
    succeeded: boolean('succeeded').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('webhook_attempts_delivery_attempt_uq').on(t.deliveryId, t.attempt)],
);
