/**
 * `intent-expiry-<task queue>`: the one long-running workflow that expires unsigned intents. An intent's own
 * workflow starts with its signature, so one never signed has no timer of its own; this sweep looks at the intents
 * past expires_at without a workflow (expireDueIntents), and sleeps until the next one is due, at most
 * POLL_MS (intents prepared meanwhile are seen then): an intent expires on time, or within POLL_MS of it when its
 * time to live is shorter than POLL_MS. An intent the ledger turns out to hold signed is started
 * instead. Continues as new to keep its history short.
 */
import { continueAsNew, proxyLocalActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { IntentActivities } from '../activities/intent.js';
import { notifyWebhookDispatcher } from './webhook-dispatcher.js';

export const intentExpiryWorkflowId = (taskQueue: string) => `intent-expiry-${taskQueue}`;

const { expireDueIntents } = proxyLocalActivities<IntentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

const ROUNDS_PER_RUN = 500;
const BATCH = 100;
/** the longest sleep between two looks */
const POLL_MS = 5000;

export async function intentExpiryWorkflow(): Promise<void> {
  for (let round = 0; round < ROUNDS_PER_RUN && !workflowInfo().continueAsNewSuggested; round++) {
    const r = await expireDueIntents({ limit: BATCH });
    if (r.expired > 0) await notifyWebhookDispatcher();
    if (r.more) continue;
    await sleep(Math.max(50, Math.min(r.nextDueInMs ?? POLL_MS, POLL_MS)));
  }
  await continueAsNew<typeof intentExpiryWorkflow>();
}
