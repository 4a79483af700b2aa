/**
 * The authority behind an intent: its ledger transaction must carry accepting signatures that meet the threshold of a
 * key page of the identity's key book (directly, or through delegate books whose own page met its threshold), and
 * that book must govern both the identity and the account the intent was written to.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from 'viem';
import type { LedgerClient, TxStatus } from '../ledger/index.js';
import type { CanonicalIntent } from '../protocol/intent/index.js';
import type { AuthorityReport } from '../protocol/validator-wire.js';
import { refuse } from './refusal.js';

export async function checkAuthority(ledger: LedgerClient, st: TxStatus, intent: CanonicalIntent, principal: string): Promise<AuthorityReport> {
  const book = intent.keyBook.toLowerCase();
  const keyHash = (pub: string) => bytesToHex(sha256(hexToBytes(`0x${pub}`))).slice(2);
  const byPage = new Map<string, Set<string>>();
  // page of this book -> delegate book -> { the delegate's signing page, its keys that signed }
  const delegated = new Map<string, Map<string, { page: string; pubs: Set<string> }>>();
  for (const s of st.signatures) {
    if (s.vote !== 'accept' || !s.publicKey) continue;
    const signer = s.signer.toLowerCase();
    if (!s.delegators.length) {
      if (!signer.startsWith(`${book}/`)) continue;
      const set = byPage.get(signer) ?? new Set<string>();
      set.add(s.publicKey.toLowerCase());
      byPage.set(signer, set);
    } else if (s.delegators.length === 1) {
      const owner = s.delegators[0]!.toLowerCase();
      if (!owner.startsWith(`${book}/`)) continue;
      const dbook = signer.replace(/\/\d+$/, '');
      const m = delegated.get(owner) ?? new Map<string, { page: string; pubs: Set<string> }>();
      const e = m.get(dbook) ?? { page: signer, pubs: new Set<string>() };
      if (e.page === signer) e.pubs.add(s.publicKey.toLowerCase());
      m.set(dbook, e);
      delegated.set(owner, m);
      if (!byPage.has(owner)) byPage.set(owner, new Set());
    }
    // deeper delegation chains are not counted
  }
  // The reads below depend on the transaction only: they go out together (one ledger round trip instead of three
  // after another), and each is awaited where it is needed, so the checks still fail in the order written. A read
  // that is never awaited (a key page, after an earlier refusal) must not fail unhandled.
  const early = <T>(p: Promise<T>): Promise<T> => {
    p.catch(() => {});
    return p;
  };
  const account = early(ledger.queryAccount(principal));
  const identity = early(ledger.queryAccount(intent.adiUrl));
  const pages = new Map([...byPage.keys()].map((p) => [p, early(ledger.queryKeyPage(p))]));
  const own = await account;
  const enabled = (a: { authorities: { url: string; disabled?: boolean }[] }) => a.authorities.filter((x) => !x.disabled).map((x) => x.url.toLowerCase());
  // the book must govern the identity itself, not only the account: the identity's owner may have given an
  // account of it to another party's book, and that party must not spend from the identity's accounts on chain
  const idAuths = enabled(await identity);
  if (!idAuths.includes(book))
    refuse('AUTHORITY', `${intent.keyBook} is not an authority of the identity ${intent.adiUrl} (authorities: ${idAuths.join(', ') || 'none'})`);
  // an account created without authorities of its own is governed by its identity's
  const auths = own.authorities.length ? enabled(own) : idAuths;
  if (!auths.includes(book)) refuse('AUTHORITY', `data account ${principal} is not governed by ${intent.keyBook} (authorities: ${auths.join(', ') || 'none'})`);
  if (!byPage.size) refuse('AUTHORITY', `no accepting signature from a key page of ${intent.keyBook}`);
  const seen: string[] = [];
  for (const [page, pubs] of byPage) {
    const kp = await pages.get(page)!;
    const onPage = new Set(kp.keys.map((k) => k.publicKeyHash?.toLowerCase()).filter(Boolean));
    let n = [...pubs].filter((p) => onPage.has(keyHash(p))).length;
    let viaDelegates = 0;
    for (const [dbook, e] of delegated.get(page) ?? []) {
      // the page must list the delegate book, and the delegate's page must have met its own threshold
      if (!kp.keys.some((k) => k.delegate?.toLowerCase() === dbook)) continue;
      const dp = await ledger.queryKeyPage(e.page);
      const dOn = new Set(dp.keys.map((k) => k.publicKeyHash?.toLowerCase()).filter(Boolean));
      if ([...e.pubs].filter((p) => dOn.has(keyHash(p))).length >= Math.max(1, dp.acceptThreshold)) viaDelegates++;
    }
    n += viaDelegates;
    if (n >= kp.acceptThreshold && kp.acceptThreshold >= 1) {
      return {
        keyBook: intent.keyBook,
        keyPage: kp.url,
        keyPageVersion: kp.version,
        threshold: kp.acceptThreshold,
        signatures: n,
        ...(viaDelegates ? { delegated: viaDelegates } : {}),
      };
    }
    seen.push(`${kp.url}: ${n} of ${kp.acceptThreshold}`);
  }
  refuse('THRESHOLD_NOT_MET', `no key page met its threshold (${seen.join('; ')})`);
  throw new Error('unreachable');
}
