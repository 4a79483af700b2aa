/**
 * The proof cycle's ledger side before the chains: the client's signature submitted with the prepared transaction,
 * the ledger transaction followed until it executes (co-signers may be outstanding), and the intent's terminal
 * failure before the cycle (expired unsigned, refused on the ledger).
 */
import { getIntent, markIntentFailed, markIntentSubmitted, recordedSubmissionOf } from '../../db/intents.js';
import {
  ledgerPollDelay,
  LedgerInputError,
  LedgerSubmitError,
  LedgerTransportError,
  signatureMessageId,
  staleSigningCause,
  verifyExternalSignature,
  waitSignatureExecuted,
} from '../../ledger/index.js';
import { sleep } from '../../net/sleep.js';
import { attemptDeadline, beat } from '../heartbeat.js';
import { recordSubmissionInInbox } from '../inbox.js';
import { cycleFailure, ledgerUnavailable, type CycleContext } from './context.js';
import { expireUnsigned } from './expiry.js';
import { staleSigningData, submittedProgress } from './signing-data.js';

/** How long a submission waits for the ledger to execute its signature (a devnet block is tens of ms, a node's ~1 s). */
const SIGNATURE_EXECUTION_WAIT_MS = 8_000;

/** A followed transaction is looked at every 50 ms for its first 2 s (a single signer's executes within a few blocks). */
const FOLLOW_FIRST_PAUSE_MS = 50;
const FOLLOW_QUICK_MS = 2_000;

