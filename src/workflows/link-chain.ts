/**
 * linkChainWorkflow (`identity-<id>-link-<chain>`): deploys an active identity's AbstractAccount on one more chain,
 * at the address it has on its other chains (the AccountFactory's CREATE2 address of the ADI URL).
 *
 *   checking_address   the factory's address for the ADI on the new chain; a factory that would put the account
 *                      at another address than the identity's is a configuration fault: nothing is deployed
 *   deploying_account  the account, through the same idempotent activity provisioning uses (records the row)
 *   done               the `identity.chain_linked` event
 *
 * Orchestration only. Transient faults are retried with backoff; a permanent one (chain not configured, another
 * address) takes the chain off the identity's requested chains with an `identity.chain_link_failed` event, and
 * the workflow fails so it stands out in the Temporal UI (its id can then be used again by a new request).
 */
import { ApplicationFailure, proxyActivities, type RetryPolicy, upsertSearchAttributes } from '@temporalio/workflow';
import type { ChainActivities } from '../activities/chain.js';
import type { ChainLinkActivities } from '../activities/chain-link.js';
import { NON_RETRYABLE_CHAIN_ERRORS } from '../protocol/failures.js';
import { innermostFailure } from './failure.js';
import { StageKey } from './search-attributes.js';

export interface LinkChainInput {
  identityId: string;
  orgId: string;
  adiUrl: string;
  chain: string;
  /** the identity's account address on its other chains; null when it has none yet */
  expectedAddress: string | null;
}

export interface LinkChainResult {
  identityId: string;
  chain: string;
  chainId: string;
  address: string;
  deploymentTx: string | null;
}

const retry: RetryPolicy = {
  initialInterval: '200 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '10 seconds',
  nonRetryableErrorTypes: [...NON_RETRYABLE_CHAIN_ERRORS],
};

const chainActs = proxyActivities<ChainActivities>({
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '15 seconds',
  scheduleToCloseTimeout: '15 minutes',
  retry,
});
const linkActs = proxyActivities<ChainLinkActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '15 minutes',
  retry: { ...retry, maximumInterval: '5 seconds' },
});

export async function linkChainWorkflow(input: LinkChainInput): Promise<LinkChainResult> {
  const step = (stage: string) => upsertSearchAttributes([{ key: StageKey, value: stage }]);
  try {
    step('checking_address');
    const address = await linkActs.abstractAccountAddress({ chain: input.chain, adiUrl: input.adiUrl });
    if (input.expectedAddress && address.toLowerCase() !== input.expectedAddress.toLowerCase()) {
      throw ApplicationFailure.nonRetryable(
        `the AccountFactory of ${input.chain} would deploy the account at ${address}, not at the identity's ${input.expectedAddress}: its system contracts differ from the identity's other chains`,
        'ChainNotConfigured',
      );
    }
    step('deploying_account');
    const a = await chainActs.ensureAbstractAccount({ identityId: input.identityId, adiUrl: input.adiUrl, chain: input.chain });
    await linkActs.recordChainLinked(input.identityId, input.chain);
    step('done');
    return { identityId: input.identityId, chain: a.chain, chainId: a.chainId, address: a.address, deploymentTx: a.deploymentTx };
  } catch (err) {
    const message = innermostFailure(err).message || 'linking failed';
    step('failed');
    await linkActs.markChainLinkFailed(input.identityId, input.chain, message);
    throw ApplicationFailure.nonRetryable(`linking ${input.chain} failed: ${message}`, 'ChainLinkFailed');
  }
}
