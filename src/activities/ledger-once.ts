/**
 * Exactly-once submission of the provisioning steps' ledger transactions. A step's transaction is built and signed,
 * recorded in the identity row (txId and the signed envelope) and only then submitted. A retry that finds a record
 * follows that transaction (resubmitting the identical envelope if the node never saw it) instead of signing a new
 * one. Signatures of one key reach the node in timestamp order within a process (one signing at a time per
 * signer); from two worker processes they may not, and one the node refuses when its block executes it is signed
 * anew (its transaction could never execute). A failed
 * transaction becomes a classified error: out of credits or funds is permanent, anything else is retried.
 */
import { ApplicationFailure } from '@temporalio/common';
import { core, messaging } from 'accumulate.js';
import type { Db } from '../db/client.js';
import { clearLedgerTxRecord, getLedgerTxRecord, putLedgerTxRecord } from '../db/identities.js';
import {
  LedgerError,
  LedgerSubmitError,
  attachSignature,
  isNotFound,
  keyFromSeed,
  normUrl,
  signatureExecuted,
  signatureMessageId,
  signHash,
  staleSigningCause,
  type HeldKey,
  type LedgerClient,
  type TxStatus,
} from '../ledger/index.js';
import { sleep } from '../net/sleep.js';
import { keyedSerial } from '../net/serial.js';
import { beat } from './heartbeat.js';

/** Who signs a step: the sponsor's lite identity, or page 1 of the identity (with the sponsor's key on it). */
export type StepSigner = 'sponsor' | 'page';

export interface OnceSubmitterDeps {
  db: Db;
  ledger: LedgerClient;
  /** how long to wait for one transaction to execute, default 60 s */
  txTimeoutMs?: number;
  /** poll interval while waiting, default 25 ms */
  pollMs?: number;
}

/** A transaction's signature refused when its block executed it: the transaction never executes. */
type RefusedSignature = { status: string; error: { message: string }; delivered: false };

/** Pending without a signature, and its signature now refused as stale: refused when its block executed it. */
const orphaned = (now: TxStatus, refusal: unknown) => !now.delivered && !now.failed && now.signatures.length === 0 && !!staleSigningCause(refusal);

const jsonSafe = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)));

