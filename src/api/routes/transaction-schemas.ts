/** Schemas of the transaction routes and the API view of an intent row. */
import { z } from '@hono/zod-openapi';
import { INTENT_STATUSES, type IntentViewRow } from '../../db/intents.js';
import { PROOF_CLASS_VALUES, PROOF_CLASSES, storedProofClass } from '../../services/intents.js';
import { resourceIdParam } from '../schemas/common.js';
import { SEND_TOKENS, type TransferDocument } from '../../protocol/intent/transfer.js';

export const SigningDataSchema = z
  .object({
    request_id: z.string().openapi({ description: 'Id of this signing request (the intent id)' }),
    transaction_hash: z.string().openapi({ description: 'Ledger transaction hash of the intent WriteData (64 lowercase hex, no 0x)' }),
    hash_to_sign: z
      .string()
      .openapi({ description: '32 bytes (hex): SHA-256(signature metadata hash ‖ transaction hash). Sign these raw bytes with Ed25519, not the hex text' }),
    public_key: z.string().openapi({ description: 'The nominated key: the signature must come from it' }),
    signer_key_page: z.string(),
    key_page_version: z.number().int(),
  })
  .openapi('SigningData');

const LegViewSchema = z
  .object({
    leg_id: z.string(),
    chain: z.string().openapi({ description: 'The chain, by registry id (GET /v1/chains)', example: 'polygon-amoy' }),
    evm_chain_id: z.number().int().openapi({ description: 'Its EVM chain id', example: 80002 }),
    status: z.enum(['pending', 'executing', 'completed', 'failed']),
    anchor_id: z.string().nullable(),
    leaf_index: z.number().int().nullable(),
    transactions: z
      .object({
        create_anchor: z.string().nullable(),
        execute_comprehensive_proof: z.string().nullable(),
        execute_governance_proof_direct: z.string().nullable(),
      })
      .openapi({ description: 'The three on-chain transactions of the leg (each with receipt status 1 once completed)' }),
    attested_by: z.array(z.number().int()).openapi({ description: 'Validator indexes whose BLS signatures were aggregated for the anchor' }),
    observed_by: z.array(z.number().int()),
    result_id: z.string().nullable().openapi({ description: 'Id of the proof_result v2 record on the ledger' }),
    error: z.string().nullable(),
  })
  .openapi('IntentLeg');

export const IntentSchema = z
  .object({
    intent_id: z.uuid(),
    identity_id: z.uuid(),
    status: z.enum(INTENT_STATUSES).openapi({ description: 'signing_required → submitted → completed | failed; expired when unsigned at expires_at' }),
    stage: z.string().openapi({
      description:
        'signing_required, submitted, attesting, anchoring, executing, observing, recording, completed, failed (a multi-chain intent shows its least advanced chain)',
    }),
    intent_type: z.string(),
    proof_class: z
      .enum(PROOF_CLASSES)
      .openapi({ description: 'The proof class written into the intent (an alias given at prepare shows as the class it names)' }),
    operation_id: z.string().openapi({ description: 'Hash of the four stored intent blobs: what validators attest' }),
    signing_mode: z.enum(['external', 'provider']).openapi({
      description:
        'external: the client signed hash_to_sign; provider: the gateway signed with the key it holds for the identity (POST /v1/identity signing_mode provider)',
    }),
    signing_data: SigningDataSchema,
    submit_url: z.string().nullable(),
    tx_hash: z.string().nullable().openapi({ description: 'Ledger transaction hash once submitted (64 lowercase hex, no 0x)' }),
    accum_tx_hash: z.string().nullable().openapi({ description: 'The same value as tx_hash, under the name Certen clients read' }),
    ledger_tx_id: z.string().nullable(),
    proof_id: z.string().nullable(),
    proof_bundle_url: z.string().nullable(),
    proof: z
      .object({
        id: z.string(),
        status: z.enum(['complete', 'partial']).openapi({ description: 'partial: some legs failed; the proof covers the others' }),
        bundle_url: z.string(),
        custody_url: z.string(),
        attestations: z.array(
          z.object({
            chain: z.string(),
            anchor_id: z.string().nullable(),
            attested_by: z.array(z.number().int()),
            legs: z.array(z.object({ leg_id: z.string(), observed_by: z.array(z.number().int()), result_id: z.string().nullable() })),
          }),
        ),
      })
      .nullable()
      .openapi({ description: 'Once the proof exists: where to fetch it and which validators attested and observed' }),
    legs: z.array(LegViewSchema),
    transfer: z
      .object({
        from: z.string().openapi({ description: "The identity's ACME token account (acc://<adi>/tokens)" }),
        to: z.string().openapi({ description: 'The recipient token account' }),
        amount: z.string().openapi({ description: 'Base units (10^-8 ACME), decimal string' }),
        amount_acme: z.string().openapi({ description: 'The same amount in ACME, decimal string' }),
        receipt_url: z.string().nullable().openapi({ description: 'The ledger receipt of the transfer once submitted (its proof is made of it)' }),
      })
      .nullable()
      .openapi({ description: 'A ledger token transfer (intent_type sendTokens): what it sends; null for other intents' }),
    error_message: z.string().nullable(),
    expires_at: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    submitted_at: z.string().nullable(),
    completed_at: z.string().nullable(),
  })
  .openapi('Intent');

