/**
 * A short-lived cache of the ledger's answers about key pages, for the checks before a signature is prepared: an
 * intent's prepare reads its signer's key page for its credits (402 INSUFFICIENT_CREDITS when it has none), and the
 * credits of a page that has them rarely matter within seconds. An answer is kept SIGNER_PAGE_CACHE_MS (2 s) and
 * dropped at once by every submission through the same client (before it is sent and after it is answered, so no read
 * overlapping a submission is kept). A key page without credits is never kept (a 402 always reads again, so credits
 * bought are seen at once); lite identities are kept; accounts of other types never.
 *
 * Only recentKeyPage answers from it. The signature itself (hash_to_sign: the signer's version, the timestamp above
 * the key's lastUsedOn) is always prepared from a live read of the signer (./prepared.ts), so a key page changed
 * elsewhere — by the worker's governance execution, another process, or outside the gateway — never gives signing data
 * at an old version. A stale cached answer can only let a prepare through whose page has just spent its last credits
 * (within 2 s), which the ledger then refuses at submission like any intent whose credits ran out after its prepare.
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
 * The key page as recently read (at most SIGNER_PAGE_CACHE_MS old; for its credits, see above) when `ledger` keeps
 * a page cache, else read now.
 */
export function recentKeyPage(ledger: LedgerClient, url: string): Promise<KeyPageInfo> {
  return (recent.get(ledger) ?? ledger.queryKeyPage)(url);
}
