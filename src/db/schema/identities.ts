/** Identities (an ADI with its key book, key page and data account) and their abstract accounts per chain. */
import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns.js';
import { organizations } from './platform.js';

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
    /** external (the client holds the key) | provider (the gateway holds it: provider_keys) */
    signingMode: text('signing_mode').notNull().default('external'),
    /** provider identities: what the gateway may sign (src/services/provider-policy.ts); null: nothing */
    providerPolicy: jsonb('provider_policy').$type<Record<string, unknown>>(),
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