export const SigningProgressSchema = z
  .object({
    key_page: z.string().openapi({ description: "The intent's signing key page: the page whose signatures are counted" }),
    collected_signatures: z.number().int().openapi({ description: 'Distinct keys of the page whose approval counts on the ledger transaction' }),
    required_signatures: z.number().int().openapi({ description: "The page's accept threshold (M of M-of-N)" }),
    awaiting_authorities: z.array(z.string()).openapi({
      description: 'Key books whose approval the ledger still waits for (the signing page’s own book until its threshold is met); empty once executed',
    }),
    signers: z
      .array(
        z.object({
          public_key: z.string().openapi({ description: 'Hex Ed25519 public key' }),
          public_key_hash: z.string().openapi({ description: 'SHA-256 of the key (hex), as the key page lists it' }),
          vote: z.enum(['approve', 'reject', 'abstain']),
        }),
      )
      .openapi({ description: 'The keys of the page that signed, with their votes' }),
    is_ready: z.boolean().openapi({ description: 'The ledger executed the transaction, or it holds every approval it needs' }),
    ledger_status: z.string().openapi({ description: "The ledger's status of the transaction: pending, delivered, or the failure (rejected, expired, ...)" }),
  })
  .openapi('IntentSigningProgress');

/** An intent as GET /v1/transaction/{intent_id} returns it: the list's view plus the live signing progress. */
export const IntentDetailSchema = IntentSchema.extend({
  signing_progress: SigningProgressSchema.nullable().openapi({
    description:
      "Co-signing of the intent's ledger transaction, read live from the ledger on every read: while it waits for co-signers, the signatures collected and required and the key books still awaited; once executed, the final counts. null before the signature is submitted, or when the ledger does not answer within a few seconds (the rest of the intent is unaffected). Not part of list answers.",
  }),
}).openapi('IntentDetail');

export const CreateBody = z
  .object({
    identity_id: z.string().openapi({ description: 'The identity (UUID) that authorizes the intent', format: 'uuid' }),
    intent: z.record(z.string(), z.unknown()).openapi({
      description:
        'Multi-leg { adiUrl, legs: [{ legId, chain, chainId?, fromAddress, toAddress, amount (wei string), contractCall? { target, value, functionSignature, args, expectedEvents?, expectedState?, gasLimit? (gas the call is given, enforced on chain) } }] }, a single native transfer { fromChain, toChain, fromAddress, toAddress, amount (native units), tokenSymbol }, or a ledger token transfer { type: "sendTokens", to (an ACME token account URL), amount (ACME, a number with at most 8 decimals) } sent from the identity\'s token account acc://<adi>/tokens, whose proof is the ledger\'s receipt',
    }),
    proof_class: z
      .enum(PROOF_CLASS_VALUES, { error: `must be one of: ${PROOF_CLASS_VALUES.join(', ')}` })
      .optional()
      .openapi({
        description:
          'How the proof cycle runs. standard (the default): one anchor per intent and chain, the lowest latency. batched: the legs of the intent wait on each chain for a batch (up to BATCH_WINDOW_MS, default 2 s, or BATCH_MAX_LEGS legs), which shares one attestation round, one anchor and one on-chain verification among the legs of many intents; each leg then executes with its Merkle proof, and the proof bundle proves its membership in the batch. Cheaper per call, slower by up to the window. on_demand and on_cadence are accepted for it and stored as batched. The class is written into the intent (the validators attest it with the rest) and shown in answers. Any other value is a 400.',
      }),
    contract_addresses: z.array(z.string()).optional().openapi({ description: 'Allow-list: every contract call must target one of these' }),
    signer_public_key: z.string().optional().openapi({ description: '64 hex: the key-page member that signs (default: the identity key)' }),
    signer_key_page: z.string().optional().openapi({ description: 'Key page URL of the same key book (default: page 1)' }),
  })
  .openapi('CreateTransactionRequest');

