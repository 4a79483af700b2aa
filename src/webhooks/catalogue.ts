/**
 * The event catalogue: every event type the gateway emits and the zod schema of its `data`. `recordEvent`
 * (src/db/events.ts) validates against these, so a flow cannot emit a payload receivers were not promised.
 * Schemas are strict: every field a payload carries is listed here, in the forms of docs/api-conventions.md
 * (ledger hashes 64 lowercase hex without 0x, EVM hashes 0x + lowercase hex, addresses EIP-55, counts, thresholds,
 * credits and EVM chain ids as JSON numbers, one name per concept). New fields may be added; receivers ignore
 * fields they do not know. Events stored in an earlier form are served in these forms (`envelopeOf`).
 */
import { z } from 'zod';
import { currentEventData } from './stored-forms.js';

const uuid = z.uuid();
const iso = z.iso.datetime({ offset: true });
/** a ledger hash: 64 lowercase hex, no 0x */
const ledgerHash = z.string().regex(/^[0-9a-f]{64}$/, 'a ledger hash: 64 lowercase hex without 0x');
/** an EVM transaction hash: 0x + 64 lowercase hex */
const evmHash = z.string().regex(/^0x[0-9a-f]{64}$/, 'an EVM hash: 0x + 64 lowercase hex');
/** an EVM account address (EIP-55 mixed case) */
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address: 0x + 40 hex');
/** a chain by its registry id (GET /v1/chains), e.g. polygon-amoy */
const chainName = z.string().regex(/^[a-z][a-z0-9-]*$/, 'a chain registry id');
const evmChainId = z.number().int().positive();
const count = z.number().int().min(0);

/** A chain account as the REST identity view shows it (`chain_accounts[]` of GET /v1/identity/{id}). */
const chainAccount = z.strictObject({
  chain: chainName,
  /** the same registry id as `chain`: the name Certen clients read */
  chain_id: chainName,
  evm_chain_id: evmChainId,
  address: evmAddress,
  /** the EVM transaction that deployed it; null when the account was found deployed and its deployment not located */
  deployment_tx: evmHash.nullable(),
  /** always true: an account is recorded once its code is on the chain */
  deployed: z.literal(true),
});
/** One executed leg of an intent. */
const execution = z.strictObject({ leg_id: z.string(), chain: chainName, evm_chain_id: evmChainId, tx_hash: evmHash });

/** Where the co-signing of a ledger transaction stands (the signing page's signatures against its threshold). */
const signingProgress = z.strictObject({
  collected_signatures: count,
  required_signatures: z.number().int().positive(),
  /** key books whose approval the ledger still waits for */
  awaiting_authorities: z.array(z.string()),
  /** the ledger executed the transaction, or it has every approval it needs */
  is_ready: z.boolean(),
});

