/** Schemas of the pending-inbox and co-signing routes. */
import { z } from '@hono/zod-openapi';
import { HEX64_PATTERN, IDENTITY_REF_PATTERN } from '../schemas/common.js';
import type { PendingActionRow } from '../../db/governance.js';

export const PendingActionSchema = z
  .object({
    id: z.uuid(),
    identity_id: z.uuid(),
    identity_url: z.string(),
    category: z.string().openapi({ description: 'governance or transactions' }),
    type: z.string().openapi({ description: 'Ledger transaction type, e.g. updateKeyPage' }),
    status: z.string().openapi({ description: "eligible (the identity's key has not signed) or awaiting_others" }),
    tx_hash: z.string(),
    tx_id: z.string(),
    principal: z.string(),
    memo: z.string().nullable().openapi({ description: "The ledger transaction's memo (its header's), null when it has none" }),
    collected_signatures: z.number().int(),
    total_authorities: z.number().int().openapi({ description: "The threshold of the identity's key page" }),
    required_signatures: z.number().int(),
    user_has_signed: z.boolean(),
    awaiting_authorities: z.array(z.string()),
    is_ready: z.boolean().openapi({ description: 'Read live from the ledger at the request: executed, or every required authority approved' }),
    expires_at: z.string().nullable(),
    discovered_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('PendingAction');

export const SignBody = z
  .object({
    type: z.enum(['pending_action', 'pending_tx']),
    target_id: z
      .string()
      .openapi({ description: 'pending_action: the pending action id; pending_tx: the transaction hash (64 hex) or TxID acc://<hash>@<account>' }),
    identity: z
      .string()
      .optional()
      .openapi({ description: 'ADI URL (or id) of the signing identity; required with pending_tx', pattern: IDENTITY_REF_PATTERN }),
    signer_url: z.string().optional().openapi({ description: "Key page of the signer (a page of the identity's book); default the identity's key page" }),
    public_key: z
      .string()
      .optional()
      .openapi({ description: "The signer's Ed25519 key, 64 hex; default the identity's key. Any seat of the page can vote", pattern: HEX64_PATTERN }),
    vote: z
      .unknown()
      .optional()
      .openapi({ type: 'string', enum: ['approve', 'reject', 'abstain'], description: 'Default approve. Bound into the signing data' }),
  })
  .openapi('SignRequest', {
    description: 'identity is required with type pending_tx',
    anyOf: [{ properties: { type: { const: 'pending_action' } } }, { required: ['identity'] }],
  });

export const SignResponse = z
  .object({
    sign_request_id: z.uuid(),
    status: z.string(),
    signing_data: z.object({
      data_for_signature: z.string().openapi({ description: 'The 32 bytes to sign (hex)' }),
      transaction_hash: z.string(),
      signer_url: z.string(),
      signer_version: z.number().int(),
      timestamp: z.number().int(),
      vote: z.string(),
      delegators: z.array(z.string()).openapi({ description: 'Delegation path the signature goes through (innermost first); empty for a direct signature' }),
    }),
    submit_url: z.string().nullable().openapi({ description: 'Where to POST the signature; null when the gateway signed (signing_mode provider)' }),
    signing_mode: z
      .enum(['provider'])
      .optional()
      .openapi({ description: 'provider: the gateway signed with the key it holds and submitted (the fields of SignResult follow)' }),
    tx_hash: z.string().optional(),
    ledger_status: z.string().nullable().optional(),
    signature_count: z.number().int().nullable().optional(),
    is_ready: z.boolean().nullable().optional(),
    awaiting_authorities: z.array(z.string()).nullable().optional(),
    warning: z.string().optional(),
  })
  .openapi('SignRequestPrepared');

export const SignResult = z
  .object({
    sign_request_id: z.uuid(),
    status: z.string(),
    tx_hash: z.string(),
    ledger_status: z.string().nullable(),
    signature_count: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The transaction's collected approvals, from every page (a delegate's through the delegating page included)" }),
    is_ready: z.boolean().nullable(),
    awaiting_authorities: z.array(z.string()).nullable(),
    warning: z.string().optional(),
  })
  .openapi('SignResult');

export function pendingActionView(a: PendingActionRow, identityUrl: string): z.infer<typeof PendingActionSchema> {
  return {
    id: a.id,
    identity_id: a.identityId,
    identity_url: identityUrl,
    category: a.category,
    type: a.type,
    status: a.status,
    tx_hash: a.txHash,
    tx_id: a.txId,
    principal: a.principal,
    memo: a.memo,
    collected_signatures: a.collectedSignatures,
    total_authorities: a.threshold,
    required_signatures: a.threshold,
    user_has_signed: a.userHasSigned,
    awaiting_authorities: a.awaitingAuthorities,
    is_ready: a.isReady,
    expires_at: a.expiresAt?.toISOString() ?? null,
    discovered_at: a.discoveredAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}
