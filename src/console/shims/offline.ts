/**
 * Browser stand-in for the modules that reach the network (src/proof/verify/online.ts, src/net/fetch.ts) in the
 * console bundle: the in-browser verifier is offline only, so nothing here is ever called with an address, and a
 * call that would open a connection fails instead (the console's policy allows no other origin anyway).
 */
const offline = (): never => {
  throw new Error('the in-browser verifier is offline: no RPC or ledger cross-checks');
};

export const MAX_BODY_BYTES = 10 * 1024 * 1024;
export const httpFetch = async (): Promise<Response> => offline();
export const resetTolerantFetch = async (): Promise<Response> => offline();

export async function verifyOnLedger(): Promise<void> {
  offline();
}

/** Called with no RPC (offline): nothing to cross-check. */
export async function verifyOnChains(_ctx: unknown, rpc: Record<string, string>): Promise<void> {
  if (Object.keys(rpc).length > 0) offline();
}
