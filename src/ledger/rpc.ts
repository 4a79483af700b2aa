/**
 * The ledger client's transport: JSON-RPC 2.0 over HTTP POST to `<url>/v3`, with a per-request timeout, and retries
 * of reads that failed in transit. A JSON-RPC error becomes a LedgerRpcError with the Accumulate status label.
 */
import { httpFetch } from '../net/fetch.js';
import { sleep } from '../net/sleep.js';
import { LedgerError, LedgerInputError, LedgerRpcError, LedgerTransportError } from './errors.js';
import type { FetchLike, LedgerClientOptions } from './types.js';

/** Methods that only read, so sending them again cannot change the ledger. */
const READ_METHODS = new Set(['query', 'network-status']);

export interface LedgerRpc {
  /** the node's base URL, without /v3 */
  readonly url: string;
  /** the v3 JSON-RPC endpoint */
  readonly endpoint: string;
  call<T = any>(method: string, params: unknown): Promise<T>;
}

function safeJson(s: string): any {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

export function createLedgerRpc(opts: Pick<LedgerClientOptions, 'url' | 'fetch' | 'timeoutMs' | 'readRetryDelaysMs'>): LedgerRpc {
  let base: string;
  try {
    const u = new globalThis.URL(opts.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    base = opts.url.replace(/\/+$/, '');
  } catch {
    throw new LedgerInputError(`url: expected an http(s) node URL, got ${JSON.stringify(opts.url)}`, 'url');
  }
  const endpoint = base.endsWith('/v3') ? base : `${base}/v3`;
  const url = endpoint.slice(0, -'/v3'.length);
  const doFetch: FetchLike = opts.fetch ?? httpFetch;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const readRetryDelaysMs = opts.readRetryDelaysMs ?? [50, 200];
  let rpcId = 0;

  async function call<T = any>(method: string, params: unknown): Promise<T> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    const retries = READ_METHODS.has(method) ? readRetryDelaysMs : [];
    let text: string;
    for (let attempt = 0; ; attempt++) {
      let transient = false;
      try {
        const res = await doFetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await res.text();
        if (!res.ok && !text.startsWith('{')) {
          transient = res.status >= 500 || res.status === 429;
          throw new LedgerTransportError(`ledger ${endpoint}: HTTP ${res.status}`);
        }
        break;
      } catch (e) {
        const timedOut = (e as Error)?.name === 'TimeoutError' || (e as Error)?.name === 'AbortError';
        if (!(e instanceof LedgerError)) transient = !timedOut;
        if (transient && attempt < retries.length) {
          await sleep(retries[attempt]!);
          continue;
        }
        if (e instanceof LedgerError) throw e;
        throw new LedgerTransportError(`ledger ${endpoint} unreachable: ${(e as Error).message}`, { cause: e });
      }
    }
    let msg: any;
    try {
      msg = JSON.parse(text);
    } catch {
      throw new LedgerTransportError(`ledger ${endpoint}: response is not JSON`);
    }
    if (msg?.error) {
      const e = msg.error;
      const data = typeof e.data === 'string' ? (safeJson(e.data) ?? e.data) : e.data;
      const code = typeof data === 'object' && data?.code ? String(data.code) : e.code <= -33000 ? 'unknownError' : 'rpcError';
      throw new LedgerRpcError(String(e.message ?? 'JSON-RPC error'), code, Number(e.code), data);
    }
    return msg.result as T;
  }

  return { url, endpoint, call };
}
