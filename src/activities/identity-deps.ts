/**
 * The ledger and chain dependencies of a worker, built from config: the ledger client, the sponsor key, the
 * chain registry (with the system contract addresses), the relayer key and the validators' URLs. Used by src/bin/worker.ts, the devnet
 * and the tests, so all three wire provisioning the same way.
 */
import type { Hex } from 'viem';
import { createChainRegistry, type ChainRegistry } from '../chain/registry.js';
import type { Config } from '../config.js';
import { createSponsor, type Sponsor } from '../identity/sponsor.js';
import { createLedgerClient, type FetchLike, type LedgerClient } from '../ledger/index.js';

/**
 * fetch that retries a request once when the connection was reset before an answer arrived (a keep-alive socket
 * closed by the server just as it was reused). Safe for every ledger call: queries are reads, and resubmitting
 * an identical envelope is idempotent on the ledger (same transaction hash).
 */
export const resetTolerantFetch: FetchLike = async (input, init) => {
  try {
    return await fetch(input, init);
  } catch (e) {
    const code = ((e as { cause?: { code?: string } }).cause?.code ?? '') as string;
    if (!['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(code) || init.signal?.aborted) throw e;
    return fetch(input, init);
  }
};

export interface IdentityActivityDeps {
  ledger: LedgerClient;
  sponsor?: Sponsor;
  chains: ChainRegistry;
  relayerPrivateKey?: Hex;
  /** validator i of the on-chain set at validatorUrls[i] (the proof cycle's quorum rounds) */
  validatorUrls: string[];
}

export function identityActivityDeps(config: Config, opts: { ledgerPollMs?: number } = {}): IdentityActivityDeps {
  return {
    ledger: createLedgerClient({ url: config.ledgerUrl, pollIntervalMs: opts.ledgerPollMs ?? 25, fetch: resetTolerantFetch }),
    sponsor: config.sponsorKey ? createSponsor(config.sponsorKey) : undefined,
    chains: createChainRegistry(
      config.chains.map((c) => ({
        name: c.name,
        chainId: c.chainId,
        rpcUrl: c.rpcUrl,
        confirmations: c.confirmations,
        contracts: c.contracts ? { proofAnchor: c.contracts.proofAnchor as Hex, accountFactory: c.contracts.accountFactory as Hex } : undefined,
      })),
    ),
    relayerPrivateKey: config.relayerPrivateKey,
    validatorUrls: config.validatorUrls,
  };
}
