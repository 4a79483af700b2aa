/**
 * providerSignWorkflow (`provider-sign-<kind>-<id>`): one signature by the key the gateway holds for a
 * provider-signing identity, over what a prepared intent, governance operation or sign request stored. The API
 * submits the signature through the usual path. Its input and result hold ids, the signature and the public key only.
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { ProviderActivities, ProviderSignInput, ProviderSignResult } from '../activities/provider.js';

const acts = proxyActivities<ProviderActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '2 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['ProviderKeyUnavailable'] },
});

export async function providerSignWorkflow(input: ProviderSignInput): Promise<ProviderSignResult> {
  return acts.providerSign(input);
}

const store = proxyActivities<ProviderActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

/** Operation states after which the key page will not change any more by this operation. */
const ENDED = ['rejected', 'expired', 'failed', 'missing'];

/**
 * providerKeySwitchWorkflow (`provider-key-switch-<identity id>`): once the governance operation that puts the
 * client's key on the page in place of the held key has executed, the held key is destroyed and the identity becomes
 * external-signing. If the operation ends otherwise, the held key stays (the page still has it).
 */
export async function providerKeySwitchWorkflow(input: { identityId: string; opId: string; publicKey: string }): Promise<{ destroyed: boolean }> {
  for (;;) {
    const status = await store.keySwitchStatus({ opId: input.opId });
    if (status === 'executed') {
      await store.retireProviderKey({ identityId: input.identityId, publicKey: input.publicKey });
      return { destroyed: true };
    }
    if (ENDED.includes(status)) return { destroyed: false };
    await sleep('2 seconds');
  }
}
