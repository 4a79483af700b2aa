/**
 * Governance operations, the use case behind /v1/governance:
 *   prepare   one UpdateKeyPage / UpdateAccountAuth / CreateKeyPage / CreateTokenAccount from the operations, checked
 *             against the live page or account (what changes nothing, creating an account that exists included;
 *             unless forced, an unreachable quorum or an identity that could no longer sign its intents, and an
 *             inherited authority kept when another is added), prepared for the
 *             initiating key; the row, then the workflow `governance-<id>` started (the row undone only when the
 *             workflow did not start)
 *   submit    the initiator's signature as an Update on `governance-<id>`
 *   read      the operation, with its signing progress read live from the ledger once a signature was submitted
 */
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { ApiError } from './errors.js';
import { deleteGovernanceOp, getOrgGovernanceOp, insertGovernanceOp, type GovernanceOpRow } from '../db/governance.js';
import { getIdentity, type IdentityRow } from '../db/identities.js';
import {
  accountAuthOps,
  authorityQuorumProblem,
  authorityStepProblem,
  CHANGES_NOTHING,
  governanceBody,
  GovernanceInputError,
  intentAccountProblem,
  keepInheritedAuthorities,
  keyPageOps,
  keyPageQuorumProblem,
  keyPageStepProblem,
  operationsKind,
  resolveTokenAccountOps,
  type AccountAuthorities,
  type GovernanceOperation,
} from '../governance/operations.js';
import { requiredSignatures } from '../governance/submit.js';
import { ed25519PublicKeyProblem } from '../identity/keys.js';
import {
  normUrl,
  parentUrl,
  signingProgress,
  staleCauseOfMessage,
  storablePreparedSignature,
  type PreparedSignature,
  type StoredPreparedSignature,
} from '../ledger/index.js';
import { redactUrls } from '../net/redact.js';
import { governanceWorkflowId, startGovernanceWorkflow, submitGovernanceSignature } from '../temporal/governance.js';
import type { Caller, ServiceDeps } from './deps.js';
import { findOrgIdentity, requireActive, requireSigningKey } from './identity-access.js';
import { ledgerApiError, parseSignatureBody, requireValidSignature } from './signing.js';
import { refreshGovernanceSigning, signingDataStale, staleCauseOf } from './signing-data.js';
import { requireProviderScope, signAndSubmit } from './provider.js';

export interface PrepareGovernanceRequest {
  identity: string;
  operations: unknown[];
  force?: boolean;
  signer_public_key?: string;
  signer_key_page?: string;
  key_page_url?: string;
  account_url?: string;
}

/** What the initiator's signature did, as the workflow reports it. */
export type GovernanceSignatureOutcome = Awaited<ReturnType<typeof submitGovernanceSignature>>;

/** Live signing progress of a submitted operation, or why it could not be read. */
export type LiveProgress =
  | { collected_signatures: number; required_signatures: number; is_ready: boolean; awaiting_authorities: string[] }
  | { ledger_error: string };

const within = (url: string, root: string) => url === root || url.startsWith(`${root}/`);

/** The key that will sign: given (any current key of the signing page), else the identity's. */
function initiatingKey(identity: IdentityRow, given: string | undefined): string {
  if (given === undefined) return requireSigningKey(identity);
  const p = ed25519PublicKeyProblem(given);
  if (p) throw new ApiError(400, 'VALIDATION_ERROR', `signer_public_key: ${p}`, { field: 'signer_public_key' });
  return given.toLowerCase();
}

