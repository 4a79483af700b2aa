/**
 * The system of record (drizzle, Postgres dialect; the same schema runs on PGlite).
 * Migrations in ./migrations are generated from this file with `npm run db:generate`.
 */
import { sql } from 'drizzle-orm';
import type { ChainCycleRecord } from '../proof/cycle-record.js';
import {
  pgSequence,
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

/**
 * Millisecond precision, as a JS Date and the API's ISO strings carry it: list cursors are (created_at, id) taken
 * from a row, so a microsecond created_at would make the next page's `created_at < cursor` skip rows of the same
 * millisecond.
 */
const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

export const organizations = pgTable(
  'organizations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    /** how many identities may exist at once (retired ones do not count) */
    identityQuota: integer('identity_quota').notNull().default(10),
    /** ledger credits granted to the organization's identities in total (sandbox grant) */
    creditGrant: bigint('credit_grant', { mode: 'bigint' }).notNull().default(sql`10000`),
    creditsUsed: bigint('credits_used', { mode: 'bigint' }).notNull().default(sql`0`),
    /** created by self-service sign-up (POST /portal/signup); these count against SIGNUP_MAX_PER_HOUR */
    selfService: boolean('self_service').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [index('organizations_self_service_created_idx').on(t.createdAt).where(sql`${t.selfService}`)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    /** the first characters of the raw key, for listings ("ck_live_AbCd") */
    keyPrefix: text('key_prefix').notNull(),
    /** hex SHA-256 of the raw key; the raw key itself is never stored */
    keyHash: text('key_hash').notNull(),
    permissions: jsonb('permissions').$type<string[]>().notNull(),
    isAdmin: boolean('is_admin').notNull().default(false),
    rateLimitRpm: integer('rate_limit_rpm').notNull().default(60),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('api_keys_key_hash_uq').on(t.keyHash), index('api_keys_org_idx').on(t.orgId)],
);

export const identities = pgTable(
  'identities',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    adiUrl: text('adi_url').notNull(),
    bookUrl: text('book_url').notNull(),
    keyPageUrl: text('key_page_url').notNull(),
    dataAccountUrl: text('data_account_url').notNull(),
    /** hex Ed25519 public key (32 bytes), absent for hash-only identities */
    publicKey: text('public_key'),
    /** hex SHA-256 of the raw 32 public key bytes */
    publicKeyHash: text('public_key_hash').notNull(),
    /** creating | active | failed | retired */
    status: text('status').notNull().default('creating'),
    /** provisioning step, mirrored to the workflow's Stage search attribute */
    stage: text('stage').notNull().default('queued'),
    requestedChains: jsonb('requested_chains').$type<string[]>().notNull(),
    requestedCredits: bigint('requested_credits', { mode: 'bigint' }).notNull().default(sql`0`),
    creditBalance: bigint('credit_balance', { mode: 'bigint' }).notNull().default(sql`0`),
    errorMessage: text('error_message'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    retiredAt: timestamp('retired_at', { withTimezone: true, mode: 'date' }),
    /** when provisioning finished (status became active) */
    provisionedAt: timestamp('provisioned_at', { withTimezone: true, mode: 'date' }),
    /**
     * Ledger transactions the provisioning workflow signed, per step ({ step: { txId, envelope } }), written
     * BEFORE submission so that a retry after a crash resubmits or follows the same transaction instead of
     * signing a second one (exactly-once credits).
     */
    ledgerTxs: jsonb('ledger_txs').$type<Record<string, { txId: string; envelope: unknown; submittedAt: string }>>().notNull().default({}),
  },
  (t) => [
    // one live identity per ADI; a retired identity frees the name inside the gateway (the ledger keeps the ADI)
    uniqueIndex('identities_adi_url_live_uq').on(t.adiUrl).where(sql`status <> 'retired'`),
    index('identities_org_idx').on(t.orgId, t.createdAt),
    index('identities_org_status_idx').on(t.orgId, t.status),
  ],
);

export const chainAccounts = pgTable(
  'chain_accounts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    identityId: uuid('identity_id')
      .notNull()
      .references(() => identities.id),
    chain: text('chain').notNull(),
    chainId: bigint('chain_id', { mode: 'bigint' }).notNull(),
    address: text('address').notNull(),
    deploymentTx: text('deployment_tx'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('chain_accounts_identity_chain_uq').on(t.identityId, t.chain)],
);

export const intents = pgTable(
  'intents',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    identityId: uuid('identity_id')
      .notNull()
      .references(() => identities.id),
    /** signing_required | submitted | completed | failed | expired */
    status: text('status').notNull().default('signing_required'),
    /** signing_required | submitted | attesting | anchoring | executing | observing | recording | completed | failed */
    stage: text('stage').notNull().default('signing_required'),
    /** multi_leg | transfer (the request shape) */
    intentType: text('intent_type').notNull().default('multi_leg'),
    /** the canonical intent as written to the ledger: { parts: [4 canonical JSON strings] } */
    intent: jsonb('intent').notNull(),
    operationId: text('operation_id').notNull(),
    /** request_id, transaction_hash, hash_to_sign (what the client signs) */
    signingData: jsonb('signing_data').notNull(),
    /** everything needed to rebuild the prepared ledger transaction byte for byte at submission */
    prepared: jsonb('prepared').$type<PreparedIntentTx>().notNull(),
    /** hex Ed25519 key nominated to sign (hash_to_sign is bound to it) */
    signerPublicKey: text('signer_public_key').notNull(),
    signerKeyPage: text('signer_key_page').notNull(),
    /** ledger TxID of the intent's WriteData once submitted */
    ledgerTxId: text('ledger_tx_id'),
    txHash: text('tx_hash'),
    proofId: uuid('proof_id'),
    errorMessage: text('error_message'),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    submittedAt: timestamp('submitted_at', { withTimezone: true, mode: 'date' }),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('intents_org_idx').on(t.orgId, t.createdAt), index('intents_tx_hash_idx').on(t.txHash)],
);

