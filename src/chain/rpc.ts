import { httpFetch } from '../net/fetch.js';

/** The one raw JSON-RPC probe: which chain answers at an RPC URL (health checks, devnet readiness). */
export async function readChainId(rpcUrl: string, timeoutMs: number): Promise<number> {
  const res = await httpFetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json()) as { result?: string };
  if (!body.result) throw new Error('no eth_chainId result');
  return Number(BigInt(body.result));
}
