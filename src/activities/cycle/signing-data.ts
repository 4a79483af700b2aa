/**
 * Fresh signing data for an unsigned intent: its ledger transaction prepared again for the same seat (same body,
 * memo and expiry; a new signature timestamp and the key page's current version, so a new hash to sign), stored
 * in place of the old one. The intent keeps its id; the workflow verifies the next signature against the new hash.
 * And the co-signing progress of a transaction just submitted, carried by transaction.submitted.
 */
import { ApplicationFailure } from '@temporalio/common';
import { replaceIntentSigningData } from '../../db/signing-data.js';
import { storedSigning } from '../../db/intents.js';
import type { SigningData } from '../../db/schema.js';
import { LedgerInputError, signingProgress, waitForSignature, type LedgerClient, type StaleSigningCause } from '../../ledger/index.js';
import { withTimeout } from '../../net/timeout.js';
import { cycleFailure, type CycleContext } from './context.js';

/** What the client signs next, as stored on the intent (the fields of prepare's signing_data). */
export interface RefreshedSigningData {
  hashToSign: string;
  signingData: SigningData;
}

/** The progress object of the intent's events: the fields GET /v1/transaction/{id}'s signing_progress gives. */
export interface SubmittedProgress {
  collected_signatures: number;
  required_signatures: number;
  awaiting_authorities: string[];
  is_ready: boolean;
}

/** A just-submitted transaction's progress holds its own signature within this, or is left out of the event. */
const PROGRESS_WAIT_MS = 3000;

/** The co-signing progress of a transaction the intent's key just signed; null when the ledger does not tell in time. */
export async function submittedProgress(ledger: LedgerClient, p: { txId: string; publicKey: string; signerUrl: string }): Promise<SubmittedProgress | null> {
  try {
    return await withTimeout(
      (async () => {
        const st = await waitForSignature(ledger, p.txId, p.publicKey, PROGRESS_WAIT_MS);
        const g = await signingProgress(ledger, st, p.signerUrl);
        return { collected_signatures: g.collected, required_signatures: g.threshold, awaiting_authorities: g.awaitingAuthorities, is_ready: g.isReady };
      })(),
      PROGRESS_WAIT_MS + 1000,
      'ledger',
    );
  } catch {
    return null;
  }
}

/** The Update's 409 SIGNING_DATA_STALE: the ledger refused the signature for `cause`; the intent stays open. */
export function staleSigningData(cause: StaleSigningCause, ledgerMessage: string): ApplicationFailure {
  const why =
    cause === 'timestamp' ? "the key has signed something prepared later (the ledger's timestamps only grow)" : 'the key page changed since it was prepared';
  return ApplicationFailure.create({
    type: 'SigningDataStale',
    message: `the signing data is stale: ${why} (${ledgerMessage}); fetch fresh signing data (POST /v1/transaction/{id}/signing-data) and sign again`,
    nonRetryable: true,
    details: [{ cause }],
  });
}

/** The intent takes no new signing data (signed or ended): the Update answers 409. */
function closed(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, 'IntentClosed');
}

export function signingDataSteps(ctx: CycleContext) {
  const { db, ledger } = ctx;
  return {
    /**
     * The Update `refreshSigningData`'s step: prepare the intent's transaction again and store it. IntentClosed when
     * the intent took a signature or ended meanwhile; a ledger that cannot be reached is thrown as is (retried).
     */
    async refreshIntentSigningData(i: { intentId: string }): Promise<RefreshedSigningData> {
      const { row, body } = await ctx.preparedBody(i.intentId);
      if (row.status !== 'signing_required' || row.ledgerTxId) throw closed(`intent is ${row.status}; it takes no new signing data`);
      const p = row.prepared;
      const fresh = await ledger
        .prepareExternalSignature({
          principal: p.principal,
          body,
          txOptions: { memo: p.memo || undefined, expireAt: new Date(p.expireAt) },
          signerUrl: p.signerUrl,
          publicKey: p.publicKey,
        })
        .catch((e: unknown) => {
          if (e instanceof LedgerInputError) throw cycleFailure('SignatureRejected', `the signer is no longer valid: ${e.message}`);
          throw e;
        });
      const { prepared, signingData } = storedSigning(row.id, p, fresh);
      const stored = await replaceIntentSigningData(db, row.id, { prepared, signingData });
      if (!stored) throw closed('intent took a signature or ended meanwhile; it takes no new signing data');
      return { hashToSign: fresh.hashToSign, signingData };
    },
  };
}