export const EVENT_SCHEMAS = {
  /** an identity finished provisioning; its accounts exist on the ledger and every requested chain */
  'identity.active': z.strictObject({
    identity_id: uuid,
    name: z.string(),
    adi_url: z.string(),
    book_url: z.string(),
    key_page_url: z.string(),
    data_account_url: z.string(),
    public_key_hash: ledgerHash,
    /** whole credits on the key page */
    credit_balance: count,
    chain_accounts: z.array(chainAccount),
  }),
  /** provisioning stopped for good; `stage` is where */
  'identity.failed': z.strictObject({
    identity_id: uuid,
    name: z.string(),
    stage: z.string(),
    error: z.string(),
  }),
  /** an active identity's account was deployed on one more chain (PATCH /v1/identity/{id} with link_chains) */
  'identity.chain_linked': z.strictObject({
    identity_id: uuid,
    adi_url: z.string(),
    chain_account: chainAccount,
  }),
  /** linking a chain stopped for good; the chain left the identity's requested_chains */
  'identity.chain_link_failed': z.strictObject({
    identity_id: uuid,
    adi_url: z.string(),
    chain: chainName,
    error: z.string(),
  }),
  /** the signed intent was accepted by the ledger; the proof cycle runs */
  'transaction.submitted': z.strictObject({
    intent_id: uuid,
    identity_id: uuid,
    operation_id: z.string(),
    /** the ledger transaction */
    tx_hash: ledgerHash,
    /**
     * how far the co-signing stands right after the intent's signature (GET /v1/transaction/{id}'s
     * signing_progress): absent when the ledger did not tell in time, and on events recorded before it was carried
     */
    signing_progress: signingProgress.optional(),
  }),
  /** every leg executed and was attested; the proof is available */
  'transaction.completed': z.strictObject({
    intent_id: uuid,
    identity_id: uuid,
    operation_id: z.string(),
    proof_id: uuid,
    executions: z.array(execution),
  }),
  'transaction.failed': z.strictObject({
    intent_id: uuid,
    identity_id: uuid,
    operation_id: z.string(),
    stage: z.string(),
    error: z.string(),
  }),
  /** a governance operation (key page / account authority change) executed on the ledger */
  'governance.executed': z.strictObject({
    governance_op_id: uuid,
    identity_id: uuid,
    operation: z.string(),
    /** the ledger transaction */
    tx_hash: ledgerHash,
  }),
  'governance.rejected': z.strictObject({
    governance_op_id: uuid,
    identity_id: uuid,
    operation: z.string(),
    reason: z.string(),
  }),
  /** a pending action awaits a signature from one of the identity's keys (the fields of GET /v1/pending's action) */
  'inbox.action_pending': z.strictObject({
    pending_action_id: uuid,
    identity_id: uuid,
    /** as GET /v1/pending's `category`: governance (key page and authority changes) or transactions */
    category: z.enum(['governance', 'transactions']),
    /** the pending ledger transaction */
    tx_hash: ledgerHash,
    /** the signing page's accept threshold */
    required_signatures: z.number().int().positive(),
    collected_signatures: count,
    remaining_needed: count,
    expires_at: iso.nullable(),
  }),
  /** a webhook endpoint was switched off by the gateway (sustained failure or 410 Gone) */
  'webhook_endpoint.disabled': z.strictObject({
    endpoint_id: uuid,
    url: z.string(),
    reason: z.string(),
    failing_since: iso.nullable(),
    consecutive_failures: count,
  }),
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;

/** The `data` of an event of any type: what GET /v1/events and the OpenAPI document describe. */
export const EVENT_DATA_SCHEMA = z
  .union(
    Object.entries(EVENT_SCHEMAS).map(([type, schema]) => schema.describe(`The data of ${type}`)) as unknown as [
      z.ZodType<EventPayload>,
      ...z.ZodType<EventPayload>[],
    ],
  )
  .meta({ description: "The payload of the event's type: one schema per type of the catalogue (src/webhooks/catalogue.ts)" });
export type EventPayload = z.output<(typeof EVENT_SCHEMAS)[EventType]>;
export type EventData<T extends EventType> = z.input<(typeof EVENT_SCHEMAS)[T]>;
export const EVENT_TYPES = Object.keys(EVENT_SCHEMAS) as EventType[];
export const eventTypeSchema = z.enum(EVENT_TYPES as [EventType, ...EventType[]]);

/** the synthetic message the verification ping sends; never stored as an event, never filtered out */
export const PING_EVENT_TYPE = 'webhook.ping';

export function isEventType(s: string): s is EventType {
  return Object.hasOwn(EVENT_SCHEMAS, s);
}

/** The body every delivery posts (the signed bytes are `JSON.stringify` of this, identical on every retry). */
export interface EventEnvelope {
  id: string;
  type: string;
  /** when the event happened (ISO 8601 UTC) */
  timestamp: string;
  resource_id: string;
  /** per-resource order: apply an event only if its sequence is above the last one applied */
  sequence: number;
  data: EventPayload;
}

export function envelopeOf(e: {
  id: string;
  type: string;
  createdAt: Date;
  resourceId: string;
  sequence: number;
  data: Record<string, unknown>;
}): EventEnvelope {
  return {
    id: e.id,
    type: e.type,
    timestamp: e.createdAt.toISOString(),
    resource_id: e.resourceId,
    sequence: e.sequence,
    // rows written before the payloads followed the API conventions are served in the current forms
    data: currentEventData(e.type, e.data) as EventPayload,
  };
}
