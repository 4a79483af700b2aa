/**
 * Stale signing data, one rule for intents, sign requests and governance operations. The ledger requires each
 * key's signature timestamps to grow and each signature to name its key page's current version, so signing data
 * prepared before the key signed something prepared later, or before its page changed, can no longer be signed.
 * Such a signature answers 409 SIGNING_DATA_STALE naming the cause (details.cause: timestamp | key_page_version)
 * and the resource stays open; fresh signing data for the same resource (same id, a new hash to sign) is then:
 *   intents        POST /v1/transaction/{id}/signing-data   an Update on intent-<id> (starting it if need be):
 *                                                           the transaction prepared again, the workflow
 *                                                           verifies the next signature against the new hash
 *   sign requests  POST /v1/sign/{id}/signing-data          the same vote prepared again on the same transaction
 *   governance     POST /v1/governance/{id}/signing-data    an Update on governance-<id>: the operation's
 *                                                           transaction prepared again from its operations
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApiError } from './errors.js';
import { getOrgIntent, type IntentRow } from '../db/intents.js';
import { getOrgGovernanceOp, getOrgSignRequest, type GovernanceOpRow } from '../db/governance.js';
import { getIdentity } from '../db/identities.js';
import { replaceSignRequestPrepared } from '../db/signing-data.js';
import {
  delegationPath,
  bookOfPage,
  storablePreparedSignature,
  STALE_SIGNING_CAUSES,
  type PreparedSignature,
  type StaleSigningCause,
  type StoredPreparedSignature,
} from '../ledger/index.js';
import { SIGNATURE_REJECTIONS, type SignatureRejection } from '../protocol/failures.js';
import { refreshIntentSigningData, type RefreshedSigningData } from '../temporal/intents.js';
import { refreshGovernanceSigningData } from '../temporal/signing-data.js';
import type { Caller, ServiceDeps } from './deps.js';
import { ledgerApiError } from './signing.js';

/** The 409 of a signature whose signing data the ledger can no longer accept, naming the cause and the refresh. */
export function signingDataStale(cause: StaleSigningCause, message: string, refreshUrl: string): ApiError {
  return new ApiError(409, 'SIGNING_DATA_STALE', message, { cause, signing_data_url: refreshUrl });
}

/** The cause an Update failure carries in its details (the workflow's SigningDataStale). */
export function staleCauseOf(details: unknown): StaleSigningCause | undefined {
  const cause = Array.isArray(details) ? (details[0] as { cause?: unknown } | undefined)?.cause : undefined;
  return STALE_SIGNING_CAUSES.find((c) => c === cause);
}

/**
 * The 409 of an unsigned intent past its expires_at that the expiry sweep has not recorded yet: refused here, so
 * that a late request never starts the intent's workflow.
 */
export function refuseExpired(r: IntentRow): void {
  if (r.expiresAt.getTime() <= Date.now())
    throw new ApiError(409, 'INTENT_EXPIRED', 'Intent expired before it was signed; prepare a new one', { status: r.status });
}

/** The 409 of an intent that takes no signing data any more: signed already, or closed. */
function intentClosed(r: IntentRow): ApiError {
  return r.txHash
    ? new ApiError(409, 'ALREADY_SIGNED', 'Intent already signed; it takes no new signing data', { status: r.status })
    : new ApiError(409, 'INTENT_CLOSED', `Intent is ${r.status}; it takes no new signing data`, { status: r.status });
}

const REFRESH_CODES: Partial<Record<SignatureRejection, string>> = {
  AlreadySigned: 'ALREADY_SIGNED',
  IntentClosed: 'INTENT_CLOSED',
  IntentExpired: 'INTENT_EXPIRED',
  SignatureRejected: 'SIGNATURE_REJECTED',
  SignatureInFlight: 'SIGNATURE_IN_FLIGHT',
  LedgerUnavailable: 'LEDGER_UNAVAILABLE',
};

/** Fresh signing data for an unsigned intent of the caller's organization: the same intent, a new hash to sign. */
export async function refreshIntentSigning(deps: ServiceDeps, caller: Caller, intentId: string): Promise<{ row: IntentRow; fresh: RefreshedSigningData }> {
  const db = deps.database.db;
  const row = await getOrgIntent(db, caller.orgId, intentId);
  if (!row) throw new ApiError(404, 'INTENT_NOT_FOUND', 'Intent not found');
  if (row.status !== 'signing_required') throw intentClosed(row);
  refuseExpired(row);
  let fresh: RefreshedSigningData;
  try {
    fresh = await refreshIntentSigningData(deps.temporal, deps.config.temporal.taskQueue, row);
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause as { type?: string; message?: string } | undefined;
      const type = (cause?.type ?? '') as SignatureRejection;
      const code = REFRESH_CODES[type];
      if (code) {
        const status = SIGNATURE_REJECTIONS[type];
        const retry = status === 502 ? { 'Retry-After': '2' } : type === 'SignatureInFlight' ? { 'Retry-After': '1' } : undefined;
        throw new ApiError(status, code, cause?.message ?? type, undefined, retry);
      }
    }
    const now = await getOrgIntent(db, caller.orgId, intentId);
    if (now && now.status !== 'signing_required') throw intentClosed(now);
    if (err instanceof WorkflowNotFoundError || err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new ApiError(409, 'INTENT_CLOSED', 'Intent takes no new signing data');
    }
    throw err;
  }
  caller.log.info('intent signing data refreshed', { intent_id: intentId });
  return { row: (await getOrgIntent(db, caller.orgId, intentId)) ?? row, fresh };
}

