/**
 * Transaction intents, the use case behind /v1/transaction:
 *   prepare   the nominated signer seat, the canonical intent built from the request's legs, its ledger WriteData
 *             prepared for that seat (and the page's credits checked), then the row; no workflow yet
 *   submit    the signature as an Update on `intent-<id>`, which it starts (Update-with-Start): verified by the
 *             workflow, then sent to the ledger. An intent never signed is expired by the sweep (intent-expiry.ts)
 *   read      one intent with its per-chain cycles (its live co-signing progress: intent-progress.ts)
 */
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Address } from 'viem';
import { ApiError } from './errors.js';
import type { ChainAccountRef, IdentityRow } from '../db/identities.js';
import { ledgerHashForm } from '../webhooks/stored-forms.js';
import { intentChangesFor, type IntentChangeSubscription } from '../db/intent-changes.js';
import {
  getIntent,
  getOrgIntent,
  getOrgIntentView,
  insertIntent,
  markIntentFailed,
  recordedSubmissionOf,
  storedSigning,
  type IntentRow,
  type IntentViewRow,
} from '../db/intents.js';
import { listOrgIntentPage, type IntentListFilter } from '../db/intent-list.js';
import type { RowPage } from '../db/pagination.js';
import type { SigningData } from '../db/schema.js';
import { LedgerInputError, LedgerTransportError, recentKeyPage, tx, type PreparedSignature } from '../ledger/index.js';
import { buildIntent, INTENT_MEMO, IntentError, type CanonicalIntent } from '../protocol/intent/index.js';
import { intentLegsFromRequest, IntentRequestError, legLabel } from '../protocol/intent/request.js';
import type { LegInput } from '../protocol/intent/model.js';
import { SIGNATURE_REJECTIONS, type SignatureRejection } from '../protocol/failures.js';
import { submitIntentSignature } from '../temporal/intents.js';
import { nativeSymbols } from './chains.js';
import type { Caller, ServiceDeps } from './deps.js';
import { findOrgIdentityWithAccounts, requireActive, requireSigningKey } from './identity-access.js';
import { prepareTransferIntent } from './ledger-transfers.js';
import { isSendTokensIntent } from '../protocol/intent/transfer.js';
import { refreshIntentSigning, refuseExpired, signingDataStale, staleCauseOf } from './signing-data.js';
import { signAndSubmit } from './provider.js';
import { requireValidSignature } from './signing.js';
import { signatureFormatProblem } from '../protocol/signature.js';
import { checkLegs, reserveIntentSpend, type PolicyLeg } from './provider-policy.js';

/** A provider-signed identity signs with the key the gateway holds: no other seat can be nominated. */
function refuseProviderSeat(body: PrepareIntentRequest): void {
  if (body.signer_public_key !== undefined) {
    throw new ApiError(
      400,
      'VALIDATION_ERROR',
      'signer_public_key: cannot be combined with a provider-signed identity (the gateway signs with the key it holds)',
      {
        field: 'signer_public_key',
      },
    );
  }
}

/** Ledger token transfers carry no native chain value the provider policy could bound: the gateway does not sign them. */
function providerTransferRefused(): ApiError {
  return new ApiError(
    403,
    'PROVIDER_POLICY_DENIED',
    'allowed_chains: the provider policy covers chain legs only; a ledger token transfer (sendTokens) is not signed by the gateway',
    {
      rule: 'allowed_chains',
    },
  );
}

/** The legs as the provider policy sees them: chain, what they execute against, native value. */
const policyLegs = (built: CanonicalIntent): PolicyLeg[] => built.legs.map((l) => ({ legId: l.legId, chain: l.chain, target: l.target, value: l.value }));
import { PROOF_CLASS_VALUES, proofClassOf, type ProofClass, type ProofClassValue } from '../protocol/proof-class.js';

const LEDGER_NETWORK_NAMES = ['accumulate', 'accumulate-devnet', 'accumulate-testnet', 'accumulate-mainnet'];

export { PROOF_CLASSES, PROOF_CLASS_VALUES, storedProofClass, type ProofClass } from '../protocol/proof-class.js';

export interface PrepareIntentRequest {
  identity_id: string;
  intent: Record<string, unknown>;
  /** a class or an alias of one (protocol/proof-class.ts); the intent stores the class */
  proof_class?: ProofClassValue;
  contract_addresses?: string[];
  signer_public_key?: string;
  signer_key_page?: string;
}

