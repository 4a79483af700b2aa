/**
 * The Signal `ledgerChanged`: a co-signature landed on the ledger transaction a workflow follows (a governance
 * operation's, an intent's), so it looks at the ledger now instead of at its next look.
 */
import { defineSignal } from '@temporalio/workflow';

export const ledgerChangedSignal = defineSignal('ledgerChanged');
