/** Client-side handles on the credits workflow (`credits-<purchase id>`): its id, its start, its result. */
import type { Client } from '@temporalio/client';
import { creditsWorkflow, type CreditsWorkflowInput, type CreditsWorkflowResult } from '../workflows/credits.js';
import { IdentityIdKey, OrgIdKey, StageKey } from '../workflows/search-attributes.js';
import { startOrCompensate, type Compensation } from './start.js';

export type { CreditsWorkflowInput, CreditsWorkflowResult };

export const creditsWorkflowId = (purchaseId: string) => `credits-${purchaseId}`;

/** Start `credits-<id>` for a purchase charged to the grant; `compensate` gives the charge back when it did not start. */
export async function startCreditsWorkflow(client: Client, taskQueue: string, input: CreditsWorkflowInput, compensate: Compensation): Promise<void> {
  const searchAttributes = [
    { key: OrgIdKey, value: input.orgId },
    { key: IdentityIdKey, value: input.identityId },
    { key: StageKey, value: 'buying_credits' },
  ];
  await startOrCompensate(client, creditsWorkflow, { workflowId: creditsWorkflowId(input.purchaseId), taskQueue, input, searchAttributes }, compensate);
}

/**
 * The purchase's result within `waitMs`: the workflow's result, its failure (thrown: a WorkflowFailedError), or
 * undefined when it is still running.
 */
export async function creditsResult(client: Client, purchaseId: string, waitMs: number): Promise<CreditsWorkflowResult | undefined> {
  const handle = client.workflow.getHandle<typeof creditsWorkflow>(creditsWorkflowId(purchaseId));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), waitMs);
  });
  try {
    return await Promise.race([handle.result(), late]);
  } finally {
    clearTimeout(timer);
  }
}