export type { SigningData } from '../db/schema.js';

export interface PreparedIntent {
  row: IntentRow;
  signingData: SigningData;
  operationId: string;
  /** a provider-signing identity's intent: signed by the gateway and submitted in the same call */
  submitted?: { txHash: string; txId: string };
}

/** The seat that signs: any member of a page of the identity's book (default: the identity key on page 1). */
function nominatedSeat(identity: IdentityRow, identityKey: string, body: PrepareIntentRequest): { signerKey: string; signerPage: string } {
  let signerKey = identityKey;
  if (body.signer_public_key !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(body.signer_public_key))
      throw new ApiError(400, 'VALIDATION_ERROR', 'signer_public_key: must be 64 hex characters', { field: 'signer_public_key' });
    signerKey = body.signer_public_key.toLowerCase();
  }
  let signerPage = identity.keyPageUrl;
  if (body.signer_key_page !== undefined) {
    const page = body.signer_key_page.toLowerCase();
    if (!new RegExp(`^${identity.bookUrl.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[1-9][0-9]*$`).test(page)) {
      throw new ApiError(
        400,
        'VALIDATION_ERROR',
        `signer_key_page: must be a page of the identity's key book ${identity.bookUrl} (e.g. ${identity.bookUrl}/2)`,
        { field: 'signer_key_page' },
      );
    }
    signerPage = page;
  }
  return { signerKey, signerPage };
}

/** The canonical intent of the request's legs (each leg checked against the identity's accounts and the chains). */
function canonicalIntent(
  deps: ServiceDeps,
  { identity, accounts }: { identity: IdentityRow; accounts: readonly ChainAccountRef[] },
  body: PrepareIntentRequest,
  times: { intentId: string; createdAt: number; expiresAt: number },
): { built: CanonicalIntent; intentType: string } {
  const contractAddresses = (body.contract_addresses ?? []).map((a, i) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(a))
      throw new ApiError(400, 'VALIDATION_ERROR', `contract_addresses[${i}]: must be a 20-byte 0x address`, { field: `contract_addresses[${i}]` });
    return a as Address;
  });
  let legs: LegInput[] = [];
  try {
    const req = intentLegsFromRequest(
      {
        adiUrl: identity.adiUrl,
        accounts: new Map(accounts.map((a) => [a.chain, a.address as Address])),
        chains: deps.config.chains.map((ch) => ({ name: ch.name, chainId: ch.chainId, symbols: nativeSymbols(ch.name) })),
        contractAddresses,
        ledgerNames: LEDGER_NETWORK_NAMES,
      },
      body.intent,
    );
    legs = req.legs;
    const built = buildIntent({ ...times, adiUrl: identity.adiUrl, keyBook: identity.bookUrl, legs, proofClass: requestedProofClass(body.proof_class) });
    return { built, intentType: req.type };
  } catch (e) {
    if (e instanceof IntentRequestError) throw new ApiError(e.code === 'UNSUPPORTED_INTENT' ? 422 : 400, e.code, e.message, { field: e.field, ...e.details });
    if (e instanceof IntentError) throw buildRefusal(e, legs);
    throw e;
  }
}

/** The class `proof_class` names; any other value is a 400 listing the accepted ones (the route's schema checks first). */
function requestedProofClass(value: string | undefined): ProofClass {
  const c = proofClassOf(value);
  if (!c) throw new ApiError(400, 'VALIDATION_ERROR', `proof_class: must be one of: ${PROOF_CLASS_VALUES.join(', ')}`, { field: 'proof_class' });
  return c;
}

/**
 * The 400 of a canonical-intent check, in the request's one form for leg errors: `intent.legs[<i>].<field>
 * (leg "<legId>"): <message>` with the path in details.field (buildIntent names `legs[<i>].<field>` alone).
 */
function buildRefusal(e: IntentError, legs: readonly LegInput[]): ApiError {
  const field = e.field ?? 'intent';
  const text = e.message.startsWith(`${field}: `) ? e.message.slice(field.length + 2) : e.message;
  const leg = /^legs\[(\d+)\](?:\.(.+))?$/.exec(field);
  if (leg) {
    const i = Number(leg[1]);
    return new ApiError(400, 'VALIDATION_ERROR', `${legLabel(i, leg[2] ?? '', legs[i]?.legId)}: ${text}`, { field: `intent.${field}` });
  }
  const path = field.startsWith('legs') ? `intent.${field}` : field;
  return new ApiError(400, 'VALIDATION_ERROR', `${path}: ${text}`, { field: path });
}

