/**
 * governanceWorkflow (`governance-<id>`): one governance operation from preparation to the ledger's verdict.
 *
 *   signing_required    waits for the initiator's signature (Update `submitSignature`, the nominated key only)
 *   pending_signatures  submitted; the page (threshold > 1) or a new delegate still has to approve — co-signers
 *                       sign through POST /v1/sign; the workflow follows the transaction on the ledger
 *   executed | rejected | expired   as the ledger decided (nothing but the ledger executes it)
 *
 * The Update's validator refuses a second signature of a key (AlreadySigned → 409), another key than the nominated
 * one (WrongKey → 400) and a closed or closing operation (Closed → 409). A transient ledger failure during submission
 * ends the Update with LedgerUnavailable (→ 502) and leaves the operation signing_required, so the same signature can
 * be retried; signing data the ledger can no longer accept (SigningDataStale → 409) leaves it signing_required (since
 * GOVERNANCE_STALE_STAYS_OPEN; it failed the operation before), and the Update `refreshSigningData` prepares its
 * transaction again (a new hash to sign, same operation). Expiry asks the ledger first: a transaction it holds with
 * the signature (an answer lost) is followed, not expired.
 * Signal `ledgerChanged` (sent after a co-signature) makes it look at the ledger at once.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { GovernanceActivities, GovernanceProgress } from '../activities/governance.js';
import type { GovernanceSigningDataActivities } from '../activities/governance-signing-data.js';
import { ledgerChangedSignal } from './ledger-changed.js';
import { notifyWebhookDispatcher } from './webhook-dispatcher.js';
import { StageKey } from './search-attributes.js';

export interface GovernanceWorkflowInput {
  opId: string;
  orgId: string;
  /** hex public key the signing data was prepared for */
  nominatedPublicKey: string;
  /** how long an unsigned operation waits, default 7 days */
  signingWindowSeconds?: number;
  /** carried over continueAsNew */
  resume?: { status: string; signedKeys: string[] };
}

export interface GovernanceSignatureArgs {
  signature: string;
  publicKey: string;
}

export const submitGovernanceSignatureUpdate = defineUpdate<GovernanceProgress, [GovernanceSignatureArgs]>('submitSignature');
/** Fresh signing data for the unsigned operation (POST /v1/governance/{id}/signing-data). */
export const refreshGovernanceSigningDataUpdate = defineUpdate<{ hashToSign: string; txHash: string; keyPageVersion: number }, []>('refreshSigningData');
/** A stale signature leaves the operation open for fresh signing data; histories from before failed it. */
export const GOVERNANCE_STALE_STAYS_OPEN = 'governance-stale-stays-open';
export const governanceStateQuery = defineQuery<{ status: string; signedKeys: string[] }>('state');

const TERMINAL = ['executed', 'rejected', 'failed', 'expired'];
const POLLS_BEFORE_CONTINUE = 500;

const submitActs = proxyActivities<GovernanceActivities & GovernanceSigningDataActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '200 milliseconds',
    backoffCoefficient: 2,
    maximumAttempts: 3,
    nonRetryableErrorTypes: ['SignatureRefused', 'AlreadySigned', 'NotFound'],
  },
});
const acts = proxyActivities<GovernanceActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: ['NotFound'] },
});

function failureType(err: unknown): string | undefined {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  return e instanceof ApplicationFailure ? (e.type ?? undefined) : undefined;
}

