/**
 * `webhook-delivery-<delivery id>`: delivers one event to one endpoint. Attempts at once, then after each delay of
 * the retry schedule (worker setting; ≈3 days by default) until a 2xx, the schedule runs out or the endpoint is
 * switched off. Every attempt is an activity that signs, posts and records itself; the webhook-id (the event id)
 * is the same on every attempt. The `retryNow` signal (redeliver) cuts the current wait short.
 */
import { condition, defineSignal, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { AttemptResult, WebhookActivities } from '../activities/webhooks.js';
import { StageKey } from './search-attributes.js';

export const retryNowSignal = defineSignal('retryNow');

export const deliveryWorkflowId = (deliveryId: string) => `webhook-delivery-${deliveryId}`;

export interface WebhookDeliveryInput {
  deliveryId: string;
}

export interface WebhookDeliveryResult {
  status: 'succeeded' | 'failed' | 'skipped';
  attempts: number;
  last: AttemptResult | null;
}

const { startDelivery } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
});

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  let retryNow = false;
  setHandler(retryNowSignal, () => {
    retryNow = true;
  });
  const plan = await startDelivery(input.deliveryId);
  if (!plan.proceed) return { status: 'skipped', attempts: 0, last: null };

  // The attempt activity may not outlive its HTTP timeout by much; infrastructure errors (database) are retried
  // by Temporal, HTTP failures are results, not errors.
  const { attemptDelivery } = proxyActivities<WebhookActivities>({
    startToCloseTimeout: plan.timeoutMs + 30_000,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
  });

  let attempts = 0;
  for (let retryIndex = 0; ; retryIndex++) {
    retryNow = false;
    upsertSearchAttributes([{ key: StageKey, value: retryIndex === 0 ? 'delivering' : `retry-${retryIndex}` }]);
    const last = await attemptDelivery({ deliveryId: input.deliveryId, retryIndex });
    attempts++;
    if (last.outcome === 'retry' && last.nextDelayMs !== null) {
      upsertSearchAttributes([{ key: StageKey, value: 'waiting' }]);
      await condition(() => retryNow, last.nextDelayMs);
      continue;
    }
    // a redeliver signalled while this attempt ran: attempt again rather than finish
    if (retryNow) continue;
    upsertSearchAttributes([{ key: StageKey, value: last.outcome === 'succeeded' ? 'delivered' : 'failed' }]);
    return { status: last.outcome === 'succeeded' ? 'succeeded' : 'failed', attempts, last };
  }
}
