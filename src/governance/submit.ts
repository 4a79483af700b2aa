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
 * Submit `signature` over the stored prepared signature (verified against its public key first: LedgerInputError
 * when it does not verify), wait until the ledger has recorded it, and read the progress as seen from `page`.
 */
export async function submitPreparedSignature(ledger: LedgerClient, stored: StoredPreparedSignature, signature: string, page: string): Promise<SubmissionOutcome> {
  const prepared = revivePreparedSignature(stored);
  const r = await ledger.submitExternalSignature(prepared, signature);
  const st = await waitForSignature(ledger, r.txId, prepared.publicKey);
  return outcomeOf(st, await signingProgress(ledger, st, page));
}