/** The principal the operations change and the page that signs, each within the identity's ADI or book. */
function targets(identity: IdentityRow, kind: string, body: PrepareGovernanceRequest): { principal: string; signerUrl: string } {
  const adi = normUrl(identity.adiUrl);
  const target = (given: string | undefined, root: string, fallback: string, field: string) => {
    if (given === undefined) return fallback;
    let u: string;
    try {
      u = normUrl(given, field);
    } catch {
      throw new ApiError(400, 'VALIDATION_ERROR', `${field}: not an Accumulate URL`, { field });
    }
    if (!within(u, root)) throw new ApiError(400, 'VALIDATION_ERROR', `${field}: must be within ${root}`, { field });
    return u;
  };
  const principal =
    kind === 'key_page'
      ? target(body.key_page_url, normUrl(identity.bookUrl), identity.keyPageUrl, 'key_page_url')
      : kind === 'authority'
        ? target(body.account_url, adi, identity.adiUrl, 'account_url')
        : kind === 'create_token_account'
          ? identity.adiUrl
          : identity.bookUrl;
  const signerUrl = target(body.signer_key_page, normUrl(identity.bookUrl), identity.keyPageUrl, 'signer_key_page');
  return { principal, signerUrl };
}

const quorumUnreachable = (problem: string) =>
  new ApiError(400, 'QUORUM_UNREACHABLE', `operations: ${problem}; send force: true to do it anyway`, { field: 'operations' });

/** The account and its ancestors up to the identity's ADI, each with its own authorities as the ledger holds them. */
async function authorityChain(deps: ServiceDeps, url: string, adiUrl: string): Promise<AccountAuthorities[]> {
  const chain: AccountAuthorities[] = [];
  const root = normUrl(adiUrl);
  for (let u: string | undefined = normUrl(url); u && within(u, root); u = parentUrl(u)) {
    const a = await deps.ledger.queryAccount(u);
    chain.push({ url: u, authorities: a.authorities });
  }
  return chain;
}

/**
 * Authority operations checked against the live account, and the operations to send:
 *  - an operation that changes nothing (adding a present authority, removing an absent one) is refused, force or not;
 *  - adding an authority to an account that inherits its authorities keeps the inherited book (added explicitly in
 *    the same transaction) unless forced: the ledger would otherwise make the new book the account's only authority;
 *  - unless forced, the account must keep an enabled authority, and the account the identity's intents are written
 *    to (its data account) must keep the identity's book among its authorities.
 */
async function checkAuthorityOps(
  deps: ServiceDeps,
  identity: IdentityRow,
  principal: string,
  given: GovernanceOperation[],
  force: boolean,
): Promise<GovernanceOperation[]> {
  const chain = await authorityChain(deps, principal, identity.adiUrl);
  const account = chain[0]!;
  const inheritedFrom = chain.find((a) => a.authorities.length > 0);
  const step = authorityStepProblem(account, accountAuthOps(given), account.authorities.length === 0 ? inheritedFrom?.url : undefined);
  if (step) throw new ApiError(400, 'VALIDATION_ERROR', `${step.field}: ${step.message}`, { field: step.field });
  if (force) return given;
  const ops = keepInheritedAuthorities(account, inheritedFrom && inheritedFrom !== account ? inheritedFrom.authorities : [], given).operations;
  const authOps = accountAuthOps(ops);
  const problem =
    authorityQuorumProblem(account.authorities, authOps) ??
    intentAccountProblem(await authorityChain(deps, identity.dataAccountUrl, identity.adiUrl), principal, authOps, identity.bookUrl);
  if (problem) throw quorumUnreachable(problem);
  return ops;
}

/** An account to create that already exists: the operation changes nothing (the ledger refuses it once signed). */
async function checkNewAccounts(deps: ServiceDeps, ops: GovernanceOperation[]): Promise<void> {
  for (const [i, o] of ops.entries()) {
    const existing = await deps.ledger.tryQueryAccount(o.url!);
    if (existing) {
      const field = `operations[${i}]`;
      throw new ApiError(400, 'VALIDATION_ERROR', `${field}: ${normUrl(o.url!)} already exists (a ${existing.type}): ${CHANGES_NOTHING}`, { field });
    }
  }
}

