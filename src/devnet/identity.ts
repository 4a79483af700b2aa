/**
 * What identity provisioning needs on the devnet: a funded sponsor on the ledger (key kept under `<dataDir>/`),
 * the system contracts on every local chain, and a relayer (default: anvil's first development account).
 * Secrets from the environment (SPONSOR_KEY, RELAYER_PRIVATE_KEY) and configured contract addresses win.
 */
import type { Hex } from 'viem';
import type { ValidatorRegistration } from '../chain/deploy.js';
import type { ChainConfig, Config } from '../config.js';
import { createLedgerClient } from '../ledger/index.js';
import type { Logger } from '../log.js';
import { ANVIL_DEV_KEY_0, deployDevnetContracts } from './contracts.js';
import { ensureDevnetSponsor } from './sponsor.js';

export interface IdentityDevnetParts {
  sponsorKey: string;
  relayerPrivateKey: Hex;
  chains: ChainConfig[];
}

export async function setupIdentityDevnet(
  config: Pick<Config, 'dataDir' | 'ledgerUrl' | 'chains' | 'sponsorKey' | 'relayerPrivateKey'>,
  opts: { logger?: Logger; validators?: readonly ValidatorRegistration[]; localChains?: readonly string[] } = {},
): Promise<IdentityDevnetParts> {
  const ledger = createLedgerClient({ url: config.ledgerUrl });
  const { sponsor, sponsorKey } = await ensureDevnetSponsor(ledger, { dataDir: config.dataDir, sponsorKey: config.sponsorKey });
  opts.logger?.info('ledger sponsor ready', { lite_identity: sponsor.liteIdentity });
  const relayerPrivateKey = config.relayerPrivateKey ?? ANVIL_DEV_KEY_0;
  const local = config.chains.filter((c) => !c.contracts && (!opts.localChains || opts.localChains.includes(c.name)));
  let chains = config.chains;
  if (local.length) {
    const deployed = await deployDevnetContracts({ chains: local, deployerKey: ANVIL_DEV_KEY_0, validators: opts.validators });
    chains = config.chains.map((c) => deployed.chains.find((d) => d.name === c.name) ?? c);
    opts.logger?.info('system contracts deployed', { ...deployed.contracts, chains: local.map((c) => c.name) });
  }
  return { sponsorKey, relayerPrivateKey, chains };
}
