/**
 * A short-lived cache of the ledger's answers about signers (key pages and lite identities), for preparing
 * signatures: an intent's prepare reads its signer's key page (version, the key's lastUsedOn, credits), and these
 * change rarely. An answer is kept SIGNER_PAGE_CACHE_MS (2 s) and dropped at once by every submission through the same
 * client (before it is sent and after it is answered, so no read overlapping a submission is kept). A key page without
 * credits is never kept (a 402 always reads again, so credits bought are seen at once); accounts of other types are
 * never kept.
 *
 * Why a stale answer cannot get a wrong signature accepted: hash_to_sign commits to the signer's version and the
 * signature timestamp, and the ledger checks both when the signature is submitted — a version that is not the page's
 * current one is refused (badSignerVersion), as is a timestamp at or below the key's lastUsedOn. The gateway answers
 * those 409 SIGNING_DATA_STALE (src/ledger/stale.ts) and nothing is executed; the refused submission went through this
 * client, so the cache is empty and the fresh signing data the client then fetches is read from the ledger. A key
 * removed from the page is refused by the ledger the same way. The cost of staleness is therefore at most a 409 and a
 * refresh, within 2 s of a change made elsewhere (another process, or outside the gateway); timestamps the client
 * issued itself stay above each other whatever the cache says (signerTimestamps in ./prepared.ts).
 */
import type { KeyPageInfo, LedgerClient } from './types.js';
import type { LedgerRpc } from './rpc.js';

export const SIGNER_PAGE_CACHE_MS = 2000;
const MAX_ENTRIES = 5000;

export interface SignerPageCache {
  /** the rpc's `call` with account reads of signers answered from the cache */
  call: LedgerRpc['call'];
  /** drop everything (a submission: the ledger's state is changing) */
  clear(): void;
}

function keepable(answer: any): boolean {
  const a = answer?.account;
  if (a?.type === 'liteIdentity') return true;
  return a?.type === 'keyPage' && Number(a.creditBalance ?? 0) > 0;
}

export function signerPageCache(call: LedgerRpc['call'], ttlMs = SIGNER_PAGE_CACHE_MS, clock: () => number = () => performance.now()): SignerPageCache {
  const entries = new Map<string, { at: number; answer: unknown }>();
  let generation = 0;
  const clear = () => {
    generation++;
    entries.clear();
  };
  const cached = (async (method: string, params: any) => {
    if (method !== 'query' || params?.query?.queryType !== 'default' || typeof params.scope !== 'string') return call(method, params);
    const key = params.scope.toLowerCase();
    const hit = entries.get(key);
    if (hit && clock() - hit.at < ttlMs) return hit.answer;
    const gen = generation;
    const answer = await call(method, params);
    if (gen === generation && keepable(answer)) {
      if (entries.size >= MAX_ENTRIES) entries.clear();
      entries.set(key, { at: clock(), answer });
    }
    return answer;
  }) as LedgerRpc['call'];
  return { call: cached, clear };
}

/** the recent-read function of clients made with a cache */
const recent = new WeakMap<LedgerClient, (url: string) => Promise<KeyPageInfo>>();

export function registerRecentKeyPage(client: LedgerClient, read: (url: string) => Promise<KeyPageInfo>): void {
  recent.set(client, read);
}

/**
 * The signer's key page as recently read (at most SIGNER_PAGE_CACHE_MS old, see above) when `ledger` keeps a signer
 * cache, else read now.
 */
export function recentKeyPage(ledger: LedgerClient, url: string): Promise<KeyPageInfo> {
  return (recent.get(ledger) ?? ledger.queryKeyPage)(url);
}