export const IntentIdParam = z.object({
  intent_id: resourceIdParam('intent_id', { code: 'INTENT_NOT_FOUND', message: 'Intent not found' }, 'Intent id (UUID)'),
});

/** A ledger hash as the API shows it: 64 lowercase hex without 0x (docs/api-conventions.md). */
const ledgerHash = (h: string) => h.replace(/^0x/i, '').toLowerCase();

function legViews(row: IntentViewRow): z.infer<typeof LegViewSchema>[] {
  const legs = (row.document as { legs?: { leg_id: string; chain: string; chain_id: string }[] }).legs ?? [];
  return legs.map((l) => {
    const c = row.chains.find((x) => x.chain === l.chain);
    const r = c?.record.legs.find((x) => x.legId === l.leg_id);
    const status = r?.result ? 'completed' : r?.error ? 'failed' : r?.executionTx || c ? 'executing' : 'pending';
    return {
      leg_id: l.leg_id,
      chain: l.chain,
      evm_chain_id: Number(l.chain_id),
      status,
      anchor_id: c?.record.anchorId ?? null,
      leaf_index: r?.leafIndex ?? null,
      transactions: {
        create_anchor: c?.record.createAnchorTx ?? null,
        execute_comprehensive_proof: c?.record.proveTx ?? null,
        execute_governance_proof_direct: r?.executionTx ?? null,
      },
      attested_by: c?.record.attestation?.signers ?? [],
      observed_by: r?.observation?.signers ?? [],
      result_id: r?.result?.resultId ?? null,
      error: r?.error ?? null,
    };
  });
}

/** What a ledger token transfer sends (its stored document), null for other intents. */
function transferView(row: IntentViewRow, txHash: string | null): z.infer<typeof IntentSchema>['transfer'] {
  if (row.intentType !== SEND_TOKENS) return null;
  const d = row.document as unknown as TransferDocument;
  return { from: d.from, to: d.to, amount: d.amount, amount_acme: d.amount_acme, receipt_url: txHash ? `/v1/proof/tx/${txHash}/receipt` : null };
}

export function intentView(row: IntentViewRow): z.infer<typeof IntentSchema> {
  const sd = row.signingData as z.infer<typeof SigningDataSchema>;
  const txHash = row.txHash === null ? null : ledgerHash(row.txHash);
  return {
    intent_id: row.id,
    identity_id: row.identityId,
    status: row.status as (typeof INTENT_STATUSES)[number],
    stage: row.stage,
    intent_type: row.intentType,
    proof_class: storedProofClass(row.intentData ?? undefined),
    operation_id: row.operationId,
    signing_mode: row.signingMode === 'provider' ? 'provider' : 'external',
    signing_data: { ...sd, transaction_hash: ledgerHash(sd.transaction_hash), hash_to_sign: ledgerHash(sd.hash_to_sign) },
    submit_url: row.status === 'signing_required' ? `/v1/transaction/${row.id}/signature` : null,
    tx_hash: txHash,
    accum_tx_hash: txHash,
    ledger_tx_id: row.ledgerTxId ?? (row.status === 'signing_required' ? null : row.preparedTxId),
    proof_id: row.proofId,
    proof_bundle_url: row.proofId ? `/v1/proof/${row.proofId}/bundle` : null,
    proof: row.proofId
      ? {
          id: row.proofId,
          status: row.status === 'completed' ? 'complete' : 'partial',
          bundle_url: `/v1/proof/${row.proofId}/bundle`,
          custody_url: `/v1/proof/${row.proofId}/custody`,
          attestations: row.chains.map((c) => ({
            chain: c.chain,
            anchor_id: c.record.anchorId ?? null,
            attested_by: c.record.attestation?.signers ?? [],
            legs: c.record.legs.map((l) => ({ leg_id: l.legId, observed_by: l.observation?.signers ?? [], result_id: l.result?.resultId ?? null })),
          })),
        }
      : null,
    legs: legViews(row),
    transfer: transferView(row, txHash),
    error_message: row.errorMessage,
    expires_at: row.expiresAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    submitted_at: row.submittedAt,
    completed_at: row.completedAt,
  };
}
