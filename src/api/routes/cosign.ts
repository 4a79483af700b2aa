/**
 * The pending inbox and co-signing (spec §2.3, §2.4, §4.4–§4.6), scoped to the caller's organization:
 *   GET  /v1/pending                   open pending actions found by pending discovery, with stats and pagination
 *   POST /v1/sign                      signing data for one key's vote (approve | reject | abstain) on a pending
 *                                      action or on any pending ledger transaction (hash or TxID)
 *   POST /v1/sign/{id}/signature       claimed atomically, verified, submitted once: a spent request is a 404; a
 *                                      transient ledger failure is a 502 and releases the claim for a retry; a
 *                                      refusal of a signature the ledger already holds (an answer lost) is the
 *                                      success it was; a transaction finished meanwhile is a 409 TX_NOT_PENDING
 */
import { randomUUID } from 'node:crypto';
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Db } from '../../db/client.js';
import {
  claimSignRequest,
  getOrgPendingAction,
  getOrgSignRequest,
  getPendingScan,
  insertSignRequest,
  listPendingActions,
  openGovernanceOpsByTxHash,
  settleSignRequest,
} from '../../db/governance.js';
import { pendingActions } from '../../db/schema.js';
import { progressAfterSubmission, submitPrepared } from '../../governance/submit.js';
import { ed25519PublicKeyProblem } from '../../identity/keys.js';
import {
  bookOfPage,
  delegationPath,
  isNotFound,
  isTransientLedgerError,
  LedgerError,
  normUrl,
  signatureOnLedger,
  storablePreparedSignature,
  type LedgerClient,
  type StoredPreparedSignature,
  type TxStatus,
  type Vote,
} from '../../ledger/index.js';
import type { IdentityRow } from '../../db/identities.js';
import { ledgerChangedSignal } from '../../workflows/governance.js';
import { apiLedger, ledgerApiError, parseSignatureBody, requireValidSignature, SignatureBody } from '../cosign-common.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { findOrgIdentity, requireActive, requireSigningKey } from '../identity-access.js';
import { requireAuth } from '../middleware/auth.js';
import { errorResponses, RATE_LIMIT_HEADERS } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';
import { and, eq } from 'drizzle-orm';

/** The API's vote words and the ledger's. */
export const VOTES: Record<string, Vote> = { approve: 'accept', reject: 'reject', abstain: 'abstain' };
const VOTE_WORD: Record<Vote, string> = { accept: 'approve', reject: 'reject', abstain: 'abstain' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const PendingActionSchema = z
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
    collected_signatures: z.number().int(),
    total_authorities: z.number().int().openapi({ description: "The threshold of the identity's key page" }),
    required_signatures: z.number().int(),
    user_has_signed: z.boolean(),
    awaiting_authorities: z.array(z.string()),
    is_ready: z.boolean().openapi({ description: 'Read from the ledger at the last scan' }),
    expires_at: z.string().nullable(),
    discovered_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('PendingAction');

const SignBody = z
  .object({
    type: z.enum(['pending_action', 'pending_tx']),
    target_id: z.string().openapi({ description: 'pending_action: the pending action id; pending_tx: the transaction hash (64 hex) or TxID acc://<hash>@<account>' }),
    identity: z.string().optional().openapi({ description: 'ADI URL (or id) of the signing identity; required with pending_tx' }),
    signer_url: z.string().optional().openapi({ description: "Key page of the signer (a page of the identity's book); default the identity's key page" }),
    public_key: z.string().optional().openapi({ description: "The signer's Ed25519 key, 64 hex; default the identity's key. Any seat of the page can vote" }),
    vote: z.unknown().optional().openapi({ type: 'string', enum: ['approve', 'reject', 'abstain'], description: 'Default approve. Bound into the signing data' }),
  })
  .openapi('SignRequest');

const SignResponse = z
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
    submit_url: z.string(),
  })
  .openapi('SignRequestPrepared');

const SignResult = z
  .object({
    sign_request_id: z.uuid(),
    status: z.string(),
    tx_hash: z.string(),
    ledger_status: z.string().nullable(),
    signature_count: z.number().int().nullable(),
    is_ready: z.boolean().nullable(),
    awaiting_authorities: z.array(z.string()).nullable(),
    warning: z.string().optional(),
  })
  .openapi('SignResult');

