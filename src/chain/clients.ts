/**
 * viem clients for one chain, built from parameters. `createChainClients({ rpcUrl, chainId, privateKey })`
 * returns a public client and, with a key, a wallet client whose account has its own nonce manager so
 * concurrent sends through this client do not collide (use one writer per key and chain per process).
 */
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  createNonceManager,
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { jsonRpc } from 'viem/nonce';

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
export function createChainClients(p: {
  rpcUrl: string;
  chainId: number;
  name?: string;
  privateKey: Hex;
  pollingIntervalMs?: number;
}): ChainWriter;
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
  const transport = http(p.rpcUrl, { batch: { wait: 0 }, retryCount: 2 });
  const pollingInterval = p.pollingIntervalMs ?? 100;
  const pub = createPublicClient({ chain, transport, pollingInterval }) as PublicClient<Transport, Chain>;
  if (!p.privateKey) return { chain, public: pub };
  // one nonce manager per client: viem's shared default is keyed by (address, chainId) only, so two chains
  // with the same id (tests, a restarted devnet) would inherit stale nonces and hang.
  const account = privateKeyToAccount(p.privateKey, { nonceManager: createNonceManager({ source: jsonRpc() }) });
  const wallet = createWalletClient({ chain, transport, account, pollingInterval });
  return { chain, public: pub, wallet, account };
}
