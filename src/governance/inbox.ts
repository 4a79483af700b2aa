/**
 * The pending inbox's actions, computed from the ledger: which identities (of every organization) a pending
 * transaction involves, and one identity's action on it (its progress as seen from the identity's key page). One
 * code path for the pending-discovery scan (transactions submitted elsewhere), the transactions the gateway submits
 * itself (written at once, `recordInInbox`) and the live read of GET /v1/pending.
 */
import type { Db } from '../db/client.js';
import type { PendingActionInput } from '../db/governance.js';
import { upsertPendingAction } from '../db/governance.js';
import type { IdentityRow } from '../db/identities.js';
import { closePendingTx, identitiesInvolving } from '../db/pending-inbox.js';
import {
  countsOnPending,
  delegateBooks,
  isNotFound,
  normUrl,
  parentUrl,
  requiredAuthorities,
  signingProgress,
  waitForSignature,
  type LedgerClient,
  type SignatureInfo,
  type TxStatus,
} from '../ledger/index.js';
import { withTimeout } from '../net/timeout.js';

/** Ledger transaction types shown in the governance category; everything else is `transactions`. */
export const GOVERNANCE_TX_TYPES = new Set([
  'createIdentity',
  'createKeyPage',
  'createKeyBook',
  'updateKeyPage',
  'updateAccountAuth',
  'updateKey',
  'lockAccount',
]);

/** What an action needs of its identity. */
export type InboxIdentity = Pick<IdentityRow, 'id' | 'orgId' | 'adiUrl' | 'bookUrl' | 'keyPageUrl' | 'publicKey'>;

/** The authorities whose approval a transaction needs, and every book delegated on one of their pages. */
export interface TxAuthorities {
  required: string[];
  delegates: Map<string, string>;
}

/** The memo of a ledger transaction's header, when it has a non-empty one. */
export function memoOf(t: Pick<TxStatus, 'transaction'>): string | null {
  const memo: unknown = t.transaction?.header?.memo;
  return typeof memo === 'string' && memo !== '' ? memo : null;
}

export async function authoritiesOf(ledger: LedgerClient, tx: TxStatus): Promise<TxAuthorities> {
  const required = await requiredAuthorities(ledger, tx);
  return { required, delegates: await delegateBooks(ledger, required) };
}

/** The identity's accounts hold `tx`, or its book is a required authority or a delegate of one. */
export function involves(i: Pick<IdentityRow, 'adiUrl' | 'bookUrl'>, tx: Pick<TxStatus, 'principal'>, a: TxAuthorities): boolean {
  const adi = normUrl(i.adiUrl);
  const principal = normUrl(tx.principal);
  if (principal === adi || principal.startsWith(`${adi}/`)) return true;
  const book = normUrl(i.bookUrl);
  return a.required.includes(book) || a.delegates.has(book);
}

/** The action of identity `i` on the pending transaction `t`, with the live progress from the identity's key page. */
export async function actionOf(ledger: LedgerClient, i: InboxIdentity, t: TxStatus): Promise<PendingActionInput> {
  const progress = await signingProgress(ledger, t, i.keyPageUrl);
  const userHasSigned =
    (i.publicKey !== null && progress.signers.some((s) => s.publicKey === i.publicKey!.toLowerCase())) ||
    progress.authorityVotes.some((v) => v.authority === normUrl(i.bookUrl));
  const expire = t.transaction?.header?.expire?.atTime;
  return {
    orgId: i.orgId,
    identityId: i.id,
    txHash: t.txHash,
    txId: t.txId,
    principal: normUrl(t.principal),
    category: GOVERNANCE_TX_TYPES.has(t.type) ? 'governance' : 'transactions',
    type: t.type,
    memo: memoOf(t),
    status: userHasSigned ? 'awaiting_others' : 'eligible',
    collectedSignatures: progress.collected,
    threshold: progress.threshold,
    userHasSigned,
    awaitingAuthorities: progress.awaitingAuthorities,
    isReady: progress.isReady,
    expiresAt: expire ? new Date(expire) : null,
  };
}

