/**
 * Waiting for a ledger transaction: polls it until it is final (delivered or failed) or, on request, recorded as
 * pending; quick polls first (a devnet block is tens of ms), then gentler ones.
 */
import { sleep } from '../net/sleep.js';
import { LedgerError, LedgerTxFailedError, isNotFound } from './errors.js';
import { signatureExecuted } from './signature-outcome.js';
import type { LedgerClient, TxStatus } from './types.js';

const FAST_POLLS = 4;

/**
 * Pause before poll n+1 of a wait on the ledger: `pollMs` for the first polls (a devnet block is tens of ms, and most
 * waits end within a few blocks), then ×1.5 each poll up to 500 ms (or `pollMs`, if larger), so a long wait on a
 * real node costs a few requests a second rather than forty.
 */
export function ledgerPollDelay(pollMs: number, n: number): number {
  return Math.min(Math.max(pollMs, 500), pollMs * 1.5 ** Math.max(0, n + 1 - FAST_POLLS));
}

export function ledgerWaiting(getTransaction: LedgerClient['getTransaction'], pollMs: number): Pick<LedgerClient, 'waitForTransaction'> {
  async function waitForTransaction(
    txId: string,
    o: { timeoutMs?: number; until?: 'final' | 'recorded'; throwOnFailure?: boolean; waitProduced?: boolean; signature?: string } = {},
  ): Promise<TxStatus> {
    return waitUntilDeadline(txId, Date.now() + (o.timeoutMs ?? 30_000), o);
  }

  async function waitUntilDeadline(
    txId: string,
    deadline: number,
    o: { until?: 'final' | 'recorded'; throwOnFailure?: boolean; waitProduced?: boolean; signature?: string },
  ): Promise<TxStatus> {
    const until = o.until ?? 'final';
    for (let n = 0; ; n++) {
      try {
        const st = await getTransaction(txId);
        if (st.delivered || st.failed || (until === 'recorded' && st.pending)) {
          if (st.failed && o.throwOnFailure)
            throw new LedgerTxFailedError(`transaction ${st.txId} ${st.status}: ${st.error?.message ?? ''}`, st.status, st.txId);
          if (o.waitProduced && st.delivered) {
            for (const p of st.produced) {
              // within the caller's deadline: the deposits are part of what it waits for
              await waitUntilDeadline(p, deadline, { throwOnFailure: o.throwOnFailure });
            }
          }
          return st;
        }
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      if (o.signature) {
        const sig = await signatureExecuted({ getTransaction }, o.signature);
        if (sig && !sig.ok) throw new LedgerTxFailedError(`transaction ${txId}: its signature was refused: ${sig.error.message}`, sig.error.code, txId);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new LedgerError(`timed out waiting for ${txId}`, 'timeout');
      await sleep(Math.min(ledgerPollDelay(pollMs, n), left));
    }
  }

  return { waitForTransaction };
}
