/** Client side of the Signal `ledgerChanged` (src/workflows/ledger-changed.ts). */
import type { Client } from '@temporalio/client';
import { ledgerChangedSignal } from '../workflows/ledger-changed.js';

/** Tell a workflow following a ledger transaction to look at it now (a co-signature landed); a closed one is ignored. */
export async function notifyLedgerChanged(client: Client, workflowId: string): Promise<void> {
  await client.workflow
    .getHandle(workflowId)
    .signal(ledgerChangedSignal)
    .catch(() => undefined);
}
