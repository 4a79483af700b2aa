/**
 * The dependencies of a worker's activities that come from config: the ledger client, the sponsor key, the chain
 * registry (with the system contract addresses), the relayer key and the validators' URLs. Every activity family
 * takes its share (identity provisioning, co-signing, the proof cycle). Used by the worker wiring
 * (src/temporal/worker.ts), the devnet and the tests, so all of them build the activities the same way.
 */
import type { Address, Hex } from 'viem';
import { createChainRegistry, type ChainEntry, type ChainRegistry } from '../chain/registry.js';
import type { ChainConfig, Config } from '../config.js';
import type { Kek } from '../identity/provider-keys.js';
import { createSponsor, type Sponsor } from '../identity/sponsor.js';
import { createLedgerClient, type LedgerClient } from '../ledger/index.js';
import { resetTolerantFetch } from '../net/fetch.js';

export interface WorkerActivityDeps {
  ledger: LedgerClient;
  sponsor?: Sponsor;
  chains: ChainRegistry;
  relayerPrivateKey?: Hex;
  /** validator i of the on-chain set at validatorUrls[i] (the proof cycle's quorum rounds) */
  validatorUrls: string[];
  /** secret: the Ed25519 seed (hex) the quorum rounds sign their requests to the validators with */
  validatorClientSeed?: string;
  /** key-encryption keys of provider-signing identities (PROVIDER_KEKS) */
  providerKeks: Kek[];
}

export function workerActivityDeps(config: Config, opts: { ledgerPollMs?: number } = {}): WorkerActivityDeps {
  return {
    ledger: createLedgerClient({ url: config.ledgerUrl, pollIntervalMs: opts.ledgerPollMs ?? 25, fetch: resetTolerantFetch }),
    sponsor: config.sponsorKey ? createSponsor(config.sponsorKey) : undefined,
    chains: chainRegistryOf(config.chains),
    relayerPrivateKey: config.relayerPrivateKey,
    validatorUrls: config.validatorUrls,
    validatorClientSeed: config.validatorClientSeed,
    providerKeks: config.provider.keks,
  };
}

/**
 * The registry of the configured chains: each CHAINS entry as parsed, every field passed on (confirmations,
 * logRangeBlocks, contracts, and whatever is added next), only the contract addresses typed as addresses.
 */
export function chainRegistryOf(chains: readonly ChainConfig[]): ChainRegistry {
  return createChainRegistry(
    chains.map((c): ChainEntry => {
      const { contracts, ...rest } = c;
      return {
        ...rest,
        ...(contracts ? { contracts: { proofAnchor: contracts.proofAnchor as Address, accountFactory: contracts.accountFactory as Address } } : {}),
      };
    }),
  );
}
