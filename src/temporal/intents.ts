/** Client-side handles on the intent workflow (`intent-<id>`): its id, its start, the signature Update. */
import type { Client } from '@temporalio/client';
import { intentWorkflow, submitSignatureUpdate, type IntentWorkflowInput, type SubmitSignatureArgs, type SubmitSignatureResult } from '../workflows/intent.js';
import { IdentityIdKey, IntentIdKey, OrgIdKey, StageKey } from '../workflows/search-attributes.js';
import { startOrCompensate, type Compensation } from './start.js';

export type { IntentWorkflowInput, SubmitSignatureArgs, SubmitSignatureResult };

export const intentWorkflowId = (intentId: string) => `intent-${intentId}`;

/** Start `intent-<id>` for a prepared intent row; `compensate` undoes the row when the workflow did not start. */
export async function startIntentWorkflow(client: Client, taskQueue: string, input: IntentWorkflowInput, compensate: Compensation): Promise<void> {
  const searchAttributes = [
    { key: OrgIdKey, value: input.orgId },
    { key: IdentityIdKey, value: input.identityId },
    { key: IntentIdKey, value: input.intentId },
    { key: StageKey, value: 'signing_required' },
  ];
  await startOrCompensate(client, intentWorkflow, { workflowId: intentWorkflowId(input.intentId), taskQueue, input, searchAttributes }, compensate);
}

/** The signature Update: verified by the workflow, then submitted to the ledger. */
export async function submitIntentSignature(client: Client, intentId: string, args: SubmitSignatureArgs): Promise<SubmitSignatureResult> {
  return client.workflow.getHandle(intentWorkflowId(intentId)).executeUpdate(submitSignatureUpdate, { args: [args] });
}
