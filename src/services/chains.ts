/**
 * The chain registry as the API shows it (GET /v1/chains), and the chain readers the API's live reads share (one
 * viem client per chain, kept for the app's life).
 *
 * Whether each system contract has code at its configured address (`verified`) is read from the chain and cached:
 * a positive answer for VERIFIED_TTL_MS, a negative one or an unreadable chain for UNVERIFIED_TTL_MS. Concurrent
 * requests share one read, and a read is bounded by CODE_TIMEOUT_MS, so the public route costs at most one getCode
 * per contract and TTL however often it is called, and a chain that does not answer shows `verified: false` rather
 * than failing the request.
 */
import { getAddress, type Address } from 'viem';
import { createChainClients, type ChainClients } from '../chain/clients.js';
import type { ChainConfig } from '../config.js';
import { withTimeout } from '../net/timeout.js';
import type { ServiceDeps } from './deps.js';

const VERIFIED_TTL_MS = 10 * 60_000;
const UNVERIFIED_TTL_MS = 60_000;
const CODE_TIMEOUT_MS = 2000;

/** Native currency symbols by chain registry id; any other chain's is ETH. The first is the one shown. */
const NATIVE_SYMBOLS: Record<string, readonly string[]> = { 'polygon-amoy': ['POL', 'MATIC'] };

/** The symbols accepted for a chain's native currency (tokenSymbol of a transfer intent); the first is canonical. */
export function nativeSymbols(chain: string): readonly string[] {
  return NATIVE_SYMBOLS[chain] ?? ['ETH'];
}

/** The native currency of a chain: every configured chain is an EVM chain with 18 decimals. */
export function nativeCurrency(chain: string): { symbol: string; decimals: number } {
  return { symbol: nativeSymbols(chain)[0]!, decimals: 18 };
}

/** One public client per configured chain, built on first use. */
export function createChainReaders() {
  const readers = new Map<string, ChainClients>();
  return (ch: ChainConfig): ChainClients => {
    let r = readers.get(ch.name);
    if (!r) {
      r = createChainClients({ rpcUrl: ch.rpcUrl, chainId: ch.chainId, name: ch.name });
      readers.set(ch.name, r);
    }
    return r;
  };
}
export type ChainReaders = ReturnType<typeof createChainReaders>;

export interface ContractView {
  address: string;
  verified: boolean;
}

export interface ChainView {
  id: string;
  name: string;
  chainId: number;
  evm_chain_id: number;
  family: 'evm';
  confirmations: number;
  contracts: { proof_anchor: ContractView; account_factory: ContractView } | null;
}

export type ChainRegistry = ReturnType<typeof createChainRegistry>;

export function createChainRegistry(deps: Pick<ServiceDeps, 'config' | 'now'>, reader: ChainReaders = createChainReaders()) {
  const now = () => (deps.now ?? Date.now)();
  const cache = new Map<string, { verified: boolean; until: number } | { pending: Promise<boolean> }>();

  /** Whether code is at `address` on the chain: cached, one read at a time, false when the chain does not answer. */
  async function hasCode(ch: ChainConfig, address: string): Promise<boolean> {
    const key = `${ch.name}/${address.toLowerCase()}`;
    const hit = cache.get(key);
    if (hit && 'pending' in hit) return hit.pending;
    if (hit && hit.until > now()) return hit.verified;
    const pending = withTimeout(reader(ch).public.getCode({ address: address as Address }), CODE_TIMEOUT_MS, ch.name).then(
      (code) => !!code && code !== '0x',
      () => false,
    );
    cache.set(key, { pending });
    const verified = await pending;
    cache.set(key, { verified, until: now() + (verified ? VERIFIED_TTL_MS : UNVERIFIED_TTL_MS) });
    return verified;
  }

  async function view(ch: ChainConfig): Promise<ChainView> {
    const c = ch.contracts;
    const [anchor, factory] = c ? await Promise.all([hasCode(ch, c.proofAnchor), hasCode(ch, c.accountFactory)]) : [false, false];
    return {
      id: ch.name,
      name: ch.name,
      chainId: ch.chainId,
      evm_chain_id: ch.chainId,
      family: 'evm',
      confirmations: ch.confirmations,
      contracts: c
        ? {
            proof_anchor: { address: getAddress(c.proofAnchor), verified: anchor },
            account_factory: { address: getAddress(c.accountFactory), verified: factory },
          }
        : null,
    };
  }

  return {
    list: (): Promise<ChainView[]> => Promise.all(deps.config.chains.map(view)),
    /** By registry id or by numeric EVM chain id; undefined when neither names a configured chain. */
    async find(id: string): Promise<ChainView | undefined> {
      const ch = deps.config.chains.find((x) => x.name === id || (/^[1-9][0-9]{0,15}$/.test(id) && x.chainId === Number(id)));
      return ch && view(ch);
    },
  };
}
