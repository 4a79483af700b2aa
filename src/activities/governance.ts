/**
 * Activities of the governance workflow (`governance-<id>`):
 *   submitGovernanceSignature  submit a signature over the operation's prepared transaction, then read its progress
 *   refreshGovernanceOp        read the transaction's state from the ledger; record executed / rejected / expired
 * The ledger decides: an operation is executed only when the ledger executed it.
 * Transient ledger faults are thrown as is (retried); refusals are non-retryable ApplicationFailures:
 * SignatureRefused (bad signature, key not on the page, ...), AlreadySigned (the ledger reports a conflict).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../db/client.js';
import { finishGovernanceOp, getGovernanceOp, markGovernanceSigned, type GovernanceOpRow } from '../db/governance.js';
import { outcomeOf, submitPreparedSignature, type SubmissionOutcome } from '../governance/submit.js';
import { isTransientLedgerError, LedgerError, signingProgress, type LedgerClient, type StoredPreparedSignature } from '../ledger/index.js';

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
      requiredSignatures: out.progress.threshold,
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

  return {
    async submitGovernanceSignature(input: SubmitGovernanceSignatureInput): Promise<GovernanceProgress> {
      const op = await load(input.opId);
      let out: SubmissionOutcome;
      try {
        out = await submitPreparedSignature(ledger, op.prepared as unknown as StoredPreparedSignature, input.signature, op.signerUrl);
      } catch (e) {
        classify(e);
      }
      return apply(op, out, input.publicKey.toLowerCase());
    },

    /** An operation nobody signed within its window: expired (emits governance.rejected with the reason). */
    async expireGovernanceOp(opId: string): Promise<void> {
      await finishGovernanceOp(db, opId, 'expired', 'not signed within the signing window');
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
