/**
 * Co-signing, the use case behind /v1/sign:
 *   prepare   signing data for one key's vote (approve | reject | abstain) on a pending action or on any pending
 *             ledger transaction (hash or TxID), stored as a sign request
 *   submit    the request claimed atomically, the signature verified and submitted once: a spent request is a 404;
 *             a transient ledger failure is a 502 and releases the claim for a retry; a refusal of a signature the
 *             ledger already holds (an answer lost) is the success it was; a transaction finished meanwhile is a
 *             409 TX_NOT_PENDING; a key that already signed the transaction (an earlier request's signature) is a
 *             409 ALREADY_SIGNED. Open governance operations on the transaction are told to look at the ledger, and
 *             the inbox of every identity it involves is written at once (src/governance/inbox.ts).
 * The pending inbox behind /v1/pending is read in src/services/inbox-live.ts.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from './errors.js';
import type { Db } from '../db/client.js';
import { claimSignRequest, getOrgPendingAction, getOrgSignRequest, insertSignRequest, orgPendingTxId, settleSignRequest } from '../db/governance.js';
import type { IdentityRow } from '../db/identities.js';
import { announceIntentChange } from '../db/intent-changes.js';
import { recordInInbox, transactionSignatureCount } from '../governance/inbox.js';
import { progressAfterSubmission, submitPrepared } from '../governance/submit.js';
import { ed25519PublicKeyProblem } from '../identity/keys.js';
import {
  bookOfPage,
  delegationPath,
  isNotFound,
  isTransientLedgerError,
  LedgerError,
  normUrl,
  signatureOnLedger,
  staleSigningCause,
  storablePreparedSignature,
  type LedgerClient,
  type PreparedSignature,
  type StoredPreparedSignature,
  type TxStatus,
  type Vote,
} from '../ledger/index.js';
import { notifyTransactionFollowers } from '../temporal/ledger-changed.js';
import { kickWebhookDispatcher } from '../temporal/webhooks.js';
import type { Caller, ServiceDeps } from './deps.js';
import { findOrgIdentity, requireActive, requireSigningKey } from './identity-access.js';
import { invalidateInbox } from './inbox-live.js';
import { ledgerApiError, parseSignatureBody, requireValidSignature } from './signing.js';
import { refreshSignRequestSigning, signingDataStale } from './signing-data.js';
import { requireProviderScope, signAndSubmit } from './provider.js';
import { UUID } from '../db/ids.js';

/** The API's vote words and the ledger's. */
const VOTES: Record<string, Vote> = { approve: 'accept', reject: 'reject', abstain: 'abstain' };
export const VOTE_WORD: Record<Vote, string> = { accept: 'approve', reject: 'reject', abstain: 'abstain' };

export interface SignRequestBody {
  type: 'pending_action' | 'pending_tx';
  target_id: string;
  identity?: string;
  signer_url?: string;
  public_key?: string;
  vote?: unknown;
}

