/**
 * Reading a pending transaction's multi-signature state from the ledger: which authorities
 * must approve, which of them have not voted yet, how many of a page's keys have signed, and the delegation path
 * a delegate book's key signs through. Used by governance, co-signing and pending discovery alike.
 */
import type { LedgerClient, SignatureInfo, TxStatus } from './types.js';
import { isNotFound } from './errors.js';
import type { Vote } from './signing.js';
import { keyPageUrl, normUrl, parentUrl } from './urls.js';
import { sleep } from '../net/sleep.js';

const norm = (u: string) => normUrl(u).toLowerCase();

/** The book of a key page URL (acc://x/book/1 → acc://x/book). */
export function bookOfPage(page: string): string {
  return parentUrl(normUrl(page)) ?? normUrl(page);
}

/**
 * Authorities whose accept the transaction needs (as the ledger simulator decides it): the
 * principal's enabled authorities (a key page's are its book's; an account without authorities inherits its
 * parent's; a lite identity is its own authority and a lite token account's is its lite identity),
 * header.authorities, the new delegates of an UpdateKeyPage, the added authorities of an UpdateAccountAuth and the
 * authorities of a CreateIdentity. None for the root-identity CreateIdentity whose principal does not exist yet
 * (anyone may sign it). Lower-case normalised URLs.
 */
export async function requiredAuthorities(ledger: LedgerClient, tx: Pick<TxStatus, 'principal' | 'transaction'>): Promise<string[]> {
  const req = new Set<string>();
  const principal = normUrl(tx.principal);
  const txn = tx.transaction ?? {};
  const body = txn.body ?? {};
  const acc = await ledger.tryQueryAccount(principal);
  if (!acc && body.type === 'createIdentity' && body.url && norm(String(body.url)) === norm(principal)) return [];
  if (acc?.type === 'liteIdentity') req.add(norm(principal));
  else if (acc?.type === 'liteTokenAccount') req.add(norm(parentUrl(principal) ?? principal));
  else if (acc) {
    let holder = acc.type === 'keyPage' ? await ledger.tryQueryAccount(bookOfPage(principal)) : acc;
    while (holder && holder.type !== 'keyPage' && holder.authorities.length === 0) {
      const parent = parentUrl(holder.url);
      holder = parent ? await ledger.tryQueryAccount(parent) : undefined;
    }
    for (const a of holder?.authorities ?? []) if (!a.disabled) req.add(norm(a.url));
  }
  for (const a of txn.header?.authorities ?? []) req.add(norm(String(a)));
  if (body.type === 'updateKeyPage') {
    for (const op of body.operation ?? []) {
      const d = op?.entry?.delegate ?? op?.newEntry?.delegate;
      if ((op?.type === 'add' || op?.type === 'update') && d) req.add(norm(String(d)));
    }
  }
  if (body.type === 'updateAccountAuth') {
    for (const op of body.operations ?? []) if (op?.type === 'addAuthority' && op.authority) req.add(norm(String(op.authority)));
  }
  if (body.type === 'createIdentity') for (const a of body.authorities ?? []) req.add(norm(String(a)));
  return [...req].sort();
}

export interface SigningProgress {
  /** distinct keys of the page that voted accept (on a pending transaction: at the page's current version) */
  collected: number;
  /** the page's accept threshold (M of M-of-N) */
  threshold: number;
  /** hex public keys of the page that signed, with their votes */
  signers: { publicKey: string; vote: Vote }[];
  /** required authorities that have not voted yet */
  awaitingAuthorities: string[];
  /** authority votes recorded on the principal */
  authorityVotes: { authority: string; vote: Vote }[];
  /** executed, or every required authority accepted and the page's threshold is met */
  isReady: boolean;
}

/** The multi-signature state of `tx` as seen from key page `pageUrl`, read live from the ledger. */
export async function signingProgress(ledger: LedgerClient, tx: TxStatus, pageUrl: string): Promise<SigningProgress> {
  const page = await ledger.queryKeyPage(pageUrl);
  const threshold = Math.max(1, page.acceptThreshold);
  const seen = new Map<string, Vote>();
  for (const s of tx.signatures) {
    // a change of the page (its version) voids the votes a pending transaction collected from it before
    const voided = tx.pending && s.signerVersion !== undefined && s.signerVersion !== page.version;
    if (norm(s.signer) === norm(page.url) && s.publicKey && !voided) seen.set(String(s.publicKey).toLowerCase(), s.vote);
  }
  const signers = [...seen].map(([publicKey, vote]) => ({ publicKey, vote }));
  const collected = signers.filter((s) => s.vote === 'accept').length;
  const authorityVotes = tx.authorityVotes.map((v) => ({ authority: norm(v.authority), vote: v.vote }));
  const voted = new Set(authorityVotes.map((v) => v.authority));
  const awaitingAuthorities = (await requiredAuthorities(ledger, tx)).filter((a) => !voted.has(a));
  const isReady =
    tx.delivered || (!tx.failed && awaitingAuthorities.length === 0 && authorityVotes.every((v) => v.vote === 'accept') && collected >= threshold);
  return { collected, threshold, signers, awaitingAuthorities, authorityVotes, isReady };
}

