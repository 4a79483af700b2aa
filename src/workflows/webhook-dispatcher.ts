/**
 * `webhook-dispatcher-<task queue>`: the one long-running workflow that turns undispatched events (the outbox
 * filled by recordEvent) into deliveries and starts a `webhook-delivery-<id>` workflow for each. It looks every
 * `WEBHOOK_DISPATCH_INTERVAL_MS` and at once when nudged with the `kick` signal, so nothing recorded is lost to a
 * crash between a flow's commit and the start of its deliveries. Continues as new to keep its history short.
 */
import {
  condition,
  continueAsNew,
  defineSignal,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks.js';
import { OrgIdKey } from './search-attributes.js';
import { deliveryWorkflowId, webhookDeliveryWorkflow } from './webhook-delivery.js';

export const kickSignal = defineSignal('kick');

export const dispatcherWorkflowId = (taskQueue: string) => `webhook-dispatcher-${taskQueue}`;

const { dispatchWebhookEvents, markDeliveriesStarted, purgeWebhookHistory } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

const ROUNDS_PER_RUN = 200;

export async function webhookDispatcherWorkflow(): Promise<void> {
  let kicked = false;
  setHandler(kickSignal, () => {
    kicked = true;
  });
  // retention housekeeping once per run (a run lasts ROUNDS_PER_RUN rounds, ≈ 17 minutes at the default interval)
  await purgeWebhookHistory({});
  for (let round = 0; round < ROUNDS_PER_RUN && !workflowInfo().continueAsNewSuggested; round++) {
    kicked = false;
    const { deliveries, more, pollIntervalMs } = await dispatchWebhookEvents(100);
    await Promise.all(
      deliveries.map(async ({ id: deliveryId, orgId }) => {
        try {
          await startChild(webhookDeliveryWorkflow, {
            workflowId: deliveryWorkflowId(deliveryId),
            args: [{ deliveryId }],
            typedSearchAttributes: [{ key: OrgIdKey, value: orgId }],
            // deliveries outlive this run (continue-as-new) and run for days
            parentClosePolicy: ParentClosePolicy.ABANDON,
          });
        } catch (err) {
          // started by an earlier round that crashed before marking it: fine
          if ((err as Error)?.name !== 'WorkflowExecutionAlreadyStartedError') throw err;
        }
      }),
    );
    await markDeliveriesStarted(deliveries.map((d) => d.id));
    if (!more) await condition(() => kicked, pollIntervalMs);
  }
  await continueAsNew<typeof webhookDispatcherWorkflow>();
}

/**
 * For workflow code that has just recorded an event (through an activity): nudge the dispatcher of this task
 * queue so delivery starts now rather than at its next look. Never fails the caller.
 */
export async function notifyWebhookDispatcher(): Promise<void> {
  try {
    await getExternalWorkflowHandle(dispatcherWorkflowId(workflowInfo().taskQueue)).signal(kickSignal);
  } catch {
    // not running: the worker's start-up (or the next kick from the API) starts it, and it finds the event
  }
}