/**
 * Fresh signing data for an open sign request of the caller's organization: the same key's same vote on the same
 * transaction, prepared again (a new timestamp, the page's current version and delegation path). A request being
 * submitted is a 409; a spent one is the 404 its submission answers.
 */
export async function refreshSignRequestSigning(deps: ServiceDeps, caller: Caller, id: string): Promise<PreparedSignature> {
  const db = deps.database.db;
  const row = await getOrgSignRequest(db, caller.orgId, id);
  if (!row) throw new ApiError(404, 'SIGN_REQUEST_NOT_FOUND', 'Sign request not found');
  const inFlight = () => new ApiError(409, 'SIGN_REQUEST_IN_FLIGHT', 'This sign request is being submitted', undefined, { 'Retry-After': '1' });
  const spent = () => new ApiError(404, 'SIGN_REQUEST_SPENT', 'Sign request already used; prepare a new one with POST /v1/sign');
  if (row.status === 'claimed') throw inFlight();
  if (row.status !== 'signing_required') throw spent();
  const old = row.prepared as unknown as StoredPreparedSignature;
  let prepared: PreparedSignature;
  try {
    const tx = await deps.ledger.getTransaction(row.txId);
    if (!tx.pending)
      throw new ApiError(409, 'TX_NOT_PENDING', `The transaction is no longer pending (${tx.status}); nothing to sign`, { ledger_status: tx.status });
    const delegators = await delegationPath(deps.ledger, tx, bookOfPage(row.signerUrl));
    prepared = await deps.ledger.prepareExternalSignature({
      pendingTx: tx.txId,
      signerUrl: row.signerUrl,
      publicKey: row.publicKey,
      vote: old.vote,
      delegators,
    });
  } catch (e) {
    throw ledgerApiError(e, 'sign');
  }
  if (!(await replaceSignRequestPrepared(db, caller.orgId, id, storablePreparedSignature(prepared) as unknown as Record<string, unknown>))) {
    const now = await getOrgSignRequest(db, caller.orgId, id);
    throw now?.status === 'claimed' ? inFlight() : spent();
  }
  caller.log.info('sign request signing data refreshed', { sign_request_id: id });
  return prepared;
}

/** The API error of each refusal of the governance workflow's refreshSigningData Update. */
function governanceRefreshError(err: unknown): unknown {
  if (err instanceof WorkflowNotFoundError) return new ApiError(409, 'GOVERNANCE_CLOSED', 'The governance operation is closed');
  if (!(err instanceof WorkflowUpdateFailedError)) return err;
  const cause = err.cause as { type?: string; message?: string } | undefined;
  const msg = cause?.message ?? err.message;
  switch (cause?.type) {
    case 'Closed':
      return new ApiError(409, 'GOVERNANCE_CLOSED', msg);
    case 'InFlight':
      return new ApiError(409, 'SIGNATURE_IN_FLIGHT', msg, undefined, { 'Retry-After': '1' });
    case 'NotFound':
      return new ApiError(404, 'GOVERNANCE_NOT_FOUND', 'Governance operation not found');
    case 'SignatureRefused':
      return new ApiError(400, 'LEDGER_REFUSED', msg);
    case 'LedgerUnavailable':
      return new ApiError(502, 'LEDGER_UNAVAILABLE', msg, undefined, { 'Retry-After': '2' });
    default:
      return err;
  }
}

/** Fresh signing data for an unsigned governance operation of the caller's organization: the same operation, a new hash to sign. */
export async function refreshGovernanceSigning(deps: ServiceDeps, caller: Caller, opId: string): Promise<{ op: GovernanceOpRow; identityUrl: string }> {
  const db = deps.database.db;
  const op = await getOrgGovernanceOp(db, caller.orgId, opId);
  if (!op) throw new ApiError(404, 'GOVERNANCE_NOT_FOUND', 'Governance operation not found');
  if (op.status !== 'signing_required') throw new ApiError(409, 'GOVERNANCE_CLOSED', `The operation is ${op.status}; it takes no new signing data`);
  try {
    await refreshGovernanceSigningData(deps.temporal, opId);
  } catch (err) {
    throw governanceRefreshError(err);
  }
  caller.log.info('governance signing data refreshed', { governance_op_id: opId });
  const fresh = (await getOrgGovernanceOp(db, caller.orgId, opId)) ?? op;
  return { op: fresh, identityUrl: (await getIdentity(db, op.identityId))?.adiUrl ?? '' };
}
