/**
 * Client-side handles on the fresh-signing-data Updates of the intent workflow (POST /v1/transaction/{id}/signing-data)
 * and the governance workflow (POST /v1/governance/{id}/signing-data).
 */
import type { Client } from '@temporalio/client';
import type { RefreshedSigningData } from '../activities/cycle/signing-data.js';
import { refreshSigningDataUpdate } from '../workflows/intent.js';
import { refreshGovernanceSigningDataUpdate } from '../workflows/governance.js';
import { governanceWorkflowId } from './governance.js';
import { intentWorkflowId } from './intents.js';

export type { RefreshedSigningData };

/** Prepare the unsigned intent's transaction again (new timestamp, current page version); the workflow takes its hash. */
export async function refreshIntentSigningData(client: Client, intentId: string): Promise<RefreshedSigningData> {
  return client.workflow.getHandle(intentWorkflowId(intentId)).executeUpdate(refreshSigningDataUpdate);
}

/** Prepare the unsigned governance operation's transaction again; the operation row holds the new signing data. */
export async function refreshGovernanceSigningData(client: Client, opId: string): Promise<{ hashToSign: string; txHash: string; keyPageVersion: number }> {
  return client.workflow.getHandle(governanceWorkflowId(opId)).executeUpdate(refreshGovernanceSigningDataUpdate);
}
