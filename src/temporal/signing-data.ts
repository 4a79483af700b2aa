/** Client-side handle on the fresh-signing-data Update of the governance workflow (POST /v1/governance/{id}/signing-data). */
import type { Client } from '@temporalio/client';
import { refreshGovernanceSigningDataUpdate } from '../workflows/governance.js';
import { governanceWorkflowId } from './governance.js';

/** Prepare the unsigned governance operation's transaction again; the operation row holds the new signing data. */
export async function refreshGovernanceSigningData(client: Client, opId: string): Promise<{ hashToSign: string; txHash: string; keyPageVersion: number }> {
  return client.workflow.getHandle(governanceWorkflowId(opId)).executeUpdate(refreshGovernanceSigningDataUpdate);
}
