/** Client side of the Signal `ledgerChanged` (src/workflows/ledger-changed.ts). */
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import { openGovernanceOpsByTxHash, submittedIntentIdsByTxHash } from '../db/governance.js';
import { ledgerChangedSignal } from '../workflows/ledger-changed.js';
import { governanceWorkflowId } from './governance.js';
import { intentWorkflowId } from './intents.js';

/** Tell a workflow following a ledger transaction to look at it now (a co-signature landed); a closed one is ignored. */
async function notifyLedgerChanged(client: Client, workflowId: string): Promise<void> {
  await client.workflow
    .getHandle(workflowId)
    .signal(ledgerChangedSignal)
    .catch(() => undefined);
}

/**
 * Tell every workflow that follows the ledger transaction `txHash` to look at it now: the open governance operations
 * of `orgId` on it, and the intents submitted with it, of any organization (a panel's seat may belong to another
 * one; the Signal only makes the workflow look). Returns those intents' ids.
 */
export async function notifyTransactionFollowers(db: Db, client: Client, orgId: string, txHash: string): Promise<string[]> {
  const intents = await submittedIntentIdsByTxHash(db, txHash);
  const following = [...(await openGovernanceOpsByTxHash(db, orgId, txHash)).map((op) => governanceWorkflowId(op.id)), ...intents.map(intentWorkflowId)];
  for (const workflowId of following) await notifyLedgerChanged(client, workflowId);
  return intents;
}
