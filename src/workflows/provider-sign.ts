/**
 * providerSignWorkflow (`provider-sign-<kind>-<id>`): one signature by the key the gateway holds for a
 * provider-signing identity, over what a prepared intent, governance operation or sign request stored. The API
 * submits the signature through the usual path. Its input and result hold ids, the signature and the public key only.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { ProviderActivities, ProviderSignInput, ProviderSignResult } from '../activities/provider.js';

const acts = proxyActivities<ProviderActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '2 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['ProviderKeyUnavailable'] },
});

export async function providerSignWorkflow(input: ProviderSignInput): Promise<ProviderSignResult> {
  return acts.providerSign(input);
}
