/**
 * viem clients for one chain, built from parameters. `createChainClients({ rpcUrl, chainId, privateKey })`
 * returns a public client and, with a key, a wallet client whose account uses viem's nonce manager so
 * concurrent sends from one relayer key do not collide.
 */
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  nonceManager,
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

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
  const transport = http(p.rpcUrl, { batch: false, retryCount: 2 });
  const pollingInterval = p.pollingIntervalMs ?? 100;
  const pub = createPublicClient({ chain, transport, pollingInterval }) as PublicClient<Transport, Chain>;
  if (!p.privateKey) return { chain, public: pub };
  const account = privateKeyToAccount(p.privateKey, { nonceManager });
  const wallet = createWalletClient({ chain, transport, account, pollingInterval });
  return { chain, public: pub, wallet, account };
}