export function createOnceSubmitter(deps: OnceSubmitterDeps) {
  const { db, ledger } = deps;
  const txTimeoutMs = deps.txTimeoutMs ?? 60_000;
  const pollMs = deps.pollMs ?? 25;
  // quick first polls (a block is tens of ms on a devnet), then gentler ones so many waiting identities do not
  // flood the node: pollMs ×1 for 4 polls, ×2 for 4, ... up to 250 ms
  const backoff = (n: number) => Math.min(250, pollMs * 2 ** Math.floor(n / 4));

  // Signatures of one key must reach the node in timestamp order (a later timestamp executed first makes the
  // earlier one stale), so sign + record + submit run one at a time per signer.
  const oneAtATime = keyedSerial<string>();
  function withSignerLock<T>(signer: string, fn: () => Promise<T>): Promise<T> {
    // keep heartbeating while queued behind other identities' signatures
    const ticker = setInterval(() => beat(), 1000);
    return oneAtATime(normUrl(signer), () => {
      clearInterval(ticker);
      return fn();
    });
  }

  /**
   * The transaction once final; with `sigId` (its signature message) also the signature's refusal when its block
   * executed it: signers of one key in two worker processes can reach the node out of timestamp order within one
   * block, and a transaction whose only signature was refused so never executes.
   */
  async function waitFinal(txId: string, timeoutMs = txTimeoutMs, sigId?: string): Promise<TxStatus | RefusedSignature | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (let n = 0; ; n++) {
      try {
        const st = await ledger.getTransaction(txId);
        if (st.delivered || st.failed) return st;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      const sig = sigId ? await signatureExecuted(ledger, sigId) : undefined;
      if (sig && !sig.ok) return { status: sig.error.code, error: { message: sig.error.message }, delivered: false };
      if (Date.now() > deadline) return undefined;
      beat();
      await sleep(backoff(n));
    }
  }

  async function waitUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = txTimeoutMs): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (let n = 0; ; n++) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new LedgerError(`timed out waiting for ${what}`, 'timeout');
      beat();
      await sleep(backoff(n));
    }
  }

  function failure(step: string, st: TxStatus | { status: string; error?: { message: string } }, signer: StepSigner): Error {
    const msg = st.error?.message ? `${st.status}: ${st.error.message}` : st.status;
    switch (st.status) {
      case 'insufficientCredits':
        return signer === 'sponsor'
          ? ApplicationFailure.nonRetryable(`the sponsor is out of credits (${step}): ${msg}`, 'SponsorOutOfCredits')
          : ApplicationFailure.nonRetryable(`key page has too few credits for ${step}: ${msg}`, 'PageOutOfCredits');
      case 'insufficientBalance':
        return ApplicationFailure.nonRetryable(`the sponsor's ACME balance cannot pay for ${step}: ${msg}`, 'SponsorOutOfFunds');
      default:
        // badTimestamp, badSignerVersion, conflicts with a concurrent writer...: the activity re-reads and retries
        return new LedgerError(`${step} failed on the ledger: ${msg}`, st.status);
    }
  }

  /**
   * Submit `body` as `principal` signed by `key`, exactly once per (identity, step). Resolves with the delivered
   * transaction; throws a classified error when it failed.
   */
  async function submitOnce(
    identityId: string,
    step: string,
    principal: string,
    body: core.TransactionBody,
    key: HeldKey,
    signer: StepSigner,
  ): Promise<TxStatus> {
    const rec = await getLedgerTxRecord(db, identityId, step);
    if (rec) {
      let st = await waitFinal(rec.txId, 3_000);
      if (!st) {
        // never seen (crash between record and submit) or still queued: resubmit the identical envelope
        let sigId: string | undefined;
        try {
          sigId = signatureMessageId(await ledger.submit(rec.envelope as messaging.EnvelopeArgs), rec.txId);
        } catch (e) {
          if (!(e instanceof LedgerSubmitError)) throw e;
          // refused: perhaps because the node has just taken the first submission (a duplicate), so look again
          // before giving the transaction up; a retry then follows it
          const now = await ledger.getTransaction(rec.txId).catch((err: unknown) => {
            if (isNotFound(err)) return undefined;
            throw err;
          });
          // unless another of the key's signatures, prepared later, executed first and left it without its own
          if (now && !orphaned(now, e))
            throw new LedgerError(`${step}: transaction ${rec.txId} is known to the ledger (${now.status}); following it`, 'pending');
          // refused and unknown (e.g. the key has signed something newer since): it can never execute, so start over
          await clearLedgerTxRecord(db, identityId, step);
          throw new LedgerError(`${step}: recorded transaction refused on resubmission (${e.code}); signing a new one`, e.code);
        }
        st = await waitFinal(rec.txId, txTimeoutMs, sigId);
        if (!st) throw new LedgerError(`${step}: transaction ${rec.txId} did not execute in time`, 'timeout');
      }
      if (st.delivered) return st;
      await clearLedgerTxRecord(db, identityId, step);
      throw failure(step, st, signer);
    }

    const held = keyFromSeed(key.privateKey);
    const { txId, sigId } = await withSignerLock(key.signerUrl, async () => {
      const prepared = await ledger.prepareExternalSignature({ principal, body, signerUrl: key.signerUrl, publicKey: held.address.publicKey });
      const sig = attachSignature(prepared.metadata, signHash(held, Buffer.from(prepared.hashToSign, 'hex')), Buffer.from(prepared.txHash, 'hex'));
      const envelope = jsonSafe(
        new messaging.Envelope({ transaction: [new core.Transaction(prepared.transaction!.asObject())], signatures: [sig] }).asObject(),
      );
      await putLedgerTxRecord(db, identityId, step, { txId: prepared.txId, envelope, submittedAt: new Date().toISOString() });
      try {
        const r = await ledger.submit(envelope as messaging.EnvelopeArgs);
        return { txId: prepared.txId, sigId: signatureMessageId(r, prepared.txHash) };
      } catch (e) {
        if (e instanceof LedgerSubmitError) {
          await clearLedgerTxRecord(db, identityId, step);
          throw failure(step, { status: e.code, error: { message: e.message } }, signer);
        }
        throw e; // transport: the record stays; the retry follows it
      }
    });
    const st = await waitFinal(txId, txTimeoutMs, sigId);
    if (!st) throw new LedgerError(`${step}: transaction ${txId} did not execute in time`, 'timeout');
    if (st.delivered) return st;
    await clearLedgerTxRecord(db, identityId, step);
    throw failure(step, st, signer);
  }

  return { submitOnce, waitUntil };
}
