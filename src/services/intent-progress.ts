/**
 * Where the co-signing of a submitted intent stands, read live from the ledger for GET /v1/transaction/{id}: the
 * signatures its signing page collected, the page's threshold, the authorities (key books) whose approval the
 * ledger still awaits and the keys that signed. The state is the ledger's own (src/ledger/cosign.ts, the reader the
 * pending inbox and governance use); a ledger that does not answer in time leaves it unknown (null), never fails
 * the read.
 */
import type { IntentViewRow } from '../db/intents.js';
import { isNotFound, signingProgress, waitForSignature } from '../ledger/index.js';
import { publicKeyHashHex } from '../identity/keys.js';
import { redactUrls } from '../net/redact.js';
import { withTimeout } from '../net/timeout.js';
import { VOTE_WORD } from './cosign.js';
import type { Caller, ServiceDeps } from './deps.js';

/** The whole live read answers within this, or the progress is reported unknown. */
const READ_TIMEOUT_MS = 3000;
/** A transaction submitted a moment ago is in the ledger's next block: wait this long for it before calling it unknown. */
const NEW_TX_WAIT_MS = 1500;

export interface IntentSigningProgress {
  /** the key page whose signatures count (the intent's signing page) */
  key_page: string;
  /** distinct keys of the page whose approval counts on the transaction */
  collected_signatures: number;
  /** the page's accept threshold */
  required_signatures: number;
  /** key books whose approval the ledger still waits for (the signing page's own book until its threshold is met) */
  awaiting_authorities: string[];
  /** the page's keys that signed, with their votes */
  signers: { public_key: string; public_key_hash: string; vote: string }[];
  /** the ledger executed the transaction, or it has every approval it needs */
  is_ready: boolean;
  /** the ledger's status of the transaction: pending, delivered, or why it failed (rejected, expired, ...) */
  ledger_status: string;
}

export type SigningProgressReader = (caller: Caller, row: IntentViewRow) => Promise<IntentSigningProgress | null>;

/**
 * The live signing progress of an intent's ledger transaction: null before it was submitted (there is no ledger
 * transaction yet) and when the ledger does not answer within READ_TIMEOUT_MS or does not know the transaction.
 * Once the transaction left `pending` the counts are final (the signature set no longer changes): the reader keeps
 * them, so a client polling a running or finished intent costs no ledger reads after the first. What it keeps are
 * facts that never change, so API replicas need not share them; a bounded number, the oldest going first.
 * required_signatures of a settled transaction is the page's threshold at that first read.
 */
export function createSigningProgressReader(deps: ServiceDeps, keep = 10_000): SigningProgressReader {
  const settled = new Map<string, IntentSigningProgress>();
  return async (caller, row) => {
    const txId = row.ledgerTxId;
    if (!txId || !row.txHash) return null;
    const known = settled.get(txId);
    if (known) return known;
    try {
      const progress = await withTimeout(readProgress(deps, row, txId), READ_TIMEOUT_MS, 'ledger');
      if (progress.ledger_status !== 'pending') {
        if (settled.size >= keep) settled.delete(settled.keys().next().value as string);
        settled.set(txId, progress);
      }
      return progress;
    } catch (e) {
      if (!isNotFound(e))
        caller.log.warn('intent signing progress unreadable', { intent_id: row.id, err: redactUrls((e as Error).message, [deps.config.ledgerUrl]) });
      return null;
    }
  };
}

async function readProgress(deps: ServiceDeps, row: IntentViewRow, txId: string): Promise<IntentSigningProgress> {
  // returns at once when the transaction holds the intent's signature (always, but in the block after the submission)
  const st = await waitForSignature(deps.ledger, txId, row.signerPublicKey, NEW_TX_WAIT_MS);
  const p = await signingProgress(deps.ledger, st, row.signerKeyPage);
  return {
    key_page: row.signerKeyPage,
    collected_signatures: p.collected,
    required_signatures: p.threshold,
    awaiting_authorities: p.awaitingAuthorities,
    signers: p.signers.map((s) => ({ public_key: s.publicKey, public_key_hash: publicKeyHashHex(s.publicKey), vote: VOTE_WORD[s.vote] })),
    is_ready: p.isReady,
    ledger_status: st.status,
  };
}