export function signatureSteps(ctx: CycleContext) {
  const { db, ledger } = ctx;
  return {
    /**
     * The Update handler's step: rebuilds the prepared ledger transaction byte for byte (same timestamp and
     * signer version), attaches the client's signature and submits it. Idempotent: an intent already submitted
     * answers with its transaction. Transient ledger faults throw retryable errors (the workflow gives up after
     * a few and answers 502, the intent stays signing_required). Given the hash_to_sign the workflow holds and the
     * nominated key (older recorded runs pass neither), the signature is verified first, natively: InvalidSignature
     * before anything is read or sent.
     */
    async submitIntentSignature(i: {
      intentId: string;
      signature: string;
      publicKey?: string;
      hashToSign?: string;
    }): Promise<{ txId: string; txHash: string }> {
      if (i.hashToSign !== undefined && i.publicKey !== undefined) {
        const v = verifyExternalSignature({ hashToSign: i.hashToSign, signature: i.signature, publicKey: i.publicKey });
        if (!v.ok) throw cycleFailure('InvalidSignature', `signature: ${v.reason}`);
      }
      const deadline = attemptDeadline();
      const { row, body } = await ctx.preparedBody(i.intentId);
      const recorded = recordedSubmissionOf(row);
      if (recorded) return recorded;
      const p = row.prepared;
      const prepared = await ledger
        .prepareExternalSignature({
          principal: p.principal,
          body,
          // a token transfer is prepared without a memo (stored as '')
          txOptions: { memo: p.memo || undefined, expireAt: new Date(p.expireAt) },
          signerUrl: p.signerUrl,
          publicKey: p.publicKey,
          signerVersion: p.signerVersion,
          timestamp: p.timestamp,
        })
        .catch((e: unknown) => {
          if (e instanceof LedgerInputError) throw cycleFailure('SignatureRejected', `the signer is no longer valid: ${e.message}`);
          throw e;
        });
      if (prepared.hashToSign !== p.hashToSign || prepared.txHash !== p.txHash) {
        throw cycleFailure('SigningDataChanged', 'the prepared transaction could not be rebuilt identically; prepare a new intent');
      }
      const submitted = await ledger.submitExternalSignature(prepared, i.signature).catch(async (e: unknown) => {
        if (e instanceof LedgerInputError || e instanceof LedgerSubmitError) {
          // An earlier attempt's submission may have reached the ledger and its answer been lost (a crash, a
          // timeout). On a page that needs more signatures the transaction then waits there with this key's
          // signature, and the ledger refuses the same signature again (its timestamp is used): that is submitted.
          const earlier = await ctx.heldByLedger(p).catch(() => undefined);
          if (earlier) return earlier;
          // prepared before the key's latest signature, or before its page changed: fresh signing data is the fix
          const cause = staleSigningCause(e);
          if (cause) throw staleSigningData(cause, e.message);
          throw cycleFailure('SignatureRejected', `the ledger refused the signature: ${e.message}`);
        }
        throw e instanceof LedgerTransportError ? ledgerUnavailable(e) : e;
      });
      // The ledger's answer to a submission is its first check only: a signature refused when its block executes
      // it (stale: a signature of the same key prepared later executed first) leaves the transaction pending
      // without it for good. The client hears that now, while it can still sign fresh signing data.
      const sigId = 'submissions' in submitted ? signatureMessageId(submitted, p.txHash) : undefined;
      if (sigId) {
        const waitUntil = Math.min(Date.now() + SIGNATURE_EXECUTION_WAIT_MS, (deadline ?? Number.POSITIVE_INFINITY) - 2_000);
        const executed = await waitSignatureExecuted(ledger, sigId, waitUntil);
        if (executed && !executed.ok) {
          const cause = staleSigningCause(executed.error);
          if (cause) throw staleSigningData(cause, executed.error.message);
          throw cycleFailure('SignatureRejected', `the ledger refused the signature: ${executed.error.message}`);
        }
      }
      // An attempt past its timeout has been given up on (the client may have heard 502 and the intent must stay
      // open for the same signature): it does not mark the intent. A retry finds the transaction on the ledger.
      if (deadline !== undefined && Date.now() > deadline)
        throw new Error(`the submission attempt outlived its timeout; ${submitted.txId} is left for a retry to record`);
      const signingProgress = await submittedProgress(ledger, { txId: submitted.txId, publicKey: p.publicKey, signerUrl: p.signerUrl });
      await markIntentSubmitted(db, i.intentId, { txId: submitted.txId, txHash: submitted.txHash, signingProgress });
      // co-signers find it in their inbox now, not at the next scan
      await recordSubmissionInInbox(db, ledger, { txId: submitted.txId, signedBy: p.publicKey });
      return { txId: submitted.txId, txHash: submitted.txHash };
    },

    /** The ledger transaction the intent's row records as submitted, if any (a submission its workflow never heard of). */
    async recordedSubmission(i: { intentId: string }): Promise<{ txId: string; txHash: string } | undefined> {
      return recordedSubmissionOf(await getIntent(db, i.intentId));
    },

    /**
     * Follows the intent's ledger transaction for up to `waitMs` (0: one look): delivered (executed with its page's
     * threshold met), still pending (co-signatures outstanding), or failed (rejected, expired, out of credits...). It
     * is looked at every 50 ms for 2 s after its submission, then at the pace of any ledger wait (ledgerPollDelay, up
     * to every 500 ms). A transaction still pending after the first follow waits for co-signers, possibly for days:
     * the workflow then looks once at a time between its own timers.
     */
    async followIntentTransaction(i: {
      intentId: string;
      waitMs: number;
    }): Promise<{ state: 'delivered' | 'pending' | 'failed'; reason?: string; signatures: number }> {
      const row = await getIntent(db, i.intentId);
      if (!row) throw cycleFailure('IntentNotFound', `intent ${i.intentId} not found`);
      const txId = row.ledgerTxId;
      if (!txId) throw cycleFailure('IntentNotSubmitted', `intent ${i.intentId} was never submitted`);
      const deadline = Date.now() + i.waitMs;
      const submittedAt = row.submittedAt?.getTime() ?? Date.now();
      for (let slowLooks = 0; ; ) {
        const st = await ledger.getTransaction(txId).catch((e) => {
          if (e instanceof LedgerTransportError || (e as { code?: string }).code === 'notFound') return undefined;
          throw e;
        });
        beat();
        if (st?.delivered) return { state: 'delivered', signatures: st.signatures.length };
        if (st?.failed)
          return { state: 'failed', reason: `ledger transaction ${st.status}${st.error ? `: ${st.error.message}` : ''}`, signatures: st.signatures.length };
        const left = deadline - Date.now();
        if (left <= 0) return { state: 'pending', signatures: st?.signatures.length ?? 0 };
        const quick = Date.now() - submittedAt < FOLLOW_QUICK_MS;
        await sleep(Math.min(quick ? FOLLOW_FIRST_PAUSE_MS : ledgerPollDelay(FOLLOW_FIRST_PAUSE_MS, slowLooks++), left));
      }
    },

    /**
     * Terminal failure before the cycle (expired unsigned, refused on the ledger). Expiry first makes sure the
     * signature never reached the ledger: an attempt whose answer was lost (the client heard 502) may have
     * submitted it, or still be running past its timeout and mark it submitted later. Then it is submitted, not
     * expired, and the answer says so (the workflow goes on with the cycle).
     */
    async failIntent(i: {
      intentId: string;
      status: 'failed' | 'expired';
      error: string;
    }): Promise<{ submitted?: { txId: string; txHash: string } } | undefined> {
      const row = await getIntent(db, i.intentId);
      if (i.status === 'expired' && row) {
        const held = await expireUnsigned(ctx, row, i.error);
        return held ? { submitted: held } : undefined;
      }
      await markIntentFailed(db, i.intentId, { status: i.status, stage: row?.stage ?? 'signing_required', error: i.error });
    },
  };
}
