/**
 * Starting the workflow of a resource whose row is already written, and undoing the row only when the workflow did
 * not start. A start whose answer was lost (a deadline, a dropped connection after the server took it) throws just
 * like a refusal; undoing then would leave a running workflow without its row. So a failed start asks Temporal
 * whether the workflow exists before compensating.
 */
import type { Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';

/** Undoes what was written for a workflow that did not start; it throws the error the caller should see. */
export type Compensation = (err: unknown) => Promise<never>;

/** True when a workflow with this id exists (running or not); false when Temporal says no or cannot be asked. */
export async function workflowExists(client: Client, workflowId: string): Promise<boolean> {
  return client.workflow
    .getHandle(workflowId)
    .describe()
    .then(() => true)
    .catch(() => false);
}

/** What a resource's workflow is started with: its id (carrying the resource id), its one input, its search attributes. */
export interface ResourceStart<I> {
  workflowId: string;
  taskQueue: string;
  input: I;
  searchAttributes: SearchAttributePair[];
  /**
   * Which closed runs of the id a new start may follow: none by default (a resource's workflow runs once);
   * 'ALLOW_DUPLICATE_FAILED_ONLY' for work a client may ask again after it failed.
   */
  reusePolicy?: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE_FAILED_ONLY';
}

/**
 * Start a resource's workflow once: an id that was ever used is refused (with 'ALLOW_DUPLICATE_FAILED_ONLY', one
 * whose last run failed, timed out, was terminated or cancelled is not), so a retried start never runs it twice.
 */
export async function startResourceWorkflow<I>(client: Client, workflow: (input: I) => Promise<unknown>, s: ResourceStart<I>): Promise<void> {
  await client.workflow.start(workflow, {
    workflowId: s.workflowId,
    taskQueue: s.taskQueue,
    args: [s.input],
    workflowIdReusePolicy: s.reusePolicy ?? 'REJECT_DUPLICATE',
    typedSearchAttributes: s.searchAttributes,
  });
}

/**
 * Start a resource's workflow; when the start throws, the workflow counts as started if Temporal knows its id (the
 * answer was lost), and `compensate` runs (and throws) otherwise.
 */
export async function startOrCompensate<I>(
  client: Client,
  workflow: (input: I) => Promise<unknown>,
  s: ResourceStart<I>,
  compensate: Compensation,
): Promise<void> {
  try {
    await startResourceWorkflow(client, workflow, s);
  } catch (err) {
    if (await workflowExists(client, s.workflowId)) return;
    await compensate(err);
    throw err;
  }
}
