/**
 * LedgerClient: the gateway's view of an Accumulate network, over v3 JSON-RPC (POST `<url>/v3`) with fetch.
 * accumulate.js supplies types, encoding and hashes; transport is ours. The client is composed of its concerns:
 * rpc.ts (transport and read retries), queries.ts (reads), prepared.ts (external signatures prepared, signer
 * timestamps), submit.ts (signing with held keys, submission), wait.ts (waiting for a transaction); the node's
 * answers are parsed in records.ts, the types are in types.ts.
 */
import { registerRecentKeyPage, signerPageCache } from './page-cache.js';
import { signaturePreparation } from './prepared.js';
import { ledgerQueries } from './queries.js';
import { createLedgerRpc } from './rpc.js';
import { ledgerSubmission } from './submit.js';
import type { LedgerClient, LedgerClientOptions } from './types.js';
import { ledgerWaiting } from './wait.js';

export type * from './types.js';
export { recentKeyPage, SIGNER_PAGE_CACHE_MS } from './page-cache.js';
export { revivePreparedSignature, storablePreparedSignature, type StoredPreparedSignature } from './prepared.js';

export function createLedgerClient(opts: LedgerClientOptions): LedgerClient {
  const rpc = createLedgerRpc(opts);
  const reads = ledgerQueries(rpc);
  // signerCacheMs: recentKeyPage answers from reads of key pages at most this old (./page-cache.ts), which every
  // submission through this client drops; signatures are always prepared from a live read of the signer
  const cache = opts.signerCacheMs ? signerPageCache(rpc.call, opts.signerCacheMs) : undefined;
  const recentReads = cache ? ledgerQueries({ ...rpc, call: cache.call }) : undefined;
  const submitting: typeof rpc = cache
    ? {
        ...rpc,
        call: (method, params) => {
          cache.clear();
          return rpc.call(method, params).finally(cache.clear);
        },
      }
    : rpc;
  const preparation = signaturePreparation(rpc.endpoint, reads);
  const client: LedgerClient = {
    url: rpc.url,
    endpoint: rpc.endpoint,
    call: rpc.call,
    ...reads,
    ...preparation,
    ...ledgerSubmission(submitting, preparation.prepareExternalSignature),
    ...ledgerWaiting(reads.getTransaction, opts.pollIntervalMs ?? 25),
  };
  if (recentReads) registerRecentKeyPage(client, recentReads.queryKeyPage);
  return client;
}
