/** Intents, their proof cycle per chain, and the proofs they end in. */
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { ChainCycleRecord } from '../../protocol/cycle-record.js';
import { createdAt, updatedAt } from './columns.js';
import { identities } from './identities.js';
import { organizations } from './platform.js';

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
    /** external: the client signed; provider: the gateway signed with the key it holds for the identity */
    signingMode: text('signing_mode').notNull().default('external'),
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
  (t) => [
    index('intents_org_idx').on(t.orgId, t.createdAt),
    index('intents_tx_hash_idx').on(t.txHash),
    // the expiry sweep's look-up: unsigned intents by expiry
    index('intents_unsigned_expiry_idx').on(t.expiresAt).where(sql`${t.status} = 'signing_required'`),
  ],
);

/** What the client signs, as stored with the intent and answered by prepare (and by fresh signing data). */
export interface SigningData {
  request_id: string;
  transaction_hash: string;
  hash_to_sign: string;
  public_key: string;
  signer_key_page: string;
  key_page_version: number;
}

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
 * (src/protocol/cycle-record.ts ChainCycleRecord) filled step by step.
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
