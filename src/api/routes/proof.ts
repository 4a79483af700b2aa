/**
 * Proofs, scope proof:read, scoped to the caller's organization (the receipt endpoint reads public
 * ledger data and answers for any delivered transaction):
 *   GET /v1/proof/{id}                  the artifact: what was proven, where, by whom
 *   GET /v1/proof/{id}/bundle           the self-contained bundle (canonical JSON; verify with `npm run cli -- verify-bundle`)
 *   GET /v1/proof/{id}/custody          hash-linked custody events with chain_valid recomputed
 *   GET /v1/proof/tx/{tx_hash}          the artifact of the intent whose ledger or chain transaction has this hash
 *   GET /v1/proof/tx/{tx_hash}/receipt  Merkle inclusion receipt of a ledger transaction, read from the ledger
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Db } from '../../db/client.js';
import { appendProofCustody, findOrgIntentByTxHash, getIntent, getOrgProof, type ProofRow } from '../../db/intents.js';
import { isNotFound, LedgerInputError, LedgerTransportError } from '../../ledger/index.js';
import { upgradeBundle } from '../../proof/bundle-v1.js';
import type { CustodyEvent } from '../../proof/custody.js';
import { verifyCustody } from '../../proof/custody.js';
import { appendCustody } from '../../proof/custody-trail.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { requireAuth } from '../middleware/auth.js';
import { errorResponses, jsonResponse, RATE_LIMIT_HEADERS, resourceIdParam, TX_HASH_PATTERN } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';

/** a ledger hash: 64 lowercase hex without 0x (docs/api-conventions.md) */
const LedgerHash = z.string().regex(/^[0-9a-f]{64}$/);
/** an EVM hash: 0x + 64 lowercase hex */
const EvmHash = z.string().regex(/^0x[0-9a-f]{64}$/);
const Count = z.number().int().nonnegative();

const ProofSchema = z
  .object({
    proof_id: z.uuid(),
    intent_id: z.uuid(),
    operation_id: EvmHash,
    status: z.enum(['complete', 'partial']).openapi({ description: 'partial: some legs failed; the proof covers the legs that completed' }),
    bundle_hash: EvmHash.openapi({ description: 'SHA-256 of the canonical bundle without its bundle_hash field' }),
    bundle_url: z.string(),
    custody_url: z.string(),
    ledger: z.object({
      tx_id: z.string(),
      tx_hash: LedgerHash.openapi({ description: 'The intent’s ledger transaction hash' }),
      key_page: z.string(),
      key_page_version: Count,
      threshold: Count,
      signatures: Count,
    }),
    chains: z.array(
      z.object({
        chain: z.string().openapi({ description: 'The chain’s registry id', example: 'polygon-amoy' }),
        evm_chain_id: Count.openapi({ example: 80002 }),
        proof_anchor: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
        anchor_id: EvmHash,
        validator_set_root: EvmHash,
        attested_by: z.array(Count),
        transactions: z.object({ create_anchor: EvmHash, execute_comprehensive_proof: EvmHash }),
        legs: z.array(z.object({ leg_id: z.string(), execution_tx: EvmHash, result_hash: EvmHash, result_id: EvmHash, observed_by: z.array(Count) })),
      }),
    ),
    created_at: z.string(),
  })
  .openapi('Proof');

const IdParam = z.object({ id: resourceIdParam('id', { code: 'PROOF_NOT_FOUND', message: 'Proof not found' }, 'Proof id (UUID)') });
const TxParam = z.object({
  // the pattern is documentation: a value of another form names no transaction, so it is that route's 404
  tx_hash: z
    .string()
    .openapi({ param: { name: 'tx_hash', in: 'path' }, pattern: TX_HASH_PATTERN, description: 'Ledger or chain transaction hash (hex, 0x optional)' }),
});

