/**
 * The chains as activities reach them: the registry entry (with its system contracts), one reader and one relayer
 * writer per chain for the worker's lifetime. One writer per chain and process means one nonce manager, so
 * concurrent transactions of several workflows never collide on a nonce.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Hex } from 'viem';
import { createChainClients, type ChainClients, type ChainWriter } from '../chain/clients.js';
import type { ChainEntry, ChainRegistry, SystemContracts } from '../chain/registry.js';

export interface ChainAccessDeps {
  chains: ChainRegistry;
  /** secp256k1 key paying gas on every chain (RELAYER_PRIVATE_KEY) */
  relayerPrivateKey?: Hex;
  /** receipt poll interval, default 50 ms */
  pollMs?: number;
}

export interface ChainAccess {
  /** the chain with its system contracts; ChainNotConfigured (non-retryable) otherwise */
  entry(name: string): ChainEntry & { contracts: SystemContracts };
  writer(name: string): ChainWriter;
  reader(name: string): ChainClients;
}

export function createChainAccess(deps: ChainAccessDeps): ChainAccess {
  const pollMs = deps.pollMs ?? 50;
  const writers = new Map<string, ChainWriter>();
  const readers = new Map<string, ChainClients>();
  function entry(name: string) {
    const e = deps.chains.find(name);
    if (!e) throw ApplicationFailure.nonRetryable(`unknown chain ${name}`, 'ChainNotConfigured');
    if (!e.contracts) throw ApplicationFailure.nonRetryable(`chain ${name} has no system contracts configured`, 'ChainNotConfigured');
    return { ...e, contracts: e.contracts };
  }
  return {
    entry,
    writer(name) {
      const e = entry(name);
      if (!deps.relayerPrivateKey) throw ApplicationFailure.nonRetryable('no relayer key configured (RELAYER_PRIVATE_KEY)', 'ChainNotConfigured');
      let w = writers.get(name);
      if (!w) {
        w = createChainClients({ rpcUrl: e.rpcUrl, chainId: e.chainId, name, privateKey: deps.relayerPrivateKey, pollingIntervalMs: pollMs });
        writers.set(name, w);
      }
      return w;
    },
    reader(name) {
      const e = entry(name);
      let r = readers.get(name);
      if (!r) {
        r = createChainClients({ rpcUrl: e.rpcUrl, chainId: e.chainId, name, pollingIntervalMs: pollMs });
        readers.set(name, r);
      }
      return r;
    },
  };
}