/** Prepare an operation: the row, with `governance-<id>` started and waiting for the initiator's signature. */
export async function prepareGovernance(
  deps: ServiceDeps,
  caller: Caller,
  body: PrepareGovernanceRequest,
  opts: { providerSigning?: boolean } = {},
): Promise<{ op: GovernanceOpRow; identityUrl: string; signingMode: 'external' | 'provider' }> {
  const db = deps.database.db;
  const ledger = deps.ledger;
  const identity = await findOrgIdentity(db, caller.orgId, body.identity, { field: 'identity', adiUrl: true });
  requireActive(identity);
  const publicKey = initiatingKey(identity, body.signer_public_key);
  // the key the gateway holds initiates: it signs, for a caller allowed to have it sign
  const held = identity.signingMode === 'provider' && publicKey === identity.publicKey;
  if (held) requireProviderScope(opts.providerSigning);

  let ops = body.operations as GovernanceOperation[];
  let kind: ReturnType<typeof operationsKind>;
  try {
    kind = operationsKind(ops);
    if (kind === 'create_token_account') ops = resolveTokenAccountOps(ops, identity.adiUrl);
    governanceBody(kind, ops);
  } catch (e) {
    if (e instanceof GovernanceInputError) throw new ApiError(400, e.code, e.message, { field: e.field });
    throw e;
  }
  const { principal, signerUrl } = targets(identity, kind, body);

  let prepared: PreparedSignature;
  let signerThreshold: number | null = null;
  try {
    const page = kind === 'key_page' ? await ledger.queryKeyPage(principal) : undefined;
    if (page) {
      // what changes nothing (the ledger refuses most of it once signed), force or not
      const step = keyPageStepProblem(page, keyPageOps(ops));
      if (step) throw new ApiError(400, 'VALIDATION_ERROR', `${step.field}: ${step.message}`, { field: step.field });
    }
    if (kind === 'authority') ops = await checkAuthorityOps(deps, identity, principal, ops, body.force === true);
    if (kind === 'create_token_account') await checkNewAccounts(deps, ops);
    if (page && !body.force) {
      const problem = keyPageQuorumProblem(page, keyPageOps(ops));
      if (problem) throw quorumUnreachable(problem);
    }
    prepared = await ledger.prepareExternalSignature({ principal, body: governanceBody(kind, ops), signerUrl, publicKey });
    // the threshold the signatures must meet, kept for when the operation has changed the page
    const signerPage = page && normUrl(page.url) === normUrl(prepared.signerUrl) ? page : await ledger.queryKeyPage(prepared.signerUrl);
    signerThreshold = signerPage.version === prepared.signerVersion ? Math.max(1, signerPage.acceptThreshold) : null;
  } catch (e) {
    throw ledgerApiError(e, 'governance', { publicKey: 'signer_public_key', signerUrl: 'signer_key_page', principal: 'key_page_url' });
  }

  const id = randomUUID();
  const op = await insertGovernanceOp(db, {
    id,
    orgId: caller.orgId,
    identityId: identity.id,
    kind,
    operations: ops as unknown as Record<string, unknown>[],
    principal,
    signerUrl: prepared.signerUrl,
    txHash: prepared.txHash,
    txId: prepared.txId,
    prepared: storablePreparedSignature(prepared) as unknown as Record<string, unknown>,
    keyPageVersion: prepared.signerVersion,
    signerThreshold,
  });
  await startGovernanceWorkflow(
    deps.temporal,
    deps.config.temporal.taskQueue,
    { opId: id, orgId: caller.orgId, nominatedPublicKey: publicKey },
    async (err) => {
      caller.log.error('governance workflow could not be started', { err, governance_op_id: id });
      await deleteGovernanceOp(db, id);
      throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'The governance operation could not be started; retry shortly', undefined, { 'Retry-After': '5' });
    },
  );
  caller.log.info('governance operation prepared', { governance_op_id: id, workflow_id: governanceWorkflowId(id), kind });
  if (held) {
    await signAndSubmit(
      deps,
      caller,
      { kind: 'governance', id },
      (sig) =>
        submitGovernanceSignature(deps.temporal, id, { signature: sig.signature, publicKey: sig.publicKey }).catch((err) => {
          throw updateError(err, id);
        }),
      () => refreshGovernanceSigning(deps, caller, id),
    );
    return { op: (await getOrgGovernanceOp(db, caller.orgId, id)) ?? op, identityUrl: identity.adiUrl, signingMode: 'provider' };
  }
  return { op, identityUrl: identity.adiUrl, signingMode: 'external' };
}

