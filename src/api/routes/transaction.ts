/**
 * Transaction intents (spec §2.2, §3.2, §4.2, §4.3), scoped to the caller's organization:
 *   POST /v1/transaction                      prepare: validate the legs, build the canonical intent, prepare its
 *                                             ledger WriteData for the nominated key → 201 with hash_to_sign;
 *                                             the workflow intent-<id> starts and waits. Idempotency-Key honoured.
 *   POST /v1/transaction/{intent_id}/signature  a Temporal Update on intent-<id>: verified, then submitted
 *   GET  /v1/transaction/{intent_id}          status, stage, per-leg transactions, proof_id
 *   GET  /v1/transactions                     list, newest first, cursor pagination
 */
import { randomUUID } from 'node:crypto';
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Address } from 'viem';
import { getChainAccounts } from '../../db/identities.js';
import {
  deleteIntent,
  getIntent,
  getChainsOfIntents,
  getOrgIntent,
  getOrgIntentWithChains,
  INTENT_STATUSES,
  insertIntent,
  listOrgIntents,
  type IntentChainRow,
  type IntentRow,
} from '../../db/intents.js';
import type { PreparedIntentTx } from '../../db/schema.js';
import { createLedgerClient, LedgerInputError, LedgerTransportError, tx } from '../../ledger/index.js';
import { SIGNATURE_REJECTIONS, type SignatureRejection } from '../../protocol/failures.js';
import { buildIntent, INTENT_MEMO, IntentError } from '../../protocol/intent/index.js';
import { intentLegsFromRequest, IntentRequestError } from '../../protocol/intent/request.js';
import type { intentWorkflow, IntentWorkflowInput, SubmitSignatureArgs, SubmitSignatureResult } from '../../workflows/intent.js';
import { IdentityIdKey, IntentIdKey, OrgIdKey, StageKey } from '../../workflows/search-attributes.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { SignatureBody } from '../cosign-common.js';
import { ApiError } from '../errors.js';
import { findOrgIdentity, requireActive, requireSigningKey } from '../identity-access.js';
import { requireAuth } from '../middleware/auth.js';
import { errorResponses, RATE_LIMIT_HEADERS } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';

const NATIVE_SYMBOLS: Record<string, readonly string[]> = { 'polygon-amoy': ['POL', 'MATIC'] };
const LEDGER_NETWORK_NAMES = ['accumulate', 'accumulate-devnet', 'accumulate-testnet', 'accumulate-mainnet'];

const SigningDataSchema = z
  .object({
    request_id: z.string().openapi({ description: 'Id of this signing request (the intent id)' }),
    transaction_hash: z.string().openapi({ description: 'Ledger transaction hash (hex) of the intent WriteData' }),
    hash_to_sign: z.string().openapi({ description: '32 bytes (hex): SHA-256(signature metadata hash ‖ transaction hash). Sign these raw bytes with Ed25519, not the hex text' }),
    public_key: z.string().openapi({ description: 'The nominated key: the signature must come from it' }),
    signer_key_page: z.string(),
    key_page_version: z.number().int(),
  })
  .openapi('SigningData');

const LegViewSchema = z
  .object({
    leg_id: z.string(),
    chain: z.string(),
    chain_id: z.number().int(),
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
      description: 'signing_required, submitted, attesting, anchoring, executing, observing, recording, completed, failed (a multi-chain intent shows its least advanced chain)',
    }),
    intent_type: z.string(),
    operation_id: z.string().openapi({ description: 'Hash of the four stored intent blobs: what validators attest' }),
    signing_mode: z.literal('external'),
    signing_data: SigningDataSchema,
    submit_url: z.string().nullable(),
    tx_hash: z.string().nullable().openapi({ description: 'Ledger transaction hash once submitted' }),
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
    error_message: z.string().nullable(),
    expires_at: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    submitted_at: z.string().nullable(),
    completed_at: z.string().nullable(),
  })
  .openapi('Intent');

const CreateBody = z
  .object({
    identity_id: z.string().openapi({ description: 'The identity (UUID) that authorizes the intent' }),
    intent: z.record(z.string(), z.unknown()).openapi({
      description:
        'Multi-leg { adiUrl, legs: [{ legId, chain, chainId?, fromAddress, toAddress, amount (wei string), contractCall? { target, value, functionSignature, args, expectedEvents?, expectedState?, gasLimit? (gas the call is given, enforced on chain) } }] } or a single native transfer { fromChain, toChain, fromAddress, toAddress, amount (native units), tokenSymbol }',
    }),
    proof_class: z.string().optional().openapi({ description: 'standard (default)' }),
    contract_addresses: z.array(z.string()).optional().openapi({ description: 'Allow-list: every contract call must target one of these' }),
    signer_public_key: z.string().optional().openapi({ description: '64 hex: the key-page member that signs (default: the identity key)' }),
    signer_key_page: z.string().optional().openapi({ description: 'Key page URL of the same key book (default: page 1)' }),
  })
  .openapi('CreateTransactionRequest');