/** What a co-signature submission answers: the ledger's view after it, or a warning when that could not be read. */
export interface CosignResult {
  sign_request_id: string;
  status: 'submitted';
  tx_hash: string;
  ledger_status: string | null;
  signature_count: number | null;
  is_ready: boolean | null;
  awaiting_authorities: string[] | null;
  warning?: string;
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

/** The signing identity, the pending action (if the target is one) and its transaction's id. */
async function signingTarget(db: Db, orgId: string, body: SignRequestBody): Promise<{ identity: IdentityRow; pendingActionId: string | null; txId?: string }> {
  if (body.type === 'pending_action') {
    const action = UUID.test(body.target_id) ? await getOrgPendingAction(db, orgId, body.target_id) : undefined;
    if (!action) throw new ApiError(404, 'PENDING_ACTION_NOT_FOUND', 'target_id: pending action not found', { field: 'target_id' });
    const identity = await findOrgIdentity(db, orgId, body.identity ?? action.identityId, { field: 'identity', adiUrl: true });
    return { identity, pendingActionId: action.id, txId: action.txId };
  }
  if (!body.identity) throw new ApiError(400, 'VALIDATION_ERROR', 'identity: required with type pending_tx (the signing identity)', { field: 'identity' });
  return { identity: await findOrgIdentity(db, orgId, body.identity, { field: 'identity', adiUrl: true }), pendingActionId: null };
}

/** The signing seat: a key page of the identity's book (default its page) and a key (default the identity's). */
function signingSeat(identity: IdentityRow, body: SignRequestBody): { signerUrl: string; publicKey: string } {
  let signerUrl = identity.keyPageUrl;
  if (body.signer_url !== undefined) {
    let u: string;
    try {
      u = normUrl(body.signer_url, 'signer_url');
    } catch {
      throw new ApiError(400, 'VALIDATION_ERROR', 'signer_url: not an Accumulate URL', { field: 'signer_url' });
    }
    if (bookOfPage(u) !== normUrl(identity.bookUrl))
      throw new ApiError(400, 'VALIDATION_ERROR', `signer_url: must be a key page of ${identity.bookUrl}`, { field: 'signer_url' });
    signerUrl = u;
  }
  let publicKey: string;
  if (body.public_key !== undefined) {
    const p = ed25519PublicKeyProblem(body.public_key);
    if (p) throw new ApiError(400, 'VALIDATION_ERROR', `public_key: ${p}`, { field: 'public_key' });
    publicKey = body.public_key.toLowerCase();
  } else publicKey = requireSigningKey(identity);
  return { signerUrl, publicKey };
}

/** Prepare one key's vote on a pending transaction: the stored sign request and what to sign. */
export async function prepareCosignature(
  deps: ServiceDeps,
  caller: Caller,
  body: SignRequestBody,
  opts: { providerSigning?: boolean } = {},
): Promise<{ id: string; prepared: PreparedSignature; provider?: CosignResult }> {
  const db = deps.database.db;
  const voteWord = body.vote ?? 'approve';
  if (typeof voteWord !== 'string' || !Object.hasOwn(VOTES, voteWord)) {
    throw new ApiError(400, 'VALIDATION_ERROR', 'vote: must be the string approve, reject or abstain', { field: 'vote' });
  }
  const vote = VOTES[voteWord]!;
  const { identity, pendingActionId, txId } = await signingTarget(db, caller.orgId, body);
  requireActive(identity);
  const { signerUrl, publicKey } = signingSeat(identity, body);
  // the key the gateway holds votes: it signs, for a caller allowed to have it sign
  const held = identity.signingMode === 'provider' && publicKey === identity.publicKey;
  if (held) requireProviderScope(opts.providerSigning);

  let prepared: PreparedSignature;
  try {
    const tx = txId ? await deps.ledger.getTransaction(txId) : await resolvePendingTx(db, deps.ledger, caller.orgId, body.target_id, identity);
    if (!tx.pending)
      throw new ApiError(409, 'TX_NOT_PENDING', `target_id: the transaction is no longer pending (${tx.status})`, {
        field: 'target_id',
        ledger_status: tx.status,
      });
    const delegators = await delegationPath(deps.ledger, tx, bookOfPage(signerUrl));
    prepared = await deps.ledger.prepareExternalSignature({ pendingTx: tx.txId, signerUrl, publicKey, vote, delegators });
  } catch (e) {
    throw ledgerApiError(e, 'sign');
  }
  const id = randomUUID();
  await insertSignRequest(db, {
    id,
    orgId: caller.orgId,
    identityId: identity.id,
    pendingActionId,
    txHash: prepared.txHash,
    txId: prepared.txId,
    signerUrl: prepared.signerUrl,
    publicKey,
    vote: voteWord,
    prepared: storablePreparedSignature(prepared) as unknown as Record<string, unknown>,
  });
  if (held) {
    const provider = await signAndSubmit(
      deps,
      caller,
      { kind: 'sign_request', id },
      (sig) => submitCosignature(deps, caller, id, { signature: sig.signature, public_key: sig.publicKey }),
      () => refreshSignRequestSigning(deps, caller, id),
    );
    return { id, prepared, provider };
  }
  return { id, prepared };
}

/**
 * Send the signature of a claimed request. A refusal may be an earlier submission whose answer was lost (its
 * timestamp is used now): the ledger is asked whether it holds the signature before the refusal counts.
 */
async function submitClaimed(deps: ServiceDeps, id: string, prepared: StoredPreparedSignature, signature: string, publicKey: string): Promise<void> {
  const db = deps.database.db;
  try {
    await submitPrepared(deps.ledger, prepared, signature);
  } catch (e) {
    if (isTransientLedgerError(e) || !(e instanceof LedgerError)) {
      await settleSignRequest(db, id, 'signing_required');
      throw ledgerApiError(e, 'signature');
    }
    // refused: an earlier submission whose answer was lost may have landed, or the transaction finished between
    // prepare and submit
    const on = await signatureOnLedger(deps.ledger, { txId: prepared.txId, txHash: prepared.txHash, publicKey, vote: prepared.vote }).catch(() => undefined);
    const stale = staleSigningCause(e);
    if (!on?.signed && stale && on && !on.tx.delivered && !on.tx.failed) {
      // prepared before the key's latest signature or its page's change: the request stays open for fresh signing data
      await settleSignRequest(db, id, 'signing_required');
      throw signingDataStale(stale, `The signing data is stale (${e.message}); fetch fresh signing data and sign again`, `/v1/sign/${id}/signing-data`);
    }
    if (!on?.signed) {
      await settleSignRequest(db, id, 'failed', e.message);
      if (on && (on.tx.delivered || on.tx.failed)) {
        throw new ApiError(409, 'TX_NOT_PENDING', `The transaction is no longer pending (${on.tx.status}); nothing was signed`, {
          ledger_status: on.tx.status,
        });
      }
      throw ledgerApiError(e, 'signature');
    }
  }
  await settleSignRequest(db, id, 'submitted');
}

/**
 * A key that already signed the transaction signs nothing new: an earlier signature of `p`'s key on the same signer
 * and delegation path, with the same vote, that still counts (on a pending transaction: made at the signer version
 * `p` was prepared at; a change of the page since voided it and the key signs again) is a 409 ALREADY_SIGNED naming
 * the transaction, and the request is spent. The request's own signature found there (a submission whose answer was
 * lost: same timestamp) is not a duplicate. A ledger that cannot be read leaves the question to the submission.
 */
async function refuseDuplicate(deps: ServiceDeps, id: string, p: StoredPreparedSignature): Promise<void> {
  let st: TxStatus;
  try {
    st = await deps.ledger.getTransaction(p.txId);
  } catch {
    return;
  }
  const pk = p.publicKey.toLowerCase();
  const path = (d: string[] | undefined) => (d ?? []).map((u) => normUrl(u)).join(',');
  const mine = st.signatures.filter(
    (s) => String(s.publicKey ?? '').toLowerCase() === pk && normUrl(s.signer) === normUrl(p.signerUrl) && path(s.delegators) === path(p.delegators),
  );
  const earlier = mine[mine.length - 1];
  if (!earlier || earlier.timestamp === p.timestamp || earlier.vote !== p.vote) return;
  if (st.pending && earlier.signerVersion !== undefined && earlier.signerVersion !== p.signerVersion) return;
  await settleSignRequest(deps.database.db, id, 'failed', 'the key had already signed the transaction');
  throw new ApiError(
    409,
    'ALREADY_SIGNED',
    `This key has already signed transaction ${p.txHash} (treat as success; its state is in GET /v1/pending); nothing was submitted`,
    { tx_hash: p.txHash, ledger_status: st.status },
  );
}

/**
 * After a co-signature: the inbox of every identity the transaction involves shows it now (a new action, the
 * signer's action awaiting others, or closed when the signature completed it), and this API's cached ledger reads are
 * dropped. A new action's inbox.action_pending is delivered at once. Never fails the submission.
 */
async function recordCosignature(deps: ServiceDeps, caller: Caller, txId: string, publicKey: string): Promise<void> {
  const inbox = await recordInInbox(deps.database.db, deps.ledger, { txId, signedBy: publicKey });
  invalidateInbox(deps.ledger);
  if (inbox.error) caller.log.warn('pending inbox not written after a co-signature', { tx_id: txId, err: inbox.error });
  if (inbox.created > 0) await kickWebhookDispatcher(deps.temporal, deps.config.temporal.taskQueue).catch(() => undefined);
}

/** Submit a co-signature for a sign request of the caller's organization (spent once). */
export async function submitCosignature(deps: ServiceDeps, caller: Caller, id: string, body: { signature: string; public_key: string }): Promise<CosignResult> {
  const db = deps.database.db;
  const now = () => new Date(deps.now?.() ?? Date.now());
  const spent = () => new ApiError(404, 'SIGN_REQUEST_SPENT', 'Sign request already used; prepare a new one with POST /v1/sign');
  const row = await getOrgSignRequest(db, caller.orgId, id);
  if (!row) throw new ApiError(404, 'SIGN_REQUEST_NOT_FOUND', 'Sign request not found');
  if (row.status === 'submitted' || row.status === 'failed') throw spent();
  const { signature, publicKey } = parseSignatureBody(body);
  const prepared = row.prepared as unknown as StoredPreparedSignature;
  if (publicKey !== row.publicKey)
    throw new ApiError(400, 'WRONG_SIGNER', 'public_key: the signing data was prepared for another key', { field: 'public_key' });
  requireValidSignature(prepared.hashToSign, signature, publicKey);

  if (!(await claimSignRequest(db, caller.orgId, id, now()))) {
    const current = await getOrgSignRequest(db, caller.orgId, id);
    if (current?.status === 'claimed')
      throw new ApiError(409, 'SIGN_REQUEST_IN_FLIGHT', 'This sign request is being submitted', undefined, { 'Retry-After': '1' });
    throw spent();
  }
  await refuseDuplicate(deps, id, prepared);
  await submitClaimed(deps, id, prepared, signature, publicKey);
  await recordCosignature(deps, caller, prepared.txId, publicKey);
  // what waits on the transaction looks now; a read following one of its intents (Prefer: wait) answers with the
  // new co-signing progress
  for (const intentId of await notifyTransactionFollowers(db, deps.temporal, caller.orgId, row.txHash)) await announceIntentChange(db, intentId);
  const base = { sign_request_id: id, status: 'submitted' as const, tx_hash: row.txHash };
  try {
    const out = await progressAfterSubmission(deps.ledger, prepared, row.signerUrl);
    return {
      ...base,
      ledger_status: out.ledgerStatus,
      signature_count: await transactionSignatureCount(deps.ledger, await deps.ledger.getTransaction(out.txId)),
      is_ready: out.progress.isReady,
      awaiting_authorities: out.progress.awaitingAuthorities,
    };
  } catch (e) {
    return {
      ...base,
      ledger_status: null,
      signature_count: null,
      is_ready: null,
      awaiting_authorities: null,
      warning: `submitted, but the progress could not be read: ${(e as Error).message}`,
    };
  }
}