/** The artifact of a stored bundle, of either version (a version 1 bundle is read in version 2's form). */
function artifact(row: ProofRow, status: 'complete' | 'partial'): z.infer<typeof ProofSchema> {
  const b = upgradeBundle(JSON.parse(row.bundle));
  return {
    proof_id: row.id,
    intent_id: row.intentId,
    operation_id: b.intent.operation_id,
    status,
    bundle_hash: row.bundleHash,
    bundle_url: `/v1/proof/${row.id}/bundle`,
    custody_url: `/v1/proof/${row.id}/custody`,
    ledger: {
      tx_id: b.ledger.tx_id,
      tx_hash: b.ledger.tx_hash,
      key_page: b.ledger.authority.key_page,
      key_page_version: b.ledger.authority.key_page_version,
      threshold: b.ledger.authority.threshold,
      signatures: b.ledger.authority.signatures,
    },
    chains: b.chains.map((c) => ({
      chain: c.chain,
      evm_chain_id: c.evm_chain_id,
      proof_anchor: c.proof_anchor,
      anchor_id: c.anchor.anchor_id,
      validator_set_root: c.validator_set.root,
      attested_by: c.attestation.signers,
      transactions: { create_anchor: c.create_anchor.tx_hash, execute_comprehensive_proof: c.prove.tx_hash },
      legs: c.legs.map((l) => ({
        leg_id: l.leg_id,
        execution_tx: l.execution.tx_hash,
        result_hash: l.observation.result_hash,
        result_id: l.result.result_id,
        observed_by: l.observation.signers,
      })),
    })),
    created_at: row.createdAt.toISOString(),
  };
}

async function findProof(db: Db, orgId: string, id: string): Promise<ProofRow> {
  const row = await getOrgProof(db, orgId, id);
  if (!row) throw new ApiError(404, 'PROOF_NOT_FOUND', 'Proof not found');
  return row;
}

async function statusOf(db: Db, row: ProofRow) {
  return (await getIntent(db, row.intentId))?.status === 'completed' ? ('complete' as const) : ('partial' as const);
}

/** The proofs the gateway stored: the artifact, its bundle and custody chain, found by id or transaction hash. */
function registerArtifactRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;

  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/proof/{id}',
      tags: ['Proofs'],
      summary: 'Read a proof',
      description:
        'What was proven (operation id, ledger transaction and the key page threshold it met), where (per chain: anchor, validator set, transactions) and by whom (attesting and observing validators).',
      scopes: ['proof:read'],
      request: { params: IdParam },
      responses: { 200: jsonResponse(ProofSchema, 'The proof artifact'), ...errorResponses(404) },
    }),
    async (c) => {
      const row = await findProof(db, requireAuth(c).orgId, c.req.valid('param').id);
      return c.json(artifact(row, await statusOf(db, row)), 200);
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/proof/{id}/bundle',
      tags: ['Proofs'],
      summary: 'Download the proof bundle',
      description:
        'The stored bundle as it was assembled: version `pgw-proof-bundle/2`, or `pgw-proof-bundle/1` for a proof stored before version 2 (served unchanged; the verifier reads both). Self-contained and canonical (sorted keys, no whitespace): the intent as stored, the ledger transaction with its signatures and Merkle receipt, per chain the validator set, anchor, aggregate signature and the three transactions with receipts and trie inclusion proofs against their block headers, the observed effects and the proof_result record. Check it offline with `npm run cli -- verify-bundle <file>`; changing any byte makes it fail. Each download is a `retrieved` custody event.',
      scopes: ['proof:read'],
      request: { params: IdParam },
      responses: {
        200: {
          description: 'The bundle (canonical JSON)',
          headers: RATE_LIMIT_HEADERS,
          content: { 'application/json': { schema: z.record(z.string(), z.unknown()).openapi('ProofBundle') } },
        },
        ...errorResponses(404),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const row = await findProof(db, auth.orgId, c.req.valid('param').id);
      await appendProofCustody<CustodyEvent>(db, row.id, (events) =>
        appendCustody(events, { type: 'retrieved', at: new Date().toISOString(), data: { key_id: auth.keyId, bundle_hash: row.bundleHash } }),
      );
      return c.body(row.bundle, 200, { 'content-type': 'application/json' }) as never;
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/proof/{id}/custody',
      tags: ['Proofs'],
      summary: 'Read the custody chain of a proof',
      description:
        'Events created, attested, anchored, executed, observed, recorded and retrieved; each links to the previous by hash. chain_valid is recomputed on every read.',
      scopes: ['proof:read'],
      request: { params: IdParam },
      responses: {
        200: jsonResponse(
          z.object({
            proof_id: z.uuid(),
            chain_valid: z.boolean(),
            broken_at: z.number().int().optional(),
            reason: z.string().optional(),
            events: z.array(
              z.object({
                seq: z.number().int(),
                type: z.string(),
                at: z.string(),
                data: z.unknown(),
                data_hash: z.string(),
                prev_hash: z.string(),
                hash: z.string(),
              }),
            ),
          }),
          'The custody chain',
        ),
        ...errorResponses(404),
      },
    }),
    async (c) => {
      const row = await findProof(db, requireAuth(c).orgId, c.req.valid('param').id);
      const events = row.custody as CustodyEvent[];
      return c.json({ proof_id: row.id, ...verifyCustody(events), events }, 200);
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/proof/tx/{tx_hash}',
      tags: ['Proofs'],
      summary: 'Find a proof by transaction hash',
      description:
        'The intent’s ledger transaction hash or any of its chain transactions (createAnchor, executeComprehensiveProof, executeGovernanceProofDirect). Governance and key-page transactions have no proof (404); their receipt is at /receipt.',
      scopes: ['proof:read'],
      request: { params: TxParam },
      responses: { 200: jsonResponse(ProofSchema, 'The proof artifact'), ...errorResponses(400, 404) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const h = c.req.valid('param').tx_hash.toLowerCase();
      // a value that is no hash names no transaction: the 404 of an unknown one (docs/api-conventions.md)
      const intent = /^(0x)?[0-9a-f]{64}$/.test(h) ? await findOrgIntentByTxHash(db, auth.orgId, h) : undefined;
      if (!intent?.proofId) throw new ApiError(404, 'PROOF_NOT_FOUND', 'No proof for this transaction hash', { tx_hash: h });
      const row = await findProof(db, auth.orgId, intent.proofId);
      return c.json(artifact(row, await statusOf(db, row)), 200);
    },
  );
}

