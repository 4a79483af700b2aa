/** Client-side handles on the governance workflow (`governance-<id>`): its id, its start and its Update. */
import type { Client } from '@temporalio/client';
import { governanceWorkflow, submitGovernanceSignatureUpdate, type GovernanceSignatureArgs, type GovernanceWorkflowInput } from '../workflows/governance.js';
import { OrgIdKey, StageKey } from '../workflows/search-attributes.js';
import { startOrCompensate, type Compensation } from './start.js';

export type { GovernanceSignatureArgs, GovernanceWorkflowInput };

export const governanceWorkflowId = (opId: string) => `governance-${opId}`;

/** Start `governance-<id>` for a prepared operation row; `compensate` undoes the row when the workflow did not start. */
export async function startGovernanceWorkflow(client: Client, taskQueue: string, input: GovernanceWorkflowInput, compensate: Compensation): Promise<void> {
  const searchAttributes = [
    { key: OrgIdKey, value: input.orgId },
    { key: StageKey, value: 'signing_required' },
  ];
  await startOrCompensate(client, governanceWorkflow, { workflowId: governanceWorkflowId(input.opId), taskQueue, input, searchAttributes }, compensate);
}

/** The initiator's signature, an Update: submitted to the ledger by the workflow, which answers with the progress. */
export async function submitGovernanceSignature(client: Client, opId: string, args: GovernanceSignatureArgs) {
  return client.workflow.getHandle(governanceWorkflowId(opId)).executeUpdate(submitGovernanceSignatureUpdate, { args: [args] });
}