const IntentIdParam = z.object({ intent_id: z.string().openapi({ param: { name: 'intent_id', in: 'path' }, description: 'Intent id (UUID)' }) });

function legViews(row: IntentRow, chains: IntentChainRow[]): z.infer<typeof LegViewSchema>[] {
  const legs = (row.intent as { legs?: { leg_id: string; chain: string; chain_id: string }[] }).legs ?? [];
  return legs.map((l) => {
    const c = chains.find((x) => x.chain === l.chain);
    const r = c?.record.legs.find((x) => x.legId === l.leg_id);
    const status = r?.result ? 'completed' : r?.error ? 'failed' : r?.executionTx || c ? 'executing' : 'pending';
    return {
      leg_id: l.leg_id,
      chain: l.chain,
      chain_id: Number(l.chain_id),
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

export function intentView(row: IntentRow, chains: IntentChainRow[]): z.infer<typeof IntentSchema> {
  const p = row.prepared;
  return {
    intent_id: row.id,
    identity_id: row.identityId,
    status: row.status as (typeof INTENT_STATUSES)[number],
    stage: row.stage,
    intent_type: row.intentType,
    operation_id: row.operationId,
    signing_mode: 'external',
    signing_data: row.signingData as z.infer<typeof SigningDataSchema>,
    submit_url: row.status === 'signing_required' ? `/v1/transaction/${row.id}/signature` : null,
    tx_hash: row.txHash,
    ledger_tx_id: row.ledgerTxId ?? (row.status === 'signing_required' ? null : p.txId),
    proof_id: row.proofId,
    proof_bundle_url: row.proofId ? `/v1/proof/${row.proofId}/bundle` : null,
    proof: row.proofId
      ? {
          id: row.proofId,
          status: row.status === 'completed' ? 'complete' : 'partial',
          bundle_url: `/v1/proof/${row.proofId}/bundle`,
          custody_url: `/v1/proof/${row.proofId}/custody`,
          attestations: chains.map((c) => ({
            chain: c.chain,
            anchor_id: c.record.anchorId ?? null,
            attested_by: c.record.attestation?.signers ?? [],
            legs: c.record.legs.map((l) => ({ leg_id: l.legId, observed_by: l.observation?.signers ?? [], result_id: l.result?.resultId ?? null })),
          })),
        }
      : null,
    legs: legViews(row, chains),
    error_message: row.errorMessage,
    expires_at: row.expiresAt.toISOString(),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    submitted_at: row.submittedAt?.toISOString() ?? null,
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

export function registerTransactionRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const ledger = createLedgerClient({ url: deps.config.ledgerUrl, timeoutMs: 5000 });
  const json = (schema: z.ZodType, description: string) => ({ description, headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema } } });

  // ------------------------------------------------------------------ POST /v1/transaction
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/transaction',
      tags: ['Transactions'],
      summary: 'Prepare a transaction intent',
      description:
        'Validates every leg (the 400 names the leg and the field), encodes each contract call from functionSignature + args, computes each leg’s execution commitment, builds the canonical intent and prepares its WriteData to the identity’s data account for the nominated key. Sign hash_to_sign (32 raw bytes) with that Ed25519 key and POST it to submit_url. The proof cycle then runs on its own: 5 of 7 validators attest, createAnchor, executeComprehensiveProof, executeGovernanceProofDirect, observation after finality, the proof_result record on the ledger.',
      scopes: ['write'],
      idempotent: true,
      request: { body: { required: true, content: { 'application/json': { schema: CreateBody } } } },
      responses: {
        201: json(
          z.object({
            intent_id: z.uuid(),
            status: z.literal('signing_required'),
            signing_mode: z.literal('external'),
            signing_data: SigningDataSchema,
            submit_url: z.string(),
            expires_at: z.string(),
            operation_id: z.string(),
            idempotent: z.boolean().optional(),
          }),
          'Prepared: sign hash_to_sign and submit it',
        ),
        ...errorResponses(400, 402, 404, 409, 502, 503),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const body = c.req.valid('json');
      if (typeof body.identity_id !== 'string' || !body.identity_id) throw new ApiError(400, 'VALIDATION_ERROR', 'identity_id: required', { field: 'identity_id' });
      const identity = await findOrgIdentity(db, auth.orgId, body.identity_id, { field: 'identity_id' });
      const identityKey = requireSigningKey(identity);
      requireActive(identity);

      // the nominated seat: any member of a page of the identity's book (default: the identity key on page 1)
      let signerKey = identityKey;
      if (body.signer_public_key !== undefined) {
        if (!/^[0-9a-fA-F]{64}$/.test(body.signer_public_key)) throw new ApiError(400, 'VALIDATION_ERROR', 'signer_public_key: must be 64 hex characters', { field: 'signer_public_key' });
        signerKey = body.signer_public_key.toLowerCase();
      }
      let signerPage = identity.keyPageUrl;
      if (body.signer_key_page !== undefined) {
        const page = body.signer_key_page.toLowerCase();
        if (!new RegExp(`^${identity.bookUrl.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[1-9][0-9]*$`).test(page)) {
          throw new ApiError(400, 'VALIDATION_ERROR', `signer_key_page: must be a page of the identity's key book ${identity.bookUrl} (e.g. ${identity.bookUrl}/2)`, { field: 'signer_key_page' });
        }
        signerPage = page;
      }

      const accounts = (await getChainAccounts(db, [identity.id])).get(identity.id) ?? [];
      const contractAddresses = (body.contract_addresses ?? []).map((a, i) => {
        if (!/^0x[0-9a-fA-F]{40}$/.test(a)) throw new ApiError(400, 'VALIDATION_ERROR', `contract_addresses[${i}]: must be a 20-byte 0x address`, { field: `contract_addresses[${i}]` });
        return a as Address;
      });
      const intentId = randomUUID();
      const createdAt = Math.floor(Date.now() / 1000);
      const expiresAt = createdAt + deps.config.intentTtlSeconds;
      let built;
      let intentType: string;
      try {
        const { type, legs } = intentLegsFromRequest(
          {
            adiUrl: identity.adiUrl,
            accounts: new Map(accounts.map((a) => [a.chain, a.address as Address])),
            chains: deps.config.chains.map((ch) => ({ name: ch.name, chainId: ch.chainId, symbols: NATIVE_SYMBOLS[ch.name] ?? ['ETH'] })),
            contractAddresses,
            ledgerNames: LEDGER_NETWORK_NAMES,
          },
          body.intent,
        );
        intentType = type;
        built = buildIntent({ intentId, adiUrl: identity.adiUrl, keyBook: identity.bookUrl, legs, proofClass: body.proof_class ?? 'standard', createdAt, expiresAt });
      } catch (e) {
        if (e instanceof IntentRequestError) throw new ApiError(e.code === 'UNSUPPORTED_INTENT' ? 422 : 400, e.code, e.message, { field: e.field, ...e.details });
        if (e instanceof IntentError) {
          const field = e.field?.startsWith('legs') ? `intent.${e.field}` : (e.field ?? 'intent');
          throw new ApiError(400, 'VALIDATION_ERROR', e.message.startsWith('legs') ? `intent.${e.message}` : e.message, { field });
        }
        throw e;
      }

      // prepare the WriteData for the nominated key (checks it is on the page) and read the page's credits
      let prepared;
      let credits: number;
      try {
        const page = await ledger.queryKeyPage(signerPage);
        credits = page.creditBalance;
        prepared = await ledger.prepareExternalSignature({
          principal: identity.dataAccountUrl,
          body: tx.writeData(built.parts),
          txOptions: { memo: INTENT_MEMO, expireAt: new Date(expiresAt * 1000) },
          signerUrl: signerPage,
          publicKey: signerKey,
        });
      } catch (e) {
        if (e instanceof LedgerInputError) {
          const field = e.field === 'publicKey' ? 'signer_public_key' : e.field === 'signerUrl' ? 'signer_key_page' : e.field;
          throw new ApiError(400, 'SIGNER_NOT_ON_PAGE', `${field}: ${e.message.replace(/^[a-zA-Z]+: /, '')}`, { field });
        }
        if ((e as { code?: string }).code === 'notFound') throw new ApiError(400, 'VALIDATION_ERROR', `signer_key_page: ${signerPage} does not exist`, { field: 'signer_key_page' });
        if (e instanceof LedgerTransportError) throw new ApiError(502, 'LEDGER_UNAVAILABLE', 'The ledger could not be reached; retry shortly');
        throw e;
      }
      if (credits <= 0) {
        throw new ApiError(402, 'INSUFFICIENT_CREDITS', `The key page ${signerPage} has no credits: the ledger would refuse the intent; add credits first`, { key_page: signerPage });
      }

      const signingData = {
        request_id: intentId,
        transaction_hash: prepared.txHash,
        hash_to_sign: prepared.hashToSign,
        public_key: signerKey,
        signer_key_page: prepared.signerUrl,
        key_page_version: prepared.signerVersion,
      };
      const preparedTx: PreparedIntentTx = {
        principal: identity.dataAccountUrl,
        memo: INTENT_MEMO,
        expireAt: new Date(expiresAt * 1000).toISOString(),
        signerUrl: prepared.signerUrl,
        publicKey: signerKey,
        signerVersion: prepared.signerVersion,
        timestamp: prepared.timestamp,
        txId: prepared.txId,
        txHash: prepared.txHash,
        hashToSign: prepared.hashToSign,
      };
      const row = await insertIntent(db, {
        id: intentId,
        orgId: auth.orgId,
        identityId: identity.id,
        intentType,
        intent: { parts: built.parts, legs: built.blobs.crossChainData.legs.map((l) => ({ leg_id: l.leg_id, chain: l.chain, chain_id: l.chain_id })) },
        operationId: built.operationId,
        signingData,
        prepared: preparedTx,
        signerPublicKey: signerKey,
        signerKeyPage: prepared.signerUrl,
        expiresAt: new Date(expiresAt * 1000),
      });
      const chainOrder = [...new Set(built.legs.map((l) => l.chain))];
      const input: IntentWorkflowInput = {
        intentId,
        orgId: auth.orgId,
        identityId: identity.id,
        signerPublicKey: signerKey,
        hashToSign: prepared.hashToSign,
        expiresAtMs: expiresAt * 1000,
        chains: chainOrder.map((chain) => ({ chain, legIds: built.legs.filter((l) => l.chain === chain).map((l) => l.legId) })),
      };
      try {
        await deps.temporal.workflow.start<typeof intentWorkflow>('intentWorkflow', {
          workflowId: `intent-${intentId}`,
          taskQueue: deps.config.temporal.taskQueue,
          args: [input],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          typedSearchAttributes: [
            { key: OrgIdKey, value: auth.orgId },
            { key: IdentityIdKey, value: identity.id },
            { key: IntentIdKey, value: intentId },
            { key: StageKey, value: 'signing_required' },
          ],
        });
      } catch (err) {
        c.get('logger').error('intent workflow could not be started', { err, intent_id: intentId });
        await deleteIntent(db, intentId);
        throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'The intent could not be started; retry shortly', undefined, { 'Retry-After': '5' });
      }
      c.get('logger').info('intent prepared', { intent_id: intentId, workflow_id: `intent-${intentId}`, legs: built.legs.length });
      const submitUrl = `/v1/transaction/${intentId}/signature`;
      c.header('Location', `/v1/transaction/${intentId}`);
      return c.json(
        {
          intent_id: row.id,
          status: 'signing_required' as const,
          signing_mode: 'external' as const,
          signing_data: signingData,
          submit_url: submitUrl,
          expires_at: row.expiresAt.toISOString(),
          operation_id: built.operationId,
        },
        201,
      );
    },
  );

  // ------------------------------------------------------------------ POST /v1/transaction/{intent_id}/signature
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/transaction/{intent_id}/signature',
      tags: ['Transactions'],
      summary: 'Submit the signature of an intent',
      description:
        'The signature is checked against public_key (which must be the nominated key) over the raw 32 bytes of hash_to_sign before anything is sent (400 otherwise), then submitted to the ledger. 409 when the intent is already signed (treat as success and read the intent); 502 on a transient ledger failure — the intent stays signing_required and the same signature can be sent again.',
      scopes: ['write'],
      request: { params: IntentIdParam, body: { required: true, content: { 'application/json': { schema: SignatureBody } } } },
      responses: {
        200: json(z.object({ intent_id: z.uuid(), status: z.literal('submitted'), tx_hash: z.string(), ledger_tx_id: z.string() }), 'Submitted to the ledger'),
        ...errorResponses(400, 404, 409, 502),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const { intent_id } = c.req.valid('param');
      const row = await getOrgIntent(db, auth.orgId, intent_id);
      if (!row) throw new ApiError(404, 'INTENT_NOT_FOUND', 'Intent not found');
      const body = c.req.valid('json');
      const closed = (r: IntentRow) =>
        r.txHash
          ? new ApiError(409, 'ALREADY_SIGNED', 'Intent already signed; read the intent for its status', { status: r.status, tx_hash: r.txHash })
          : new ApiError(409, 'INTENT_CLOSED', `Intent is ${r.status}; it takes no signature`, { status: r.status });
      if (row.status !== 'signing_required') throw closed(row);
      try {
        const out = await deps.temporal.workflow
          .getHandle(`intent-${intent_id}`)
          .executeUpdate<SubmitSignatureResult, [SubmitSignatureArgs]>('submitSignature', { args: [{ signature: body.signature, publicKey: body.public_key }] });
        return c.json({ intent_id, status: 'submitted' as const, tx_hash: out.txHash, ledger_tx_id: out.txId }, 200);
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError) {
          const cause = err.cause as { type?: string; message?: string } | undefined;
          const type = (cause?.type ?? '') as SignatureRejection;
          const status = SIGNATURE_REJECTIONS[type];
          if (status) {
            const field = /^(signature|public_key):/.exec(cause?.message ?? '')?.[1];
            throw new ApiError(status, CODES[type], cause?.message ?? type, field ? { field } : undefined, status === 502 ? { 'Retry-After': '2' } : undefined);
          }
        }
        // the workflow ended (expired, or finished) while we asked: answer from the record
        const now = await getIntent(db, intent_id);
        if (now && now.status !== 'signing_required') throw closed(now);
        throw err;
      }
    },
  );

  // ------------------------------------------------------------------ GET /v1/transaction/{intent_id}
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/transaction/{intent_id}',
      tags: ['Transactions'],
      summary: 'Read an intent',
      description: 'Status and stage, the ledger transaction, per leg the three chain transactions, the validators that attested and observed, proof_id once the proof exists, error_message on failure.',
      scopes: ['read'],
      request: { params: IntentIdParam },
      responses: { 200: json(IntentSchema, 'The intent'), ...errorResponses(404) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const found = await getOrgIntentWithChains(db, auth.orgId, c.req.valid('param').intent_id);
      if (!found) throw new ApiError(404, 'INTENT_NOT_FOUND', 'Intent not found');
      return c.json(intentView(found.row, found.chains), 200);
    },
  );

  // ------------------------------------------------------------------ GET /v1/transactions
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/transactions',
      tags: ['Transactions'],
      summary: "List the organization's intents",
      description: 'Newest first. Pass next_cursor back as cursor for the next page.',
      scopes: ['read'],
      request: {
        query: z.object({
          status: z.enum(INTENT_STATUSES).optional(),
          identity_id: z.uuid().optional(),
          limit: z.coerce.number().int().min(1).max(200).optional().openapi({ description: 'Page size, default 50, at most 200' }),
          cursor: z.string().max(500).optional(),
        }),
      },
      responses: {
        200: json(
          z.object({
            transactions: z.array(IntentSchema),
            pagination: z.object({ limit: z.number().int(), has_more: z.boolean(), next_cursor: z.string().nullable() }),
          }),
          'A page of intents',
        ),
        ...errorResponses(400),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const q = c.req.valid('query');
      const limit = q.limit ?? 50;
      const rows = await listOrgIntents(db, auth.orgId, { limit: limit + 1, status: q.status, identityId: q.identity_id, before: q.cursor ? decodeCursor(q.cursor) : undefined });
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      const chains = await getChainsOfIntents(db, page.map((r) => r.id));
      const views = page.map((r) => intentView(r, chains.get(r.id)!));
      return c.json({ transactions: views, pagination: { limit, has_more: hasMore, next_cursor: hasMore ? encodeCursor(page[page.length - 1]!) : null } }, 200);
    },
  );
}

const CODES: Record<SignatureRejection, string> = {
  InvalidInput: 'VALIDATION_ERROR',
  WrongSigner: 'WRONG_SIGNER',
  InvalidSignature: 'INVALID_SIGNATURE',
  SignatureRejected: 'SIGNATURE_REJECTED',
  AlreadySigned: 'ALREADY_SIGNED',
  IntentClosed: 'INTENT_CLOSED',
  IntentExpired: 'INTENT_EXPIRED',
  SigningDataChanged: 'SIGNING_DATA_CHANGED',
  LedgerUnavailable: 'LEDGER_UNAVAILABLE',
};
