/**
 * Activities of the governance workflow (`governance-<id>`):
 *   submitGovernanceSignature  submit a signature over the operation's prepared transaction, then read its progress
 *   refreshGovernanceOp        read the transaction's state from the ledger; record executed / rejected / expired
 * The ledger decides: an operation is executed only when the ledger executed it.
 * Transient ledger faults are thrown as is (retried); refusals are non-retryable ApplicationFailures:
 * SignatureRefused (bad signature, key not on the page, ...), AlreadySigned (the ledger reports a conflict),
 * SigningDataStale (the page's version changed or the key signed something prepared later: the operation stays
 * signing_required for fresh signing data, details[0].cause names which).
 * A submission whose answer was lost has reached the ledger all the same: before submitting, after a refusal and
 * before expiring, the ledger's copy of the transaction is read, and this key's signature there (or a final
 * transaction) is the answer.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../db/client.js';
import { finishGovernanceOp, getGovernanceOp, markGovernanceSigned, type GovernanceOpRow } from '../db/governance.js';
import { outcomeOf, requiredSignatures, submitPreparedSignature, type SubmissionOutcome } from '../governance/submit.js';
import {
  isTransientLedgerError,
  LedgerError,
  signatureOnLedger,
  signingProgress,
  staleSigningCause,
  type LedgerClient,
  type StoredPreparedSignature,
} from '../ledger/index.js';
import { recordSubmissionInInbox } from './inbox.js';

export interface GovernanceProgress {
  status: string;
  txHash: string;
  ledgerStatus: string;
  collectedSignatures: number;
  requiredSignatures: number;
  isReady: boolean;
  awaitingAuthorities: string[];
  error?: string;
}

export interface SubmitGovernanceSignatureInput {
  opId: string;
  signature: string;
  publicKey: string;
}

export function createGovernanceActivities(deps: { db: Db; ledger: LedgerClient }) {
  const { db, ledger } = deps;

  async function load(opId: string): Promise<GovernanceOpRow> {
    const op = await getGovernanceOp(db, opId);
    if (!op) throw ApplicationFailure.nonRetryable(`governance operation ${opId} not found`, 'NotFound');
    return op;
  }

  /** Record what the ledger says and answer the operation's status. */
  async function apply(op: GovernanceOpRow, out: SubmissionOutcome, signedBy?: string): Promise<GovernanceProgress> {
    let status = op.status;
    if (out.delivered) {
      await finishGovernanceOp(db, op.id, 'executed');
      status = 'executed';
    } else if (out.failed) {
      const terminal = out.ledgerStatus === 'expired' ? 'expired' : 'rejected';
      await finishGovernanceOp(db, op.id, terminal, out.error ?? out.ledgerStatus);
      status = terminal;
    }
    if (signedBy) {
      const next = status === 'executed' || status === 'rejected' || status === 'expired' ? status : 'pending_signatures';
      await markGovernanceSigned(db, op.id, signedBy, next);
      status = next;
    }
    return {
      status,
      txHash: op.txHash,
      ledgerStatus: out.ledgerStatus,
      collectedSignatures: out.progress.collected,
      requiredSignatures: requiredSignatures(op, out.delivered, out.progress.threshold),
      isReady: out.progress.isReady,
      awaitingAuthorities: out.progress.awaitingAuthorities,
      ...(out.error ? { error: out.error } : {}),
    };
  }

  function classify(e: unknown): never {
    if (isTransientLedgerError(e)) throw e;
    if (e instanceof LedgerError) throw ApplicationFailure.nonRetryable(e.message, e.code === 'conflict' ? 'AlreadySigned' : 'SignatureRefused');
    throw e;
  }

  /**
   * The operation's transaction as the ledger holds it, when the ledger has this key's signature on it or the
   * transaction is final: recorded (with `publicKey` as signer when its signature is there) and answered.
   * Undefined when the ledger does not know the transaction or it is pending without this key's signature.
   */
  async function recordedByLedger(op: GovernanceOpRow, publicKey: string): Promise<{ progress: GovernanceProgress; signed: boolean } | undefined> {
    const on = await signatureOnLedger(ledger, { txId: op.txId, txHash: op.txHash, publicKey });
    if (!on || (!on.signed && !on.tx.delivered && !on.tx.failed)) return undefined;
    const progress = await apply(op, outcomeOf(on.tx, await signingProgress(ledger, on.tx, op.signerUrl)), on.signed ? publicKey : undefined);
    // the submission whose answer was lost did not write the inbox
    await recordSubmissionInInbox(db, ledger, { txId: op.txId });
    return { progress, signed: on.signed };
  }

  return {
    async submitGovernanceSignature(input: SubmitGovernanceSignatureInput): Promise<GovernanceProgress> {
      const op = await load(input.opId);
      const publicKey = input.publicKey.toLowerCase();
      // an earlier attempt (this activity's, or the client's before a 502) may have landed with its answer lost
      const earlier = await recordedByLedger(op, publicKey);
      if (earlier) return earlier.progress;
      let out: SubmissionOutcome;
      try {
        out = await submitPreparedSignature(ledger, op.prepared as unknown as StoredPreparedSignature, input.signature, op.signerUrl);
      } catch (e) {
        if (isTransientLedgerError(e) || !(e instanceof LedgerError)) throw e;
        // refused: the ledger may hold this very signature (its timestamp is used, the transaction executed)
        const landed = await recordedByLedger(op, publicKey);
        if (landed) return landed.progress;
        const cause = staleSigningCause(e);
        if (cause) {
          // the operation stays open: fresh signing data for it (the Update refreshSigningData) is the fix
          throw ApplicationFailure.create({
            type: 'SigningDataStale',
            message: `signing data is stale (${e.message}); fetch fresh signing data (POST /v1/governance/{id}/signing-data) and sign again`,
            nonRetryable: true,
            details: [{ cause }],
          });
        }
        classify(e);
      }
      const progress = await apply(op, out, publicKey);
      // co-signers find it in their inbox now, not at the next scan
      await recordSubmissionInInbox(db, ledger, { txId: op.txId, signedBy: publicKey });
      return progress;
    },

    /**
     * An operation nobody signed within its window: expired (emits governance.rejected with the reason), unless the
     * ledger holds its transaction with the nominated key's signature (an answer lost) or final: then that is
     * recorded and answered, and the workflow follows it.
     */
    async expireGovernanceOp(opId: string): Promise<{ status: string; signedBy?: string }> {
      const op = await getGovernanceOp(db, opId);
      if (op) {
        const publicKey = (op.prepared as unknown as StoredPreparedSignature).publicKey.toLowerCase();
        const on = await recordedByLedger(op, publicKey);
        if (on) return { status: on.progress.status, ...(on.signed ? { signedBy: publicKey } : {}) };
      }
      await finishGovernanceOp(db, opId, 'expired', 'not signed within the signing window');
      return { status: 'expired' };
    },

    async refreshGovernanceOp(opId: string): Promise<GovernanceProgress> {
      const op = await load(opId);
      try {
        const st = await ledger.getTransaction(op.txId);
        return await apply(op, outcomeOf(st, await signingProgress(ledger, st, op.signerUrl)));
      } catch (e) {
        classify(e);
      }
    },
  };
}
export type GovernanceActivities = ReturnType<typeof createGovernanceActivities>;
