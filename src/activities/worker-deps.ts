/**
 * The ledger and chain dependencies of a worker, built from config: the ledger client, the sponsor key, the
 * chain registry (with the system contract addresses), the relayer key and the validators' URLs. Used by src/bin/worker.ts, the devnet
 * and the tests, so all three wire provisioning the same way.
 */
import type { Address, Hex } from 'viem';
import { createChainRegistry, type ChainEntry, type ChainRegistry } from '../chain/registry.js';
import { ConfigError, type ChainConfig, type Config } from '../config.js';
import { createSponsor, type Sponsor } from '../identity/sponsor.js';
import { createLedgerClient, type LedgerClient } from '../ledger/index.js';
import { resetTolerantFetch } from '../net/fetch.js';

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
    chains: chainRegistryOf(config.chains),
    relayerPrivateKey: config.relayerPrivateKey,
    validatorUrls: config.validatorUrls,
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

/**
 * What a worker process lacks to run every activity on its task queue, one entry per variable. All workflows share
 * one task queue, so a worker without, say, the sponsor key still picks up identity workflows and its activities
 * fail forever ("needs ledger and sponsor, which this worker was started without") while identities sit in
 * `creating`. `npm run worker` refuses to start with these; the programmatic API (createActivities) still allows
 * partial workers, which tests use for housekeeping-only runs. LEDGER_URL must be set explicitly: its default is
 * the devnet's ledger simulator. With `ownProcess` (npm run worker) DATABASE_URL is required as well.
 */
export function workerDependencyProblems(
  config: Config,
  env: Record<string, string | undefined> = process.env,
  opts: { ownProcess?: boolean } = {},
): { variable: string; message: string }[] {
  const problems: { variable: string; message: string }[] = [];
  // A worker in its own process cannot share the API's embedded PGlite (each process would open its own copy and
  // see only its own rows); only the devnet, which runs the worker inside the API's process, may go without.
  if (opts.ownProcess && !config.databaseUrl) problems.push({ variable: 'DATABASE_URL', message: "not set: a worker process needs the Postgres database the API uses (embedded PGlite cannot be shared between processes; only the devnet, API and worker in one process, runs without it)" });
  if (!env.LEDGER_URL) problems.push({ variable: 'LEDGER_URL', message: `not set (the default ${config.ledgerUrl} is the devnet's ledger simulator): the Accumulate v3 endpoint identities and transactions use` });
  if (!config.sponsorKey) problems.push({ variable: 'SPONSOR_KEY', message: 'not set: the ledger key that creates and funds identities (without it identities stay in creating)' });
  if (!config.relayerPrivateKey) problems.push({ variable: 'RELAYER_PRIVATE_KEY', message: 'not set: the EVM key paying gas for account deployments and proof transactions' });
  if (config.validatorUrls.length === 0) problems.push({ variable: 'VALIDATOR_URLS', message: 'empty: the validator nodes that attest every transaction' });
  const bare = config.chains.filter((c) => !c.contracts).map((c) => c.name);
  if (!env.CHAINS) problems.push({ variable: 'CHAINS', message: 'not set (the default is the devnet chains, whose contracts only npm start deploys): a JSON array of chains with contracts {proofAnchor, accountFactory}' });
  else if (bare.length) problems.push({ variable: 'CHAINS', message: `no contracts {proofAnchor, accountFactory} for ${bare.join(', ')}` });
  return problems;
}

/**
 * Throws a ConfigError naming every variable the worker lacks (see workerDependencyProblems). For `npm run worker`,
 * a process of its own: DATABASE_URL is required too (`ownProcess: false` for a worker sharing its process's database).
 */
export function assertWorkerDependencies(
  config: Config,
  env: Record<string, string | undefined> = process.env,
  opts: { ownProcess?: boolean } = { ownProcess: true },
): void {
  const problems = workerDependencyProblems(config, env, opts);
  if (problems.length) throw new ConfigError(problems, 'The worker cannot start: its activities need settings that are missing');
}
