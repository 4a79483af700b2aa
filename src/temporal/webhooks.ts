/** Client-side handles on the webhook workflows (API process, worker start-up, tests). */
import { WorkflowIdConflictPolicy, type Client } from '@temporalio/client';
import { OrgIdKey } from '../workflows/search-attributes.js';
import { deliveryWorkflowId, retryNowSignal, webhookDeliveryWorkflow } from '../workflows/webhook-delivery.js';
import { dispatcherWorkflowId, kickSignal, webhookDispatcherWorkflow } from '../workflows/webhook-dispatcher.js';

/** Start the task queue's dispatcher unless it runs already (worker start-up). */
export async function ensureWebhookDispatcher(client: Client, taskQueue: string): Promise<void> {
  await client.workflow.start(webhookDispatcherWorkflow, {
    taskQueue,
    workflowId: dispatcherWorkflowId(taskQueue),
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    args: [],
  });
}

/** Nudge the dispatcher (starting it if needed) after committing events, so delivery starts at once. */
export async function kickWebhookDispatcher(client: Client, taskQueue: string): Promise<void> {
  await client.workflow.signalWithStart(webhookDispatcherWorkflow, {
    taskQueue,
    workflowId: dispatcherWorkflowId(taskQueue),
    signal: kickSignal,
    signalArgs: [],
    args: [],
  });
}

/** Deliver again: cuts a running delivery's wait short, or starts a new run of a finished one. */
export async function restartDelivery(client: Client, taskQueue: string, deliveryId: string, orgId: string): Promise<void> {
  await client.workflow.signalWithStart(webhookDeliveryWorkflow, {
    taskQueue,
    workflowId: deliveryWorkflowId(deliveryId),
    typedSearchAttributes: [{ key: OrgIdKey, value: orgId }],
    signal: retryNowSignal,
    signalArgs: [],
    args: [{ deliveryId }],
  });
}

/** Stop the dispatcher (tests). */
export async function stopWebhookDispatcher(client: Client, taskQueue: string): Promise<void> {
  try {
    await client.workflow.getHandle(dispatcherWorkflowId(taskQueue)).terminate('stopped');
  } catch {
    // not running
  }
}
