/**
 * Chain registry: name <-> chain id <-> RPC URL <-> confirmations <-> system contract addresses.
 * Built from parameters (the lead's config supplies the list); nothing here reads the environment.
 *
 *   const chains = createChainRegistry([{ name: 'ethereum-sepolia', chainId: 11155111, rpcUrl, confirmations: 2 }]);
 *   chains.get('ethereum-sepolia').rpcUrl; chains.get(80002).name;
 */
import type { Address } from 'viem';

/** Chain names the gateway knows and their EVM chain ids. */
export const KNOWN_CHAINS = {
  'ethereum-sepolia': 11155111,
  'polygon-amoy': 80002,
} as const satisfies Record<string, number>;

export interface SystemContracts {
  proofAnchor: Address;
  accountFactory: Address;
}

export interface ChainEntry {
  /** e.g. 'ethereum-sepolia' */
  name: string;
  /** EVM chain id (a number: viem's type; every id in use is far below 2^53) */
  chainId: number;
  rpcUrl: string;
  /** blocks after inclusion before an execution counts as final */
  confirmations: number;
  /** most blocks one eth_getLogs call may span (the RPC provider's limit); default logs.DEFAULT_LOG_RANGE_BLOCKS */
  logRangeBlocks?: number;
  /** set once the system contracts are deployed (the same on every chain) */
  contracts?: SystemContracts;
}

export interface ChainRegistry {
  list(): readonly ChainEntry[];
  /** by name or chain id; throws on an unknown chain */
  get(nameOrId: string | number | bigint): ChainEntry;
  find(nameOrId: string | number | bigint): ChainEntry | undefined;
  has(nameOrId: string | number | bigint): boolean;
  /** a new registry with contract addresses set on every chain (or only on `names`) */
  withContracts(contracts: SystemContracts, names?: readonly string[]): ChainRegistry;
}

export function createChainRegistry(entries: readonly ChainEntry[]): ChainRegistry {
  const byName = new Map<string, ChainEntry>();
  const byId = new Map<number, ChainEntry>();
  for (const e of entries) {
    if (!e.name || !Number.isSafeInteger(e.chainId) || e.chainId <= 0) throw new Error(`bad chain entry ${JSON.stringify(e)}`);
    if (!Number.isInteger(e.confirmations) || e.confirmations < 0) throw new Error(`bad confirmations for ${e.name}`);
    if (e.logRangeBlocks !== undefined && (!Number.isSafeInteger(e.logRangeBlocks) || e.logRangeBlocks < 1))
      throw new Error(`bad logRangeBlocks for ${e.name}`);
    if (byName.has(e.name)) throw new Error(`duplicate chain name ${e.name}`);
    if (byId.has(e.chainId)) throw new Error(`duplicate chain id ${e.chainId}`);
    const frozen = Object.freeze({ ...e });
    byName.set(e.name, frozen);
    byId.set(e.chainId, frozen);
  }
  const list = Object.freeze([...byName.values()]);
  const find = (k: string | number | bigint) => (typeof k === 'string' && !/^\d+$/.test(k) ? byName.get(k) : byId.get(Number(k)));
  return {
    list: () => list,
    find,
    has: (k) => find(k) !== undefined,
    get(k) {
      const e = find(k);
      if (!e) throw new Error(`unknown chain ${String(k)}`);
      return e;
    },
    withContracts(contracts, names) {
      return createChainRegistry(list.map((e) => (!names || names.includes(e.name) ? { ...e, contracts } : e)));
    },
  };
}
