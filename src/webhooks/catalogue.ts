/**
 * The event catalogue: every event type the gateway emits and the zod schema of its `data`. `recordEvent`
 * (src/db/events.ts) validates against these, so a flow cannot emit a payload receivers were not promised.
 * Schemas are loose objects: the listed fields are guaranteed, flows may add more (additive changes only).
 */
import { z } from 'zod';

const uuid = z.uuid();
const iso = z.iso.datetime({ offset: true });
/** chain ids and amounts are decimal strings (never JS numbers beyond 2^53) */
const decimal = z.string().regex(/^\d+$/);

const chainAccount = z.object({ chain: z.string(), chain_id: decimal, address: z.string() });
const execution = z.looseObject({ chain: z.string(), chain_id: decimal, tx_hash: z.string() });

export const EVENT_SCHEMAS = {
  /** an identity finished provisioning; its accounts exist on the ledger and every requested chain */
  'identity.active': z.looseObject({
    identity_id: uuid,
    name: z.string(),
    adi_url: z.string(),
    key_book_url: z.string(),
    key_page_url: z.string(),
    data_account_url: z.string(),
    public_key_hash: z.string(),
    chain_accounts: z.array(chainAccount),
  }),
  /** provisioning stopped for good; `stage` is where */
  'identity.failed': z.looseObject({
    identity_id: uuid,
    name: z.string(),
    stage: z.string(),
    error: z.string(),
  }),
  /** the signed intent was accepted by the ledger; the proof cycle runs */
  'transaction.submitted': z.looseObject({
    intent_id: uuid,
    identity_id: uuid,
    operation_id: z.string(),
    ledger_tx_hash: z.string().nullable(),
  }),
  /** every leg executed and was attested; the proof is available */
  'transaction.completed': z.looseObject({
    intent_id: uuid,
    identity_id: uuid,
    operation_id: z.string(),
    proof_id: z.string(),
    executions: z.array(execution),
  }),
  'transaction.failed': z.looseObject({
    intent_id: uuid,
    identity_id: uuid,
    operation_id: z.string(),
    stage: z.string(),
    error: z.string(),
  }),
  /** a governance operation (key page / account authority change) executed on the ledger */
  'governance.executed': z.looseObject({
    governance_id: uuid,
    identity_id: uuid,
    operation: z.string(),
    ledger_tx_hash: z.string().nullable(),
  }),
  'governance.rejected': z.looseObject({
    governance_id: uuid,
    identity_id: uuid,
    operation: z.string(),
    reason: z.string(),
  }),
  /** a pending action awaits a signature from one of the identity's keys */
  'inbox.action_pending': z.looseObject({
    pending_action_id: uuid,
    identity_id: uuid,
    /** transaction | governance | ledger */
    kind: z.string(),
    ledger_tx_hash: z.string(),
    threshold: z.number().int().positive(),
    signatures: z.number().int().min(0),
    remaining_needed: z.number().int().min(0),
    expires_at: iso.nullable(),
  }),
  /** a webhook endpoint was switched off by the gateway (sustained failure or 410 Gone) */
  'webhook_endpoint.disabled': z.looseObject({
    endpoint_id: uuid,
    url: z.string(),
    reason: z.string(),
    failing_since: iso.nullable(),
    consecutive_failures: z.number().int().min(0),
  }),
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;
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
  data: Record<string, unknown>;
}

export function envelopeOf(e: {
  id: string;
  type: string;
  createdAt: Date;
  resourceId: string;
  sequence: number;
  data: Record<string, unknown>;
}): EventEnvelope {
  return { id: e.id, type: e.type, timestamp: e.createdAt.toISOString(), resource_id: e.resourceId, sequence: e.sequence, data: e.data };
}
