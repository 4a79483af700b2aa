/** Every activity the worker registers, built from injected dependencies. */
import type { WebhookSettings } from '../config.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../log.js';
import type { Hex } from 'viem';
import type { ChainRegistry } from '../chain/registry.js';
import type { Sponsor } from '../identity/sponsor.js';
import type { LedgerClient } from '../ledger/index.js';
import { createChainAccess } from './chain-access.js';
import { createChainActivities } from './chain.js';
import { createCreditActivities } from './credits.js';
import { createChainLinkActivities } from './chain-link.js';
import { createGovernanceActivities } from './governance.js';
import { createGovernanceSigningDataActivities } from './governance-signing-data.js';
import { createIntentActivities, INTENT_ACTIVITY_NAMES, type IntentActivities, type SendExecution } from './intent.js';
import { createIdentityStoreActivities } from './identity-store.js';
import { createLedgerActivities } from './ledger.js';
import { createMaintenanceActivities } from './maintenance.js';
import { createPendingActivities } from './pending.js';
import { createProviderActivities } from './provider.js';
import { joinBatcher } from '../temporal/batches.js';
import { intentWorkflowExists, startIntentWorkflow } from '../temporal/intents.js';
import type { Kek } from '../identity/provider-keys.js';
import { createWebhookActivities } from './webhooks.js';

export interface ActivityDeps {
  db: Db;
  /** retry schedule, disable threshold, timeouts (config.webhooks); production defaults when absent */
  webhooks?: WebhookSettings;
  logger?: Logger;
  /** Accumulate client (identity provisioning; absent in tests that run only housekeeping) */
  ledger?: LedgerClient;
  /** the ledger key that creates and funds ADIs */
  sponsor?: Sponsor;
  /** chain registry with system contract addresses */
  chains?: ChainRegistry;
  /** secp256k1 key paying gas on every chain */
  relayerPrivateKey?: Hex;
  /** validator i of the on-chain set at validatorUrls[i] (proof cycle) */
  validatorUrls?: string[];
  /** secret: the Ed25519 seed (hex) the proof cycle signs its requests to the validators with */
  validatorClientSeed?: string;
  /** how a leg's executeGovernanceProofDirect is sent (tests inject a tampering executor) */
  sendExecution?: SendExecution;
  /** key-encryption keys of provider-signing identities (PROVIDER_KEKS; none: provider signing refuses) */
  providerKeks?: Kek[];
}

export function createActivities(deps: ActivityDeps) {
  const ledger = deps.ledger && deps.sponsor ? createLedgerActivities({ db: deps.db, ledger: deps.ledger, sponsor: deps.sponsor }) : undefined;
  const credits = deps.ledger && deps.sponsor ? createCreditActivities({ db: deps.db, ledger: deps.ledger, sponsor: deps.sponsor }) : undefined;
  const cosign = deps.ledger
    ? {
        ...createGovernanceActivities({ db: deps.db, ledger: deps.ledger }),
        ...createGovernanceSigningDataActivities({ db: deps.db, ledger: deps.ledger }),
        ...createPendingActivities({ db: deps.db, ledger: deps.ledger }),
      }
    : undefined;
  const access = deps.chains ? createChainAccess({ chains: deps.chains, relayerPrivateKey: deps.relayerPrivateKey }) : undefined;
  const chain = deps.chains && access ? createChainActivities({ db: deps.db, chains: deps.chains, access }) : undefined;
  const chainLink = access ? createChainLinkActivities({ db: deps.db, access }) : undefined;
  const intent =
    deps.ledger && access
      ? createIntentActivities(
          {
            db: deps.db,
            ledger: deps.ledger,
            access,
            validatorUrls: deps.validatorUrls ?? [],
            validatorClientSeed: deps.validatorClientSeed,
            sendExecution: deps.sendExecution,
            logger: deps.logger,
          },
          { joinBatcher, intents: { exists: intentWorkflowExists, start: startIntentWorkflow } },
        )
      : undefined;
  return {
    ...createMaintenanceActivities(deps.db),
    ...createWebhookActivities(deps.db, deps.webhooks, deps.logger),
    ...createIdentityStoreActivities(deps.db),
    ...createProviderActivities({ db: deps.db, keks: deps.providerKeks ?? [] }),
    ...(ledger ??
      missing<ReturnType<typeof createLedgerActivities>>('ledger and sponsor', [
        'ensureAdi',
        'ensureCredits',
        'ensureDataAccount',
        'ensureTokenAccount',
        'ensureClientKey',
        'readCreditBalance',
      ])),
    ...(cosign ??
      missing<
        ReturnType<typeof createGovernanceActivities> & ReturnType<typeof createGovernanceSigningDataActivities> & ReturnType<typeof createPendingActivities>
      >('ledger', [
        'submitGovernanceSignature',
        'expireGovernanceOp',
        'refreshGovernanceOp',
        'refreshGovernanceSigningData',
        'organizationsToScan',
        'scanOrgPending',
      ])),
    ...(credits ?? missing<ReturnType<typeof createCreditActivities>>('ledger and sponsor', ['buyCredits', 'refundCreditPurchase'])),
    ...(chain ?? missing<ReturnType<typeof createChainActivities>>('chains', ['ensureAbstractAccount'])),
    ...(chainLink ?? missing<ReturnType<typeof createChainLinkActivities>>('chains', ['abstractAccountAddress', 'recordChainLinked', 'markChainLinkFailed'])),
    ...(intent ?? missing<IntentActivities>('ledger and chains', INTENT_ACTIVITY_NAMES)),
  };
}
export type Activities = ReturnType<typeof createActivities>;

/** Stand-ins that fail clearly (and retry, so a worker restarted with the dependency picks the work up). */
function missing<T>(what: string, names: string[]): T {
  return Object.fromEntries(
    names.map((n) => [
      n,
      async () => {
        throw new Error(`activity ${n} needs ${what}, which this worker was started without`);
      },
    ]),
  ) as T;
}
