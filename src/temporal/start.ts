/**
 * Starting the workflow of a resource whose row is already written, and undoing the row only when the workflow did
 * not start. A start whose answer was lost (a deadline, a dropped connection after the server took it) throws just
 * like a refusal; undoing then would leave a running workflow without its row. So a failed start asks Temporal
 * whether the workflow exists before compensating.
 */
import type { Client } from '@temporalio/client';

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

/**
 * Run `start`; when it throws, the workflow counts as started if Temporal knows `workflowId` (the answer was lost),
 * and `compensate` runs (and throws) otherwise.
 */
export async function startOrCompensate(client: Client, workflowId: string, start: () => Promise<unknown>, compensate: Compensation): Promise<void> {
  try {
    await start();
  } catch (err) {
    if (await workflowExists(client, workflowId)) return;
    await compensate(err);
    throw err;
  }
}