/**
 * The delegation path (innermost first) through which a key of `signerBook` votes on `tx`: empty when the book is
 * itself a required authority, else the first page of a required authority that lists the book as a delegate.
 */
export async function delegationPath(ledger: LedgerClient, tx: TxStatus, signerBook: string): Promise<string[]> {
  const book = norm(signerBook);
  const required = await requiredAuthorities(ledger, tx);
  if (required.includes(book)) return [];
  const page = (await delegateBooks(ledger, required)).get(book);
  return page ? [page] : [];
}

/** Every book listed as a delegate on a page of the `required` books, with the first such page (in their order). */
export async function delegateBooks(ledger: LedgerClient, required: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const r of required) {
    const acc = await ledger.tryQueryAccount(r);
    if (acc?.type !== 'keyBook') continue;
    const pages = Number(acc.raw.pageCount ?? 0);
    for (let i = 1; i <= pages; i++) {
      const page = await ledger.queryKeyPage(keyPageUrl(r, i));
      for (const k of page.keys) if (k.delegate && !out.has(norm(k.delegate))) out.set(norm(k.delegate), page.url);
    }
  }
  return out;
}

/**
 * What the ledger holds of a prepared transaction: the transaction (pending or final), whether `publicKey`'s vote
 * counts on it (`signed`) and whether any signature of that key is recorded on it at all (`recorded`). Undefined
 * when the ledger does not know it (or holds another transaction under that id). Used when a submission's answer
 * may have been lost: a retry the ledger refuses (the signature's timestamp is used, the transaction already
 * executed) is a success when this key's signature is there. Transport errors are thrown.
 *
 * `signed` follows the same rule as signingProgress: on a pending transaction a signature counts only at its
 * signer's current version (a change of the page voids the votes it collected before, and the key must sign again),
 * and only the key's latest signature per signer and delegation path counts, with the vote `vote` (default accept).
 * A signature whose authority (the signer's book, or the outermost delegator's) has already voted on the
 * transaction counts whatever the page did since: that vote is final. On a final transaction every recorded
 * signature counts.
 */
export async function signatureOnLedger(
  ledger: LedgerClient,
  p: { txId: string; txHash: string; publicKey: string; vote?: Vote },
): Promise<{ tx: TxStatus; signed: boolean; recorded: boolean } | undefined> {
  let st: TxStatus;
  try {
    st = await ledger.getTransaction(p.txId);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  const bare = (h: string) => h.replace(/^0x/, '').toLowerCase();
  if (bare(st.txHash) !== bare(p.txHash)) return undefined;
  const pk = p.publicKey.toLowerCase();
  const mine = st.signatures.filter((s) => String(s.publicKey ?? '').toLowerCase() === pk);
  // a key signing again on the same signer and path replaces its entry in the signature set
  const latest = new Map<string, SignatureInfo>();
  for (const s of mine) latest.set(`${norm(s.signer)}|${s.delegators.map(norm).join(',')}`, s);
  const want = p.vote ?? 'accept';
  let signed = false;
  for (const s of latest.values()) {
    if (s.vote === want && (!st.pending || (await countsOnPending(ledger, st, s)))) {
      signed = true;
      break;
    }
  }
  return { tx: st, signed, recorded: mine.length > 0 };
}

/** Whether signature `s` on the pending transaction `st` still counts: its authority voted, or it is at its signer's current version. */
export async function countsOnPending(ledger: LedgerClient, st: TxStatus, s: SignatureInfo): Promise<boolean> {
  const outer = s.delegators.length ? s.delegators[s.delegators.length - 1]! : s.signer;
  const authorities = new Set([norm(outer), norm(bookOfPage(outer))]);
  if (st.authorityVotes.some((v) => authorities.has(norm(v.authority)))) return true;
  if (s.signerVersion === undefined) return true;
  const signer = await ledger.tryQueryAccount(s.signer);
  if (!signer) return false;
  if (signer.type !== 'keyPage') return true; // a lite identity has one version
  return Number(signer.raw.version ?? 0) === s.signerVersion;
}

/** Poll until `publicKey`'s signature on `txId` is recorded or the transaction is final; the last status read. */
export async function waitForSignature(ledger: LedgerClient, txId: string, publicKey: string, timeoutMs = 10_000): Promise<TxStatus> {
  const deadline = Date.now() + timeoutMs;
  const pk = publicKey.toLowerCase();
  for (;;) {
    let st: TxStatus | undefined;
    try {
      st = await ledger.getTransaction(txId);
    } catch (e) {
      // a new transaction is unknown until the block that takes it
      if (!isNotFound(e) || Date.now() > deadline) throw e;
    }
    if (st && (st.delivered || st.failed || st.signatures.some((s) => String(s.publicKey ?? '').toLowerCase() === pk))) return st;
    if (st && Date.now() > deadline) return st;
    await sleep(25);
  }
}