async function orgPendingTxId(db: Db, orgId: string, hash: string): Promise<string | undefined> {
  const [r] = await db
    .select({ txId: pendingActions.txId })
    .from(pendingActions)
    .where(and(eq(pendingActions.orgId, orgId), eq(pendingActions.txHash, hash)))
    .limit(1);
  return r?.txId ?? (await openGovernanceOpsByTxHash(db, orgId, hash))[0]?.txId;
}

/** The pending transaction a pending_tx target names: a TxID, or a hash known to the organization or found on the identity's accounts. */
async function resolvePendingTx(db: Db, ledger: LedgerClient, orgId: string, target: string, identity: IdentityRow): Promise<TxStatus> {
  const t = target.trim();
  if (/^acc:\/\/[0-9a-fA-F]{64}@.+$/.test(t)) return ledger.getTransaction(t);
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(t)) {
    throw new ApiError(400, 'VALIDATION_ERROR', 'target_id: expected a transaction hash (64 hex) or a TxID acc://<hash>@<account>', { field: 'target_id' });
  }
  const hash = t.replace(/^0x/, '').toLowerCase();
  const known = await orgPendingTxId(db, orgId, hash);
  if (known) return ledger.getTransaction(known);
  for (const account of [identity.keyPageUrl, identity.bookUrl, identity.adiUrl, identity.dataAccountUrl]) {
    try {
      return await ledger.getTransaction(hash, account);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  throw new ApiError(404, 'PENDING_TX_NOT_FOUND', 'target_id: no such transaction; give the TxID acc://<hash>@<principal>', { field: 'target_id' });
}

export function registerCosignRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const ledger = apiLedger(deps);
  const now = () => new Date(deps.now?.() ?? Date.now());
  const json = (schema: z.ZodType, description: string) => ({ description, headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema } } });

  // ------------------------------------------------------------------ GET /v1/pending
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/pending',
      tags: ['Co-signing'],
      summary: 'List pending actions',
      description:
        "Ledger transactions waiting for signatures that involve the organization's identities (as principal, as a required authority, or through delegation), as found by the pending-discovery scan. Oldest first. stats count every open action of the identity filter (urgent: expiring within 24 hours); scan tells when the last scan ran and whether it was degraded (a transient ledger error: some entries may be stale).",
      scopes: ['read'],
      request: {
        query: z.object({
          identity: z.string().max(500).optional().openapi({ description: 'ADI URL (or id) of one identity' }),
          category: z.enum(['governance', 'transactions']).optional(),
          status: z.enum(['eligible', 'awaiting_others']).optional(),
          limit: z.coerce.number().int().min(1).max(500).optional().openapi({ description: 'Page size, default 100, at most 500' }),
          offset: z.coerce.number().int().min(0).optional(),
        }),
      },
      responses: {
        200: json(
          z.object({
            actions: z.array(PendingActionSchema),
            stats: z.object({ total: z.number().int(), urgent: z.number().int(), governance: z.number().int(), transactions: z.number().int(), awaiting_others: z.number().int() }),
            pagination: z.object({ limit: z.number().int(), offset: z.number().int(), total: z.number().int(), has_more: z.boolean() }),
            scan: z.object({ last_scan_at: z.string().nullable(), degraded: z.boolean() }),
          }),
          'A page of pending actions',
        ),
        ...errorResponses(400, 404),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const q = c.req.valid('query');
      const limit = q.limit ?? 100;
      const offset = q.offset ?? 0;
      const identityIds = q.identity ? [(await findOrgIdentity(db, auth.orgId, q.identity, { field: 'identity', adiUrl: true })).id] : undefined;
      const [page, scan] = await Promise.all([
        listPendingActions(db, auth.orgId, { identityIds, category: q.category, status: q.status, limit, offset, now: now() }),
        getPendingScan(db, auth.orgId),
      ]);
      return c.json(
        {
          actions: page.rows.map(({ action: a, identityUrl }) => ({
            id: a.id,
            identity_id: a.identityId,
            identity_url: identityUrl,
            category: a.category,
            type: a.type,
            status: a.status,
            tx_hash: a.txHash,
            tx_id: a.txId,
            principal: a.principal,
            collected_signatures: a.collectedSignatures,
            total_authorities: a.threshold,
            required_signatures: a.threshold,
            user_has_signed: a.userHasSigned,
            awaiting_authorities: a.awaitingAuthorities,
            is_ready: a.isReady,
            expires_at: a.expiresAt?.toISOString() ?? null,
            discovered_at: a.discoveredAt.toISOString(),
            updated_at: a.updatedAt.toISOString(),
          })),
          stats: page.stats,
          pagination: { limit, offset, total: page.total, has_more: offset + page.rows.length < page.total },
          scan: { last_scan_at: scan?.lastScanAt.toISOString() ?? null, degraded: scan?.degraded ?? false },
        },
        200,
      );
    },
  );

  // ------------------------------------------------------------------ POST /v1/sign
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/sign',
      tags: ['Co-signing'],
      summary: 'Prepare a co-signature',
      description:
        "Signing data for one key's vote on a pending action (type pending_action, target_id the action id) or on any pending ledger transaction (type pending_tx, target_id its hash or TxID, identity required). The vote (approve, reject or abstain; default approve) is bound into what is signed. A reject is a signature and can defeat the transaction; abstaining does not reject. A key of a delegate book signs through the delegating page automatically; a book that is itself a required authority (e.g. a new delegate) signs directly and stays in awaiting_authorities until it does.",
      scopes: ['write'],
      request: { body: { required: true, content: { 'application/json': { schema: SignBody } } } },
      responses: { 201: json(SignResponse, 'Prepared: sign data_for_signature and submit to submit_url'), ...errorResponses(400, 404, 409, 502) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const body = c.req.valid('json');
      const voteWord = body.vote ?? 'approve';
      if (typeof voteWord !== 'string' || !Object.hasOwn(VOTES, voteWord)) {
        throw new ApiError(400, 'VALIDATION_ERROR', 'vote: must be the string approve, reject or abstain', { field: 'vote' });
      }
      const vote = VOTES[voteWord]!;

      let identity: IdentityRow;
      let pendingActionId: string | null = null;
      let txId: string | undefined;
      if (body.type === 'pending_action') {
        const action = UUID.test(body.target_id) ? await getOrgPendingAction(db, auth.orgId, body.target_id) : undefined;
        if (!action) throw new ApiError(404, 'PENDING_ACTION_NOT_FOUND', 'target_id: pending action not found', { field: 'target_id' });
        pendingActionId = action.id;
        txId = action.txId;
        identity = await findOrgIdentity(db, auth.orgId, body.identity ?? action.identityId, { field: 'identity', adiUrl: true });
      } else {
        if (!body.identity) throw new ApiError(400, 'VALIDATION_ERROR', 'identity: required with type pending_tx (the signing identity)', { field: 'identity' });
        identity = await findOrgIdentity(db, auth.orgId, body.identity, { field: 'identity', adiUrl: true });
      }
      requireActive(identity);

      let signerUrl = identity.keyPageUrl;
      if (body.signer_url !== undefined) {
        let u: string;
        try {
          u = normUrl(body.signer_url, 'signer_url');
        } catch {
          throw new ApiError(400, 'VALIDATION_ERROR', 'signer_url: not an Accumulate URL', { field: 'signer_url' });
        }
        if (bookOfPage(u) !== normUrl(identity.bookUrl)) throw new ApiError(400, 'VALIDATION_ERROR', `signer_url: must be a key page of ${identity.bookUrl}`, { field: 'signer_url' });
        signerUrl = u;
      }
      let publicKey: string;
      if (body.public_key !== undefined) {
        const p = ed25519PublicKeyProblem(body.public_key);
        if (p) throw new ApiError(400, 'VALIDATION_ERROR', `public_key: ${p}`, { field: 'public_key' });
        publicKey = body.public_key.toLowerCase();
      } else publicKey = requireSigningKey(identity);

      let prepared;
      try {
        const tx = txId ? await ledger.getTransaction(txId) : await resolvePendingTx(db, ledger, auth.orgId, body.target_id, identity);
        if (!tx.pending) throw new ApiError(409, 'TX_NOT_PENDING', `target_id: the transaction is no longer pending (${tx.status})`, { field: 'target_id', ledger_status: tx.status });
        const delegators = await delegationPath(ledger, tx, bookOfPage(signerUrl));
        prepared = await ledger.prepareExternalSignature({ pendingTx: tx.txId, signerUrl, publicKey, vote, delegators });
      } catch (e) {
        throw ledgerApiError(e, 'sign');
      }
      const id = randomUUID();
      await insertSignRequest(db, {
        id,
        orgId: auth.orgId,
        identityId: identity.id,
        pendingActionId,
        txHash: prepared.txHash,
        txId: prepared.txId,
        signerUrl: prepared.signerUrl,
        publicKey,
        vote: voteWord,
        prepared: storablePreparedSignature(prepared) as unknown as Record<string, unknown>,
      });
      return c.json(
        {
          sign_request_id: id,
          status: 'signing_required',
          signing_data: {
            data_for_signature: prepared.hashToSign,
            transaction_hash: prepared.txHash,
            signer_url: prepared.signerUrl,
            signer_version: prepared.signerVersion,
            timestamp: prepared.timestamp,
            vote: VOTE_WORD[prepared.vote],
            delegators: prepared.delegators,
          },
          submit_url: `/v1/sign/${id}/signature`,
        },
        201,
      );
    },
  );

  // ------------------------------------------------------------------ POST /v1/sign/{id}/signature
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/sign/{id}/signature',
      tags: ['Co-signing'],
      summary: 'Submit a co-signature',
      description:
        'The signature over data_for_signature by the key the request was prepared for. The request is claimed atomically and spent once: a second submission is a 404. 400 when the signature does not verify (nothing is sent; the request stays usable); 502 when the ledger could not be reached (the claim is released: retry the same signature).',
      scopes: ['write'],
      request: {
        params: z.object({ id: z.uuid().openapi({ param: { name: 'id', in: 'path' }, description: 'Sign request id' }) }),
        body: { required: true, content: { 'application/json': { schema: SignatureBody } } },
      },
      responses: { 200: json(SignResult, 'Submitted'), ...errorResponses(400, 404, 409, 502) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const id = c.req.valid('param').id;
      const spent = () => new ApiError(404, 'SIGN_REQUEST_SPENT', 'Sign request already used; prepare a new one with POST /v1/sign');
      const row = await getOrgSignRequest(db, auth.orgId, id);
      if (!row) throw new ApiError(404, 'SIGN_REQUEST_NOT_FOUND', 'Sign request not found');
      if (row.status === 'submitted' || row.status === 'failed') throw spent();
      const { signature, publicKey } = parseSignatureBody(c.req.valid('json'));
      const prepared = row.prepared as unknown as StoredPreparedSignature;
      if (publicKey !== row.publicKey) throw new ApiError(400, 'WRONG_SIGNER', 'public_key: the signing data was prepared for another key', { field: 'public_key' });
      requireValidSignature(prepared.hashToSign, signature, publicKey);

      if (!(await claimSignRequest(db, auth.orgId, id, now()))) {
        const current = await getOrgSignRequest(db, auth.orgId, id);
        if (current?.status === 'claimed') throw new ApiError(409, 'SIGN_REQUEST_IN_FLIGHT', 'This sign request is being submitted', undefined, { 'Retry-After': '1' });
        throw spent();
      }
      try {
        await submitPrepared(ledger, prepared, signature);
      } catch (e) {
        if (isTransientLedgerError(e) || !(e instanceof LedgerError)) {
          await settleSignRequest(db, id, 'signing_required');
          throw ledgerApiError(e, 'signature');
        }
        // refused: an earlier submission whose answer was lost may have landed (its timestamp is used now), or the
        // transaction finished between prepare and submit
        const on = await signatureOnLedger(ledger, { txId: prepared.txId, txHash: prepared.txHash, publicKey, vote: prepared.vote }).catch(() => undefined);
        if (!on?.signed) {
          await settleSignRequest(db, id, 'failed', e.message);
          if (on && (on.tx.delivered || on.tx.failed)) {
            throw new ApiError(409, 'TX_NOT_PENDING', `The transaction is no longer pending (${on.tx.status}); nothing was signed`, { ledger_status: on.tx.status });
          }
          throw ledgerApiError(e, 'signature');
        }
      }
      await settleSignRequest(db, id, 'submitted');
      // a governance operation on this transaction looks at the ledger now
      for (const op of await openGovernanceOpsByTxHash(db, auth.orgId, row.txHash)) {
        await deps.temporal.workflow
          .getHandle(`governance-${op.id}`)
          .signal(ledgerChangedSignal)
          .catch(() => undefined);
      }
      try {
        const out = await progressAfterSubmission(ledger, prepared, row.signerUrl);
        return c.json(
          {
            sign_request_id: id,
            status: 'submitted',
            tx_hash: row.txHash,
            ledger_status: out.ledgerStatus,
            signature_count: out.progress.collected,
            is_ready: out.progress.isReady,
            awaiting_authorities: out.progress.awaitingAuthorities,
          },
          200,
        );
      } catch (e) {
        return c.json(
          {
            sign_request_id: id,
            status: 'submitted',
            tx_hash: row.txHash,
            ledger_status: null,
            signature_count: null,
            is_ready: null,
            awaiting_authorities: null,
            warning: `submitted, but the progress could not be read: ${(e as Error).message}`,
          },
          200,
        );
      }
    },
  );
}