/** The intent's WriteData prepared for the nominated key (which must be on the page); the page must have credits. */
async function prepareWriteData(
  deps: ServiceDeps,
  identity: IdentityRow,
  built: CanonicalIntent,
  seat: { signerKey: string; signerPage: string },
  expiresAt: number,
): Promise<PreparedSignature> {
  const { signerKey, signerPage } = seat;
  let prepared: PreparedSignature;
  let credits: number;
  try {
    const page = await recentKeyPage(deps.ledger, signerPage);
    credits = page.creditBalance;
    prepared = await deps.ledger.prepareExternalSignature({
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
    if ((e as { code?: string }).code === 'notFound')
      throw new ApiError(400, 'VALIDATION_ERROR', `signer_key_page: ${signerPage} does not exist`, { field: 'signer_key_page' });
    if (e instanceof LedgerTransportError) throw new ApiError(502, 'LEDGER_UNAVAILABLE', 'The ledger could not be reached; retry shortly');
    throw e;
  }
  if (credits <= 0) {
    const buy = `POST /v1/identity/${identity.id}/credits${signerPage.toLowerCase() === identity.keyPageUrl.toLowerCase() ? '' : ` with key_page_url ${signerPage}`}`;
    throw new ApiError(
      402,
      'INSUFFICIENT_CREDITS',
      `The key page ${signerPage} has no credits: the ledger would refuse the intent; add credits first: ${buy}`,
      {
        key_page: signerPage,
      },
    );
  }
  return prepared;
}

/** Prepare an intent: 201 material (the row, what to sign); `intent-<id>` starts with its signature. */
export async function prepareIntent(deps: ServiceDeps, caller: Caller, body: PrepareIntentRequest): Promise<PreparedIntent> {
  const db = deps.database.db;
  if (typeof body.identity_id !== 'string' || !body.identity_id) throw new ApiError(400, 'VALIDATION_ERROR', 'identity_id: required', { field: 'identity_id' });
  const found = await findOrgIdentityWithAccounts(db, caller.orgId, body.identity_id, { field: 'identity_id' });
  const { identity } = found;
  const identityKey = requireSigningKey(identity);
  requireActive(identity);
  const provider = identity.signingMode === 'provider';
  if (provider) refuseProviderSeat(body);
  const seat = nominatedSeat(identity, identityKey, body);

  const intentId = randomUUID();
  const createdAt = Math.floor(Date.now() / 1000);
  const expiresAt = createdAt + deps.config.intentTtlSeconds;
  // a ledger token transfer: no chain leg, its own preparation (ledger-transfers.ts)
  if (isSendTokensIntent(body.intent)) {
    if (provider) throw providerTransferRefused();
    return prepareTransferIntent(deps, caller, body, identity, seat, { intentId, createdAt, expiresAt });
  }
  const { built, intentType } = canonicalIntent(deps, found, body, { intentId, createdAt, expiresAt });
  const legs = policyLegs(built);
  const policy = provider ? checkLegs(identity, legs) : undefined;
  const prepared = await prepareWriteData(deps, identity, built, seat, expiresAt);
  if (policy) await reserveIntentSpend(deps, identity, policy, intentId, legs);

  const { prepared: preparedTx, signingData } = storedSigning(
    intentId,
    { principal: identity.dataAccountUrl, memo: INTENT_MEMO, expireAt: new Date(expiresAt * 1000).toISOString(), publicKey: seat.signerKey },
    prepared,
  );
  const row = await insertIntent(db, {
    id: intentId,
    orgId: caller.orgId,
    identityId: identity.id,
    intentType,
    intent: { parts: built.parts, legs: built.blobs.crossChainData.legs.map((l) => ({ leg_id: l.leg_id, chain: l.chain, chain_id: l.chain_id })) },
    operationId: built.operationId,
    signingData,
    prepared: preparedTx,
    signerPublicKey: seat.signerKey,
    signerKeyPage: prepared.signerUrl,
    expiresAt: new Date(expiresAt * 1000),
    signingMode: provider ? 'provider' : 'external',
  });
  caller.log.info('intent prepared', { intent_id: intentId, legs: built.legs.length });
  if (provider) {
    // the gateway signs with the key it holds (in the worker) and submits as a client's signature is submitted
    const submitted = await signAndSubmit(
      deps,
      caller,
      { kind: 'intent', id: intentId },
      (sig) => submitSignature(deps, caller, intentId, { signature: sig.signature, public_key: sig.publicKey }),
      () => refreshIntentSigning(deps, caller, intentId),
    ).catch(async (e: unknown) => {
      // no signature was made, so none can reach the ledger: the intent ends here and gives its 24-hour spend back,
      // and the client prepares again (nothing waits on this intent id)
      if (!(e instanceof ApiError) || e.code !== 'PROVIDER_SIGNING_FAILED') throw e;
      await markIntentFailed(db, intentId, {
        status: 'failed',
        stage: 'signing_required',
        error: 'the gateway could not sign the intent with the key it holds',
      });
      throw new ApiError(
        e.status,
        e.code,
        `${e.message}; this intent is closed (its policy spend given back): prepare it again`,
        { intent_id: intentId },
        e.headers,
      );
    });
    return { row, signingData, operationId: built.operationId, submitted };
  }
  return { row, signingData, operationId: built.operationId };
}

/** The API error of each signature rejection the workflow names. */
const CODES: Record<SignatureRejection, string> = {
  InvalidInput: 'VALIDATION_ERROR',
  WrongSigner: 'WRONG_SIGNER',
  InvalidSignature: 'INVALID_SIGNATURE',
  SignatureRejected: 'SIGNATURE_REJECTED',
  AlreadySigned: 'ALREADY_SIGNED',
  IntentClosed: 'INTENT_CLOSED',
  IntentExpired: 'INTENT_EXPIRED',
  SigningDataChanged: 'SIGNING_DATA_CHANGED',
  SigningDataStale: 'SIGNING_DATA_STALE',
  SignatureInFlight: 'SIGNATURE_IN_FLIGHT',
  LedgerUnavailable: 'LEDGER_UNAVAILABLE',
};

/** 409 for an intent that takes no signature any more: signed already, or closed. */
function closed(r: IntentRow): ApiError {
  return r.txHash
    ? new ApiError(409, 'ALREADY_SIGNED', 'Intent already signed; read the intent for its status', { status: r.status, tx_hash: ledgerHashForm(r.txHash) })
    : new ApiError(409, 'INTENT_CLOSED', `Intent is ${r.status}; it takes no signature`, { status: r.status });
}

/** Throws the 409 of an intent that takes no signature any more, read afresh; returns while it still takes one. */
async function answerFromRecord(db: ServiceDeps['database']['db'], intentId: string): Promise<void> {
  const now = await getIntent(db, intentId);
  if (now && now.status !== 'signing_required') throw closed(now);
}

/**
 * The Update's answer, or the intent's row's if that comes first. An Update is answered when the workflow task that ran
 * it completes, and a single signer's whole proof cycle runs in that task (local activities, a second or more), while
 * the submission step marks the row submitted as soon as the ledger took the signature. So a signature sent to an
 * unsigned intent is answered when the row records its submission (or the intent closed), and the Update's answer
 * counts only when it comes first (a refusal always does: its task ends with it). A signature sent again to an intent
 * the row records as submitted is left to the Update (the workflow may not hold it: a lost Update).
 */
async function firstAnswer(deps: ServiceDeps, row: IntentRow, args: { signature: string; publicKey: string }): Promise<{ txId: string; txHash: string }> {
  const sub = row.status === 'signing_required' ? intentChangesFor(deps.database).subscribe(row.id) : undefined;
  const update = submitIntentSignature(deps.temporal, deps.config.temporal.taskQueue, row, args);
  if (!sub) return update;
  const done = { value: false };
  try {
    return await Promise.race([update, answerFromRow(deps.database.db, row.id, sub, done)]);
  } finally {
    done.value = true;
    sub.close();
    update.catch(() => undefined);
  }
}

/** Settles when the unsigned intent's row records a submission (or closes without one); never once `done`. */
async function answerFromRow(
  db: ServiceDeps['database']['db'],
  intentId: string,
  sub: IntentChangeSubscription,
  done: { value: boolean },
): Promise<{ txId: string; txHash: string }> {
  for (;;) {
    await sub.next(ROW_WAIT_MS);
    if (done.value) return new Promise(() => undefined);
    const now = await getIntent(db, intentId);
    if (done.value || !now) continue;
    const recorded = recordedSubmissionOf(now);
    if (recorded) return recorded;
    if (now.status !== 'signing_required') throw closed(now);
  }
}

/** how long one wait for a change of the row lasts before the row is read again */
const ROW_WAIT_MS = 30_000;

/** Submit the signature of an intent of the caller's organization; its ledger transaction once submitted. */
export async function submitSignature(
  deps: ServiceDeps,
  caller: Caller,
  intentId: string,
  body: { signature: string; public_key: string },
): Promise<{ txHash: string; txId: string }> {
  const db = deps.database.db;
  const row = await getOrgIntent(db, caller.orgId, intentId);
  if (!row) throw new ApiError(404, 'INTENT_NOT_FOUND', 'Intent not found');
  // A submitted intent is asked of its workflow, not answered from the row: the row is marked by the workflow's
  // submission step, and when the process that sent that Update was killed before the workflow recorded it, the
  // Update is lost while the row says submitted. The workflow then still waits for the signature; the client sending
  // it again (its documented answer to a lost response) hands it over, and the cycle goes on. A workflow that has it
  // answers ALREADY_SIGNED.
  if (row.status !== 'signing_required' && row.status !== 'submitted') throw closed(row);
  // past the ledger (a stage of the chain cycle) the workflow holds the signature for certain: answered from the row,
  // not by an Update that a quorum round's open workflow task would hold for seconds
  if (row.status === 'submitted' && row.stage !== 'submitted') throw closed(row);
  if (row.status === 'signing_required') {
    refuseExpired(row);
    // a well-formed signature by the nominated key is verified here, natively, before the workflow hears of it (its
    // submission step verifies it again against the hash it holds); anything else is the workflow's to answer
    const wellFormed = !signatureFormatProblem(body.signature, body.public_key);
    if (wellFormed && body.public_key.toLowerCase() === row.signerPublicKey.toLowerCase())
      requireValidSignature(row.prepared.hashToSign, body.signature, body.public_key);
  }
  try {
    const out = await firstAnswer(deps, row, { signature: body.signature, publicKey: body.public_key });
    return { ...out, txHash: ledgerHashForm(out.txHash) };
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause as { type?: string; message?: string } | undefined;
      const type = (cause?.type ?? '') as SignatureRejection;
      const status = SIGNATURE_REJECTIONS[type];
      // signing data the ledger can no longer accept: the intent stays open for fresh signing data
      const stale = type === 'SigningDataStale' ? staleCauseOf((cause as { details?: unknown }).details) : undefined;
      if (stale) throw signingDataStale(stale, cause?.message ?? type, `/v1/transaction/${intentId}/signing-data`);
      if (status) {
        // signed already, closed, or past its expiry: a record that took a signature names its state
        if (type === 'AlreadySigned' || type === 'IntentClosed' || type === 'IntentExpired') await answerFromRecord(db, intentId);
        const field = /^(signature|public_key):/.exec(cause?.message ?? '')?.[1];
        const retry = status === 502 ? { 'Retry-After': '2' } : type === 'SignatureInFlight' ? { 'Retry-After': '1' } : undefined;
        throw new ApiError(status, CODES[type], cause?.message ?? type, field ? { field } : undefined, retry);
      }
    }
    // the workflow ended (expired, or finished) while we asked: answer from the record
    await answerFromRecord(db, intentId);
    throw err;
  }
}

/** One intent of the caller's organization with its per-chain cycles; 404 otherwise. */
export async function readIntent(deps: ServiceDeps, orgId: string, intentId: string): Promise<IntentViewRow> {
  const found = await getOrgIntentView(deps.database.db, orgId, intentId);
  if (!found) throw new ApiError(404, 'INTENT_NOT_FOUND', 'Intent not found');
  return found;
}

/**
 * A page of the organization's intents, newest first (`page.limit` rows from `page.offset` or after `page.after`),
 * each with its per-chain cycles, and how many match the filter in all.
 */
export async function listIntents(
  deps: ServiceDeps,
  orgId: string,
  filter: IntentListFilter,
  page: RowPage,
): Promise<{ rows: { id: string; createdAt: Date; view: IntentViewRow }[]; total: number }> {
  return listOrgIntentPage(deps.database.db, orgId, filter, page);
}
