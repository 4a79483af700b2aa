/** Client-side handle on the intent workflow's fresh-signing-data Update (POST /v1/transaction/{id}/signing-data). */
import type { Client } from '@temporalio/client';
import type { RefreshedSigningData } from '../activities/cycle/signing-data.js';
import { refreshSigningDataUpdate } from '../workflows/intent.js';
import { intentWorkflowId } from './intents.js';

export type { RefreshedSigningData };

/** Prepare the unsigned intent's transaction again (new timestamp, current page version); the workflow takes its hash. */
export async function refreshIntentSigningData(client: Client, intentId: string): Promise<RefreshedSigningData> {
  return client.workflow.getHandle(intentWorkflowId(intentId)).executeUpdate(refreshSigningDataUpdate);
}