/** Update failure types of governance-<id> → API errors. */
function updateError(err: unknown, opId: string): unknown {
  if (err instanceof WorkflowNotFoundError) return new ApiError(409, 'GOVERNANCE_CLOSED', 'The governance operation is closed');
  if (!(err instanceof WorkflowUpdateFailedError)) return err;
  const cause = err.cause;
  const type = cause instanceof ApplicationFailure ? cause.type : undefined;
  const msg = cause?.message ?? err.message;
  switch (type) {
    case 'AlreadySigned':
      return new ApiError(409, 'ALREADY_SIGNED', `This key has already signed the operation (treat as success and read the operation): ${msg}`);
    case 'Closed':
      return new ApiError(409, 'GOVERNANCE_CLOSED', msg);
    case 'InFlight':
      return new ApiError(409, 'SIGNATURE_IN_FLIGHT', msg, undefined, { 'Retry-After': '1' });
    case 'WrongKey':
      return new ApiError(400, 'WRONG_SIGNER', msg, { field: 'public_key' });
    case 'SigningDataStale':
      // the operation stays signing_required: fresh signing data for it is the fix
      return signingDataStale(
        staleCauseOf((cause as { details?: unknown } | undefined)?.details) ?? staleCauseOfMessage(msg) ?? 'timestamp',
        `The signing data is stale: ${msg}`,
        `/v1/governance/${opId}/signing-data`,
      );
    case 'SignatureRefused':
      return new ApiError(400, 'LEDGER_REFUSED', `signature: the ledger refused it: ${msg}`, { field: 'signature' });
    case 'LedgerUnavailable':
      return new ApiError(502, 'LEDGER_UNAVAILABLE', msg);
    default:
      return err;
  }
}

/** Submit the initiator's signature (checked here first: the nominated key, and that it verifies). */
export async function submitGovernanceOpSignature(
  deps: ServiceDeps,
  caller: Caller,
  opId: string,
  body: { signature: string; public_key: string },
): Promise<{ op: GovernanceOpRow; outcome: GovernanceSignatureOutcome }> {
  const op = await getOrgGovernanceOp(deps.database.db, caller.orgId, opId);
  if (!op) throw new ApiError(404, 'GOVERNANCE_NOT_FOUND', 'Governance operation not found');
  const { signature, publicKey } = parseSignatureBody(body);
  const prepared = op.prepared as unknown as StoredPreparedSignature;
  if (publicKey !== prepared.publicKey)
    throw new ApiError(400, 'WRONG_SIGNER', 'public_key: the signing data was prepared for another key', { field: 'public_key' });
  requireValidSignature(prepared.hashToSign, signature, publicKey);
  try {
    return { op, outcome: await submitGovernanceSignature(deps.temporal, op.id, { signature, publicKey }) };
  } catch (err) {
    throw updateError(err, op.id);
  }
}

/** An operation of the caller's organization with its identity's URL, and its live progress once signed. */
export async function readGovernanceOp(
  deps: ServiceDeps,
  orgId: string,
  opId: string,
): Promise<{ op: GovernanceOpRow; identityUrl: string; live?: LiveProgress }> {
  const op = await getOrgGovernanceOp(deps.database.db, orgId, opId);
  if (!op) throw new ApiError(404, 'GOVERNANCE_NOT_FOUND', 'Governance operation not found');
  const identityUrl = (await getIdentity(deps.database.db, op.identityId))?.adiUrl ?? '';
  if (op.signedKeys.length === 0) return { op, identityUrl };
  try {
    const st = await deps.ledger.getTransaction(op.txId);
    const p = await signingProgress(deps.ledger, st, op.signerUrl);
    return {
      op,
      identityUrl,
      live: {
        collected_signatures: p.collected,
        required_signatures: requiredSignatures(op, st.delivered, p.threshold),
        is_ready: p.isReady,
        awaiting_authorities: p.awaitingAuthorities,
      },
    };
  } catch (e) {
    return { op, identityUrl, live: { ledger_error: redactUrls((e as Error).message, [deps.config.ledgerUrl]) } };
  }
}
