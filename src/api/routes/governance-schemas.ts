/** Schemas of the governance routes and the API view of an operation row. */
import { z } from '@hono/zod-openapi';
import type { GovernanceOpRow } from '../../db/governance.js';
import { OPERATION_TYPES } from '../../governance/operations.js';
import type { StoredPreparedSignature } from '../../ledger/index.js';
import { HEX64_PATTERN, IDENTITY_REF_PATTERN, resourceIdParam } from '../schemas/common.js';

export const OperationSchema = z
  .object({
    type: z.string().openapi({ description: `One of ${OPERATION_TYPES.join(', ')}` }),
    delegate_url: z.string().optional().openapi({ description: 'add_delegate / remove_delegate: the delegate key book URL' }),
    threshold: z.number().optional().openapi({ description: 'set_threshold: the M of M-of-N (accept threshold)' }),
    public_key_hash: z.string().optional().openapi({ description: 'add_key / remove_key: SHA-256 of the raw 32 key bytes, 64 hex', pattern: HEX64_PATTERN }),
    authority_url: z.string().optional().openapi({ description: 'add_authority / remove_authority: a key book URL' }),
    public_key_hashes: z
      .array(z.string().openapi({ pattern: HEX64_PATTERN }))
      .optional()
      .openapi({ description: 'create_key_page: the key hashes of the new page' }),
    url: z
      .string()
      .optional()
      .openapi({ description: "create_token_account: the ACME token account to create, directly under the identity's ADI; default <adi>/tokens" }),
  })
  .openapi('GovernanceOperation');

export const CreateBody = z
  .object({
    identity: z
      .string()
      .openapi({ description: 'ADI URL of the identity (its id also works)', example: 'acc://alice-corp.acme', pattern: IDENTITY_REF_PATTERN }),
    operations: z
      .array(OperationSchema)
      .max(32)
      .openapi({ description: 'Several operations of one kind (key page, authority, create_key_page, create_token_account); kinds cannot be mixed' }),
    force: z
      .boolean()
      .optional()
      .openapi({ description: 'Skip the quorum-reachability check (an operation that would leave the page unable to reach its threshold)' }),
    signer_public_key: z
      .string()
      .optional()
      .openapi({ description: "The key that will sign (any current key of signer_key_page), 64 hex; default the identity's key. hash_to_sign is bound to it" }),
    signer_key_page: z
      .string()
      .optional()
      .openapi({ description: "The key page that signs (a page of the identity's book); default the identity's key page. The ledger enforces page priority" }),
    key_page_url: z
      .string()
      .optional()
      .openapi({ description: "Key page operations: the page to change (a page of the identity's book); default the identity's key page" }),
    account_url: z
      .string()
      .optional()
      .openapi({ description: "Authority operations: the account whose authorities change (within the identity's ADI); default the ADI" }),
  })
  .openapi('CreateGovernanceRequest');

export const SigningData = z.object({
  request_id: z.string(),
  transaction_hash: z.string().openapi({ description: 'Ledger transaction hash (hex)' }),
  hash_to_sign: z.string().openapi({ description: 'SHA-256(signature metadata hash ‖ transaction hash): sign these raw 32 bytes' }),
  key_page_version: z.number().int(),
});

export const GovernanceSchema = z
  .object({
    governance_op_id: z.uuid(),
    identity_id: z.uuid(),
    identity_url: z.string(),
    kind: z.string().openapi({ description: 'key_page, authority, create_key_page or create_token_account' }),
    operations: z.array(z.record(z.string(), z.unknown())),
    status: z.string().openapi({ description: 'signing_required → pending_signatures → executed | rejected | expired' }),
    signing_data: SigningData,
    submit_url: z.string(),
    signing_mode: z
      .enum(['external', 'provider'])
      .optional()
      .openapi({ description: 'On prepare: external (sign hash_to_sign and submit it), or provider (the gateway signed with the key it holds and submitted)' }),
    tx_hash: z.string(),
    tx_id: z.string(),
    collected_signatures: z.number().int().optional(),
    required_signatures: z.number().int().optional(),
    is_ready: z.boolean().optional(),
    awaiting_authorities: z.array(z.string()).optional(),
    ledger_error: z.string().optional().openapi({ description: 'Why the live fields are missing (ledger unreachable)' }),
    error_message: z.string().optional(),
    created_at: z.string(),
    updated_at: z.string(),
    idempotent: z.boolean().optional(),
  })
  .openapi('GovernanceOperationStatus');

export const SignatureResult = z
  .object({
    governance_op_id: z.uuid(),
    status: z.string(),
    tx_hash: z.string(),
    collected_signatures: z.number().int(),
    required_signatures: z.number().int(),
    is_ready: z.boolean(),
    awaiting_authorities: z.array(z.string()),
  })
  .openapi('GovernanceSignatureResult');

export const IdParam = z.object({
  id: resourceIdParam('id', { code: 'GOVERNANCE_NOT_FOUND', message: 'Governance operation not found' }, 'Governance operation id (UUID)'),
});

export function governanceView(op: GovernanceOpRow, identityUrl: string) {
  const p = op.prepared as unknown as StoredPreparedSignature;
  return {
    governance_op_id: op.id,
    identity_id: op.identityId,
    identity_url: identityUrl,
    kind: op.kind,
    operations: op.operations,
    status: op.status,
    signing_data: { request_id: op.id, transaction_hash: op.txHash, hash_to_sign: p.hashToSign, key_page_version: op.keyPageVersion },
    submit_url: `/v1/governance/${op.id}/signature`,
    tx_hash: op.txHash,
    tx_id: op.txId,
    ...(op.errorMessage ? { error_message: op.errorMessage } : {}),
    created_at: op.createdAt.toISOString(),
    updated_at: op.updatedAt.toISOString(),
  };
}