export interface PreparedIntentTx {
  principal: string;
  memo: string;
  /** ISO time: the ledger transaction expires then (the intent's expires_at) */
  expireAt: string;
  signerUrl: string;
  publicKey: string;
  signerVersion: number;
  timestamp: number;
  txId: string;
  txHash: string;
  hashToSign: string;
}

/**
 * The proof cycle of one intent on one chain (a child workflow each): its stage and the cycle record
 * (src/proof/cycle-record.ts ChainCycleRecord) filled step by step.
 */
export const intentChains = pgTable(
  'intent_chains',
  {
    intentId: uuid('intent_id')
      .notNull()
      .references(() => intents.id),
    chain: text('chain').notNull(),
    /** pending | attesting | anchoring | executing | observing | recording | completed | failed */
    stage: text('stage').notNull().default('pending'),
    record: jsonb('record').$type<ChainCycleRecord>().notNull(),
    /** ISO times of the steps, for the custody chain: { attested, anchored, executed, observed, recorded } */
    stepTimes: jsonb('step_times').$type<Record<string, string>>().notNull().default({}),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.intentId, t.chain] })],
);

/** The proof of a completed (or partly completed) intent: the bundle and its hash-linked custody chain. */
export const proofs = pgTable(
  'proofs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    intentId: uuid('intent_id')
      .notNull()
      .references(() => intents.id),
    /** the bundle as served: canonical JSON text (src/proof/bundle.ts) */
    bundle: text('bundle').notNull(),
    bundleHash: text('bundle_hash').notNull(),
    custody: jsonb('custody').$type<unknown[]>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('proofs_intent_uq').on(t.intentId), index('proofs_org_idx').on(t.orgId, t.createdAt)],
);

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    orgId: uuid('org_id').notNull(),
    key: text('key').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    requestHash: text('request_hash').notNull(),
    /** in_progress | completed */
    state: text('state').notNull(),
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body'),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.key] }), index('idempotency_keys_expires_idx').on(t.expiresAt)],
);

/** Fixed-window request counters shared by every API process (atomic upsert per request). */
export const rateLimitCounters = pgTable(
  'rate_limit_counters',
  {
    bucket: text('bucket').notNull(),
    windowStart: timestamp('window_start', { withTimezone: true, mode: 'date' }).notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.windowStart] }), index('rate_limit_window_idx').on(t.windowStart)],
);

// ---------------------------------------------------------------------------------------------------------------
// Events and webhooks (issue 10). An event row is written in the same transaction as the state change it reports
// (src/db/events.ts); the webhook dispatcher fans it out to matching endpoints as delivery rows, each delivered by
// its own Temporal workflow.

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

// ---------------------------------------------------------------------------------------------------------------
// Governance, the pending inbox and co-signing (issue 9).

/** The owning organization / identity of a row (required foreign keys). */
const orgRef = () =>
  uuid('org_id')
    .notNull()
    .references(() => organizations.id);