/** How a finished transaction leaves the inbox; undefined while it is pending (or its status says nothing final). */
export function finalStatusOf(st: Pick<TxStatus, 'pending' | 'delivered' | 'failed' | 'status'>): 'executed' | 'rejected' | 'expired' | undefined {
  if (st.pending) return undefined;
  return st.delivered ? 'executed' : st.status === 'expired' ? 'expired' : st.failed ? 'rejected' : undefined;
}

/** The ADI URLs that may hold an account: the principal and each of its parents. */
function adiCandidates(principal: string): string[] {
  const out: string[] = [];
  for (let u: string | undefined = normUrl(principal); u; u = parentUrl(u)) out.push(u);
  return out;
}

export interface InboxRecord {
  /** actions that are new (each emitted inbox.action_pending in its own write) */
  created: number;
  /** actions refreshed */
  updated: number;
  /** actions closed because the transaction is final */
  closed: number;
  /** why the inbox could not be written (the scan catches up); the submission itself is unaffected */
  error?: string;
}

/** How long a transaction just submitted may take to show the signature on the ledger (its next block). */
const RECORDED_WAIT_MS = 3000;
/** The whole write is given up after this (the submission it follows has its own time limit); the scan catches up. */
const RECORD_TIMEOUT_MS = 6000;

/**
 * Write the inbox for a transaction the gateway has just submitted a signature to (an intent's, a governance
 * operation's, a co-signature): when it still waits for signatures, one action per identity it involves, in every
 * organization (a new one emits inbox.action_pending in the same write); when it is final, its open actions are
 * closed everywhere. Never throws, and answers within RECORD_TIMEOUT_MS: an inbox that could not be written is left
 * to the scan.
 */
export async function recordInInbox(db: Db, ledger: LedgerClient, s: { txId: string; signedBy?: string }): Promise<InboxRecord> {
  const out: InboxRecord = { created: 0, updated: 0, closed: 0 };
  try {
    await withTimeout(write(db, ledger, s, out), RECORD_TIMEOUT_MS, 'the ledger');
  } catch (e) {
    out.error = isNotFound(e) ? `the ledger does not know ${s.txId} yet` : (e as Error).message;
  }
  return out;
}

/** recordInInbox's work, counting into `out`. */
async function write(db: Db, ledger: LedgerClient, s: { txId: string; signedBy?: string }, out: InboxRecord): Promise<void> {
  const st = s.signedBy ? await waitForSignature(ledger, s.txId, s.signedBy, RECORDED_WAIT_MS) : await ledger.getTransaction(s.txId);
  const final = finalStatusOf(st);
  if (final) {
    out.closed = await closePendingTx(db, st.txHash, final);
    return;
  }
  if (!st.pending) return;
  const a = await authoritiesOf(ledger, st);
  const candidates = await identitiesInvolving(db, { adiUrls: adiCandidates(st.principal), bookUrls: [...a.required, ...a.delegates.keys()] });
  const involved = candidates.filter((i) => involves(i, st, a));
  const actions = await Promise.all(involved.map((i) => actionOf(ledger, i, st)));
  // a transaction every authority has approved executes in the ledger's next step: nobody's inbox needs it
  if (actions.length && actions.every((x) => x.isReady)) return;
  for (const action of actions) {
    if (await upsertPendingAction(db, action)) out.created++;
    else out.updated++;
  }
}

/**
 * How many signatures the transaction has collected, whichever page each came from (a delegate's signature through
 * the delegating page counts as the page's own): each key's latest approval per signer and delegation path, counted
 * while it still counts on a pending transaction (at its signer's current version, or its authority has voted).
 */
export async function transactionSignatureCount(ledger: LedgerClient, st: TxStatus): Promise<number> {
  const latest = new Map<string, SignatureInfo>();
  for (const s of st.signatures) {
    if (!s.publicKey) continue;
    latest.set(`${String(s.publicKey).toLowerCase()}|${normUrl(s.signer)}|${s.delegators.map((d) => normUrl(d)).join(',')}`, s);
  }
  const approvals = [...latest.values()].filter((s) => s.vote === 'accept');
  if (!st.pending) return approvals.length;
  const counts = await Promise.all(approvals.map((s) => countsOnPending(ledger, st, s)));
  return counts.filter(Boolean).length;
}