/** The ledger's own inclusion receipt of any delivered transaction, read from the ledger network. */
function registerReceiptRoute(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const ledger = deps.ledger;
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/proof/tx/{tx_hash}/receipt',
      tags: ['Proofs'],
      summary: 'Merkle inclusion receipt of a ledger transaction',
      description:
        'Read from the ledger network for any delivered transaction (intents, governance, key-page changes). The receipt folds from start (the transaction hash) to anchor; verified says the gateway checked that fold.',
      scopes: ['proof:read'],
      request: { params: TxParam },
      responses: {
        200: jsonResponse(
          z.object({
            tx_hash: z.string(),
            tx_id: z.string(),
            account: z.string(),
            status: z.string().openapi({ example: 'delivered' }),
            anchored: z.boolean(),
            verified: z.boolean(),
            receipt: z
              .object({ start: z.string(), anchor: z.string(), entries: z.array(z.object({ hash: z.string(), right: z.boolean().optional() })) })
              .passthrough(),
          }),
          'The receipt',
        ),
        ...errorResponses(400, 404, 502),
      },
    }),
    async (c) => {
      const h = c.req.valid('param').tx_hash.toLowerCase().replace(/^0x/, '');
      const unknown = () => new ApiError(404, 'TRANSACTION_NOT_FOUND', 'No such transaction on the ledger', { tx_hash: h });
      // a value that is no hash names no transaction: the 404 of an unknown one (docs/api-conventions.md)
      if (!/^[0-9a-f]{64}$/.test(h)) throw unknown();
      try {
        // the v3 API finds a message by hash alone with the principal `unknown`
        const st = await ledger.getTransaction(h, 'acc://unknown');
        if (!st.delivered)
          throw new ApiError(404, 'NOT_DELIVERED', `Transaction is ${st.status}; only delivered transactions have a receipt`, { status: st.status });
        const r = await ledger.getReceipt(st.principal, h);
        return c.json(
          {
            tx_hash: h,
            tx_id: st.txId,
            account: r.account,
            status: st.status,
            anchored: r.verified && !!r.receipt.anchor,
            verified: r.verified,
            receipt: r.receipt,
          },
          200,
        );
      } catch (e) {
        if (e instanceof ApiError) throw e;
        if (isNotFound(e)) throw unknown();
        if (e instanceof LedgerInputError) throw new ApiError(400, 'VALIDATION_ERROR', `tx_hash: ${e.message}`, { field: 'tx_hash' });
        if (e instanceof LedgerTransportError) throw new ApiError(502, 'LEDGER_UNAVAILABLE', 'The ledger could not be reached; retry shortly');
        throw e;
      }
    },
  );
}

export function registerProofRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  registerArtifactRoutes(app, deps);
  registerReceiptRoute(app, deps);
}
