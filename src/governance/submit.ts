/**
 * Submitting a stored prepared signature (governance initiator or co-signer) and reading where the transaction
 * stands afterwards, from the ledger itself. One path for POST /v1/governance/{id}/signature (through its
 * activity) and POST /v1/sign/{id}/signature.
 */
import {
  revivePreparedSignature,
  signingProgress,
  waitForSignature,
  type LedgerClient,
  type SigningProgress,
  type SubmitResult,
  type StoredPreparedSignature,
  type TxStatus,
} from '../ledger/index.js';

export interface SubmissionOutcome {
  txId: string;
  txHash: string;
  /** the ledger's status label after the signature landed: pending, delivered, rejected, expired, ... */
  ledgerStatus: string;
  delivered: boolean;
  failed: boolean;
  error?: string;
  progress: SigningProgress;
}

export function outcomeOf(st: TxStatus, progress: SigningProgress): SubmissionOutcome {
  return {
    txId: st.txId,
    txHash: st.txHash,
    ledgerStatus: st.status,
    delivered: st.delivered,
    failed: st.failed,
    ...(st.error ? { error: st.error.message || st.status } : st.failed ? { error: st.status } : {}),
    progress,
  };
}

/**
 * The threshold an operation's signatures had to meet: the signing page's live threshold while the transaction is
 * pending (a change of the page voids the votes collected before it), and once it executed the threshold recorded
 * when the operation was prepared (`signerThreshold`): the operation may have changed the page itself, e.g. raised
 * the threshold its own signatures met. Operations prepared before it was recorded fall back to the live page.
 */
export function requiredSignatures(op: { signerThreshold: number | null }, delivered: boolean, live: number): number {
  return delivered && op.signerThreshold !== null ? op.signerThreshold : live;
}

/** Submit `signature` over the stored prepared signature (verified first: LedgerInputError when it does not verify). */
export async function submitPrepared(ledger: LedgerClient, stored: StoredPreparedSignature, signature: string): Promise<SubmitResult> {
  return ledger.submitExternalSignature(revivePreparedSignature(stored), signature);
}

/** After a submission: wait until the ledger has recorded the signature, then read the progress as seen from `page`. */
export async function progressAfterSubmission(
  ledger: LedgerClient,
  stored: Pick<StoredPreparedSignature, 'txId' | 'publicKey'>,
  page: string,
): Promise<SubmissionOutcome> {
  const st = await waitForSignature(ledger, stored.txId, stored.publicKey);
  return outcomeOf(st, await signingProgress(ledger, st, page));
}

/** Both steps: submit, then read where the transaction stands. */
export async function submitPreparedSignature(
  ledger: LedgerClient,
  stored: StoredPreparedSignature,
  signature: string,
  page: string,
): Promise<SubmissionOutcome> {
  await submitPrepared(ledger, stored, signature);
  return progressAfterSubmission(ledger, stored, page);
}
