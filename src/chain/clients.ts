/**
 * viem clients for one chain, built from parameters. `createChainClients({ rpcUrl, chainId, privateKey })`
 * returns a public client and, with a key, a wallet client whose account has its own nonce manager so
 * concurrent sends through this client do not collide (use one writer per key and chain per process).
 */
import {
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  createNonceManager,
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { jsonRpc } from 'viem/nonce';
import { httpFetch } from '../net/fetch.js';
import { sleep } from '../net/sleep.js';

export interface ChainClients {
  chain: Chain;
  public: PublicClient<Transport, Chain>;
}

export interface ChainWriter extends ChainClients {
  wallet: WalletClient<Transport, Chain, Account>;
  account: Account;
}

export function chainDefinition(chainId: number, rpcUrl: string, name = `chain-${chainId}`): Chain {
  return defineChain({
    id: chainId,
    name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

export function createChainClients(p: { rpcUrl: string; chainId: number; name?: string; pollingIntervalMs?: number }): ChainClients;
export function createChainClients(p: { rpcUrl: string; chainId: number; name?: string; privateKey: Hex; pollingIntervalMs?: number }): ChainWriter;
export function createChainClients(p: {
  rpcUrl: string;
  chainId: number;
  name?: string;
  privateKey?: Hex;
  pollingIntervalMs?: number;
}): ChainClients | ChainWriter {
  const chain = chainDefinition(p.chainId, p.rpcUrl, p.name);
  // requests issued together (a block's raw transactions for an inclusion proof, the reads of a validator set)
  // go out as one JSON-RPC batch: one HTTP round trip instead of one each
  const transport = http(p.rpcUrl, { batch: { wait: 0 }, retryCount: 2, fetchFn: httpFetch as typeof fetch });
  const pollingInterval = p.pollingIntervalMs ?? 100;
  const pub = createPublicClient({ chain, transport, pollingInterval }) as PublicClient<Transport, Chain>;
  if (!p.privateKey) return { chain, public: pub };
  // one nonce manager per client: viem's shared default is keyed by (address, chainId) only, so two chains
  // with the same id (tests, a restarted devnet) would inherit stale nonces and hang.
  const account = privateKeyToAccount(p.privateKey, { nonceManager: createNonceManager({ source: jsonRpc() }) });
  const wallet = createWalletClient({ chain, transport, account, pollingInterval });
  return { chain, public: pub, wallet, account };
}

/** The node no longer knows a transaction that was sent (evicted from its mempool, or the node restarted). */
export class DroppedTransactionError extends Error {
  constructor(readonly hash: Hex) {
    super(`transaction ${hash} was dropped by the node before it was mined; its nonce is released, send again`);
    this.name = 'DroppedTransactionError';
  }
}

export interface WaitReceiptOptions {
  /** give up after this long (default 120 s) */
  timeoutMs?: number;
  /** receipt poll interval (default 25 ms) */
  pollMs?: number;
  /** after this long without a receipt, also ask whether the node still knows the transaction (default 2 s) */
  droppedCheckMs?: number;
  /** a transaction of the writer's key that waits this long behind a gap in the key's nonces gets the gap filled (default 6 s) */
  gapFillMs?: number;
  /** told when a gap was filled: the nonces `from` … `to − 1` of `address` */
  onGapFilled?: (gap: { address: Hex; from: number; to: number; hash: Hex }) => void;
}

/**
 * Fills the writer's nonces `from` … `to − 1` with empty transfers to itself, so a transaction queued behind them can
 * be mined. A nonce some other send takes meanwhile refuses its filler, which is then not needed.
 */
async function fillNonceGap(w: ChainWriter, from: number, to: number): Promise<void> {
  for (let nonce = from; nonce < to; nonce++) {
    await w.wallet.sendTransaction({ to: w.account.address, value: 0n, nonce, gas: 21_000n }).catch(() => undefined);
  }
}

/**
 * The receipt of a transaction, polled. A writer's nonce manager hands out nonces from its own count; if a sent
 * transaction is dropped before it is mined, every later one from that key would queue behind the gap forever.
 * So while no receipt has come, this asks (every `droppedCheckMs`) whether the node still knows the transaction;
 * if not, it resets the writer's nonce manager, so the next send takes the freed nonce from the node's count,
 * and throws DroppedTransactionError. A transaction of the writer's key that the node knows but cannot mine because
 * a nonce below it never arrived (a send whose waiter is gone, a nonce taken and never sent) waits behind that gap
 * until some later send fills it; after `gapFillMs` without one, this fills it.
 */
export async function waitForReceipt(c: ChainClients | ChainWriter, hash: Hex, opts: WaitReceiptOptions = {}): Promise<TransactionReceipt> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const pollMs = opts.pollMs ?? 25;
  const checkMs = opts.droppedCheckMs ?? 2_000;
  const gapMs = opts.gapFillMs ?? 6_000;
  const t0 = Date.now();
  let checkedAt = t0;
  let gapSince: number | undefined;
  let lastError: unknown;
  // a failed read (the RPC hiccuped) is retried at the next poll, like a missing receipt
  const receipt = () =>
    c.public.getTransactionReceipt({ hash }).catch((e) => {
      if (!(e instanceof TransactionReceiptNotFoundError)) lastError = e;
      return undefined;
    });
  for (;;) {
    const r = await receipt();
    if (r) return r;
    const now = Date.now();
    if (now - checkedAt >= checkMs) {
      checkedAt = now;
      // null: the node does not know it; undefined: the read failed (asked again at the next check)
      const known = await c.public.getTransaction({ hash }).catch((e) => (e instanceof TransactionNotFoundError ? null : undefined));
      if (known === null) {
        const late = await receipt(); // mined between the two reads?
        if (late) return late;
        if ('account' in c) c.account.nonceManager?.reset({ address: c.account.address, chainId: c.chain.id });
        throw new DroppedTransactionError(hash);
      }
      if (known && 'account' in c && known.from.toLowerCase() === c.account.address.toLowerCase()) {
        // the node's next nonce for the key counts only what it can mine: below this transaction's, a gap
        const next = await c.public.getTransactionCount({ address: c.account.address, blockTag: 'pending' }).catch(() => undefined);
        if (next === undefined || known.nonce <= next) gapSince = undefined;
        else if (gapSince === undefined) gapSince = now;
        else if (now - gapSince >= gapMs) {
          await fillNonceGap(c, next, known.nonce);
          opts.onGapFilled?.({ address: c.account.address, from: next, to: known.nonce, hash });
          gapSince = undefined;
        }
      }
    }
    if (now - t0 > timeoutMs)
      throw new Error(`no receipt for ${hash} after ${timeoutMs} ms${lastError ? ` (last read error: ${(lastError as Error).message})` : ''}`);
    await sleep(pollMs);
  }
}