const identityRef = () =>
  uuid('identity_id')
    .notNull()
    .references(() => identities.id);

/** A governance operation: one prepared UpdateKeyPage / UpdateAccountAuth / CreateKeyPage, signed through `governance-<id>`. */
export const governanceOps = pgTable(
  'governance_ops',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: orgRef(),
    identityId: identityRef(),
    /** key_page | authority | create_key_page */
    kind: text('kind').notNull(),
    /** the operations as requested (API shape) */
    operations: jsonb('operations').$type<Record<string, unknown>[]>().notNull(),
    /** signing_required | pending_signatures | executed | rejected | failed | expired */
    status: text('status').notNull().default('signing_required'),
    principal: text('principal').notNull(),
    /** the key page that signs (and whose threshold counts) */
    signerUrl: text('signer_url').notNull(),
    txHash: text('tx_hash').notNull(),
    txId: text('tx_id').notNull(),
    /** the prepared initiating signature (StoredPreparedSignature) */
    prepared: jsonb('prepared').$type<Record<string, unknown>>().notNull(),
    keyPageVersion: integer('key_page_version').notNull(),
    /**
     * the signing page's threshold at keyPageVersion, read when the operation was prepared: what its signatures had
     * to meet, also once the operation changed the page (null for operations prepared before it was recorded)
     */
    signerThreshold: integer('signer_threshold'),
    /** hex public keys whose signature the gateway submitted for this operation */
    signedKeys: jsonb('signed_keys').$type<string[]>().notNull().default([]),
    errorMessage: text('error_message'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('governance_ops_org_idx').on(t.orgId, t.createdAt), index('governance_ops_tx_hash_idx').on(t.txHash)],
);

/** A pending ledger transaction that involves one of an organization's identities (spec §2.3). */
export const pendingActions = pgTable(
  'pending_actions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: orgRef(),
    identityId: identityRef(),
    txHash: text('tx_hash').notNull(),
    txId: text('tx_id').notNull(),
    principal: text('principal').notNull(),
    /** governance | transactions */
    category: text('category').notNull(),
    /** the ledger transaction type, e.g. updateKeyPage */
    type: text('type').notNull(),
    /** eligible | awaiting_others while open; executed | rejected | expired once resolved */
    status: text('status').notNull(),
    collectedSignatures: integer('collected_signatures').notNull(),
    threshold: integer('threshold').notNull(),
    userHasSigned: boolean('user_has_signed').notNull(),
    awaitingAuthorities: jsonb('awaiting_authorities').$type<string[]>().notNull(),
    isReady: boolean('is_ready').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    discoveredAt: timestamp('discovered_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    resolvedAt: timestamp('resolved_at', { withTimezone: true, mode: 'date' }),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('pending_actions_identity_tx_uq').on(t.identityId, t.txHash),
    index('pending_actions_org_open_idx').on(t.orgId, t.discoveredAt).where(sql`${t.resolvedAt} is null`),
  ],
);

/** The last pending-discovery scan of an organization. */
export const pendingScans = pgTable('pending_scans', {
  orgId: uuid('org_id')
    .primaryKey()
    .references(() => organizations.id),
  lastScanAt: timestamp('last_scan_at', { withTimezone: true, mode: 'date' }).notNull(),
  /** the last scan hit a transient ledger error: some actions may be stale; none were resolved on its account */
  degraded: boolean('degraded').notNull(),
  error: text('error'),
});

/** A prepared co-signature (POST /v1/sign): claimed atomically on submission, spent once. */
export const signRequests = pgTable(
  'sign_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: orgRef(),
    identityId: uuid('identity_id').references(() => identities.id),
    pendingActionId: uuid('pending_action_id'),
    txHash: text('tx_hash').notNull(),
    txId: text('tx_id').notNull(),
    signerUrl: text('signer_url').notNull(),
    publicKey: text('public_key').notNull(),
    /** approve | reject | abstain (API words) */
    vote: text('vote').notNull(),
    prepared: jsonb('prepared').$type<Record<string, unknown>>().notNull(),
    /** signing_required | claimed | submitted | failed */
    status: text('status').notNull().default('signing_required'),
    claimedAt: timestamp('claimed_at', { withTimezone: true, mode: 'date' }),
    submittedAt: timestamp('submitted_at', { withTimezone: true, mode: 'date' }),
    errorMessage: text('error_message'),
    createdAt: createdAt(),
  },
  (t) => [index('sign_requests_org_idx').on(t.orgId, t.createdAt)],
);