export async function governanceWorkflow(input: GovernanceWorkflowInput): Promise<{ status: string }> {
  let status = input.resume?.status ?? 'signing_required';
  const signedKeys = new Set(input.resume?.signedKeys ?? []);
  let submitting = false;
  /** set while fresh signing data is being prepared: no signature may start then */
  let refreshing = false;
  /** set while expiry is being decided: no signature may start then */
  let closing = false;
  let changed = false;
  const nominated = input.nominatedPublicKey.toLowerCase();
  const stage = (s: string) => {
    status = s;
    upsertSearchAttributes([{ key: StageKey, value: s }]);
  };

  setHandler(governanceStateQuery, () => ({ status, signedKeys: [...signedKeys] }));
  setHandler(ledgerChangedSignal, () => {
    changed = true;
  });
  setHandler(
    submitGovernanceSignatureUpdate,
    async ({ signature, publicKey }) => {
      submitting = true;
      try {
        const p = await submitActs.submitGovernanceSignature({ opId: input.opId, signature, publicKey });
        signedKeys.add(publicKey.toLowerCase());
        stage(p.status);
        return p;
      } catch (err) {
        const type = failureType(err);
        if (type === 'SigningDataStale') {
          // before GOVERNANCE_STALE_STAYS_OPEN the activity failed the operation; now it stays open for fresh signing data
          if (!patched(GOVERNANCE_STALE_STAYS_OPEN)) stage('failed');
          const inner = err instanceof ActivityFailure && err.cause ? err.cause : (err as Error);
          const details = inner instanceof ApplicationFailure ? inner.details : undefined;
          throw ApplicationFailure.create({ type, message: inner.message, nonRetryable: true, details: details ? [...details] : undefined });
        }
        if (type === 'SignatureRefused' || type === 'AlreadySigned' || type === 'NotFound') {
          const msg = err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
          throw ApplicationFailure.nonRetryable(msg, type);
        }
        throw ApplicationFailure.nonRetryable('the ledger could not be reached; the operation is unchanged, retry the same signature', 'LedgerUnavailable');
      } finally {
        submitting = false;
      }
    },
    {
      validator: ({ publicKey }) => {
        const pk = String(publicKey ?? '').toLowerCase();
        if (TERMINAL.includes(status)) throw ApplicationFailure.nonRetryable(`the operation is already ${status}`, 'Closed');
        if (closing) throw ApplicationFailure.nonRetryable('the operation is being closed: its signing window has ended', 'Closed');
        if (signedKeys.has(pk)) throw ApplicationFailure.nonRetryable('this key has already signed the operation', 'AlreadySigned');
        if (pk !== nominated) throw ApplicationFailure.nonRetryable('public_key: the signing data was prepared for another key', 'WrongKey');
        if (submitting) throw ApplicationFailure.nonRetryable('a signature for this operation is being submitted', 'InFlight');
        if (refreshing) throw ApplicationFailure.nonRetryable('fresh signing data is being prepared for this operation', 'InFlight');
      },
    },
  );
  setHandler(
    refreshGovernanceSigningDataUpdate,
    async () => {
      refreshing = true;
      try {
        return await submitActs.refreshGovernanceSigningData(input.opId);
      } catch (err) {
        const type = failureType(err);
        const msg = err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
        if (type === 'Closed' || type === 'SignatureRefused' || type === 'NotFound') throw ApplicationFailure.nonRetryable(msg, type);
        throw ApplicationFailure.nonRetryable('the ledger could not be reached; the operation is unchanged, retry', 'LedgerUnavailable');
      } finally {
        refreshing = false;
      }
    },
    {
      validator: () => {
        if (TERMINAL.includes(status)) throw ApplicationFailure.nonRetryable(`the operation is already ${status}`, 'Closed');
        if (closing) throw ApplicationFailure.nonRetryable('the operation is being closed: its signing window has ended', 'Closed');
        if (signedKeys.size > 0) throw ApplicationFailure.nonRetryable('the operation is signed; it takes no new signing data', 'Closed');
        if (submitting || refreshing) throw ApplicationFailure.nonRetryable('a signature or fresh signing data for this operation is in flight', 'InFlight');
      },
    },
  );

  if (signedKeys.size === 0) {
    const signed = await condition(() => signedKeys.size > 0 || TERMINAL.includes(status), (input.signingWindowSeconds ?? 7 * 24 * 3600) * 1000);
    if (!signed) {
      await condition(() => !submitting && !refreshing);
      if (signedKeys.size === 0) {
        closing = true;
        // (histories recorded before the activity answered have no result: expired, as they were)
        const seen = await acts.expireGovernanceOp(input.opId);
        if (!seen || seen.status === 'expired') {
          stage('expired');
          await notifyWebhookDispatcher();
          return { status };
        }
        // the ledger holds the transaction (a signature whose answer was lost): follow it as the ledger decides
        closing = false;
        if (seen.signedBy) signedKeys.add(seen.signedBy);
        if (seen.status !== status) stage(seen.status);
      }
    }
  }

  let delayMs = 250;
  for (let polls = 0; !TERMINAL.includes(status); polls++) {
    if (polls >= POLLS_BEFORE_CONTINUE) {
      await condition(() => !submitting);
      await continueAsNew<typeof governanceWorkflow>({ ...input, resume: { status, signedKeys: [...signedKeys] } });
    }
    changed = false;
    await condition(() => changed || TERMINAL.includes(status), delayMs);
    if (TERMINAL.includes(status)) break;
    try {
      const p = await acts.refreshGovernanceOp(input.opId);
      if (p.status !== status) stage(p.status);
    } catch {
      // the ledger refused the read (e.g. not found yet): look again on the next round; transient faults were retried
    }
    delayMs = changed ? 250 : Math.min(delayMs * 2, 5 * 60_000);
  }
  await condition(() => !submitting);
  await notifyWebhookDispatcher();
  return { status };
}
