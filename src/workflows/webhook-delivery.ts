/**
 * `webhook-delivery-<delivery id>`: delivers one event to one endpoint. Attempts at once, then after each delay of
 * the retry schedule (worker setting; ≈3 days by default) until a 2xx, the schedule runs out or the endpoint is
 * switched off. Every attempt is an activity that signs, posts and records itself; the webhook-id (the event id)
 * is the same on every attempt. The `retryNow` signal (redeliver) cuts the current wait short. If an activity gives
 * up (its retries exhausted: the database gone for long), the delivery is marked failed rather than left pending.
 */
import { ActivityFailure, condition, defineSignal, proxyActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { AttemptResult, WebhookActivities } from '../activities/webhooks.js';
import { StageKey } from './search-attributes.js';

export const retryNowSignal = defineSignal('retryNow');

export const deliveryWorkflowId = (deliveryId: string) => `webhook-delivery-${deliveryId}`;

/**
 * The task queue of the attempts (the HTTP posts), apart from the gateway's own: a second worker serves it with a
 * bounded number of slots (WEBHOOK_MAX_CONCURRENT_ATTEMPTS, src/temporal/worker.ts), so receivers that are slow or
 * hang cannot take the activity slots the proof cycle needs. The workflow and its other activities stay on `taskQueue`.
 */
export const webhookTaskQueue = (taskQueue: string) => `${taskQueue}-webhooks`;

export interface WebhookDeliveryInput {
  deliveryId: string;
}

export interface WebhookDeliveryResult {
  status: 'succeeded' | 'failed' | 'skipped';
  attempts: number;
  last: AttemptResult | null;
}

const { startDelivery, failDelivery } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
});

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  let retryNow = false;
  setHandler(retryNowSignal, () => {
    retryNow = true;
  });
  // An activity that gave up: record the delivery as failed (redeliver can send it again) and finish. Only on this
  // failure path are commands added, so recorded histories of the normal path replay unchanged.
  const giveUp = async (err: unknown, attempts: number): Promise<WebhookDeliveryResult> => {
    if (!(err instanceof ActivityFailure)) throw err;
    const error = `delivery gave up: ${err.cause?.message ?? err.message}`;
    await failDelivery({ deliveryId: input.deliveryId, error });
    upsertSearchAttributes([{ key: StageKey, value: 'failed' }]);
    return { status: 'failed', attempts, last: null };
  };

  let plan: Awaited<ReturnType<typeof startDelivery>>;
  try {
    plan = await startDelivery(input.deliveryId);
  } catch (err) {
    return giveUp(err, 0);
  }
  if (!plan.proceed) return { status: 'skipped', attempts: 0, last: null };

  // The attempt activity may not outlive its HTTP timeout by much; infrastructure errors (database) are retried
  // by Temporal, HTTP failures are results, not errors. Histories recorded when attempts ran on the workflow's own
  // queue replay unchanged: a scheduled activity is matched by its id and type, not its queue.
  const { attemptDelivery } = proxyActivities<WebhookActivities>({
    taskQueue: webhookTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: plan.timeoutMs + 30_000,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
  });

  let attempts = 0;
  for (let retryIndex = 0; ; retryIndex++) {
    retryNow = false;
    upsertSearchAttributes([{ key: StageKey, value: retryIndex === 0 ? 'delivering' : `retry-${retryIndex}` }]);
    let last: AttemptResult;
    try {
      last = await attemptDelivery({ deliveryId: input.deliveryId, retryIndex });
    } catch (err) {
      return giveUp(err, attempts);
    }
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
