/** Governance, the pending inbox and co-signing. */
import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns.js';
import { identities } from './identities.js';
import { organizations } from './platform.js';

/** The owning organization / identity of a row (required foreign keys). */
const orgRef = () =>
  uuid('org_id')
    .notNull()
    .references(() => organizations.id);
const identityRef = () =>
  uuid('identity_id')
    .notNull()
    .references(() => identities.id);

/** A governance operation: one prepared UpdateKeyPage / UpdateAccountAuth / CreateKeyPage / CreateTokenAccount, signed through `governance-<id>`. */
export const governanceOps = pgTable(
  'governance_ops',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: orgRef(),
    identityId: identityRef(),
    /** key_page | authority | create_key_page | create_token_account */
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

/** A pending ledger transaction that involves one of an organization's identities. */
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
    /** the ledger transaction header's memo, as the pending scan read it; null when it has none */
    memo: text('memo'),
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
