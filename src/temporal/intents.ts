/**
 * Client-side handles on the intent workflow (`intent-<id>`). Prepare writes the intent's row only; the workflow is
 * started by the first Update that needs it (the signature, or fresh signing data), in the same request as the
 * Update (Update-with-Start), so an intent never signed costs no workflow. Its input is read from the row.
 */
import { type Client, WithStartWorkflowOperation, WorkflowIdConflictPolicy, WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/client';
import type { IntentRow } from '../db/intents.js';
import { SEND_TOKENS } from '../protocol/intent/transfer.js';
import { storedProofClass } from '../protocol/proof-class.js';
import type { RefreshedSigningData } from '../activities/cycle/signing-data.js';
import {
  intentWorkflow,
  refreshSigningDataUpdate,
  submitSignatureUpdate,
  type IntentWorkflowInput,
  type SubmitSignatureArgs,
  type SubmitSignatureResult,
} from '../workflows/intent.js';
import { intentExpiryWorkflow, intentExpiryWorkflowId } from '../workflows/intent-expiry.js';
import { IdentityIdKey, IntentIdKey, OrgIdKey, StageKey } from '../workflows/search-attributes.js';

export type { IntentWorkflowInput, RefreshedSigningData, SubmitSignatureArgs, SubmitSignatureResult };

export const intentWorkflowId = (intentId: string) => `intent-${intentId}`;

/** What `intent-<id>` starts with, from the intent's row: its chains in leg order with their legs. */
export function intentWorkflowInput(row: IntentRow): IntentWorkflowInput {
  const base = {
    intentId: row.id,
    orgId: row.orgId,
    identityId: row.identityId,
    signerPublicKey: row.signerPublicKey,
    hashToSign: row.prepared.hashToSign,
    expiresAtMs: row.expiresAt.getTime(),
  };
  if (row.intentType === SEND_TOKENS) return { ...base, chains: [], ledgerOnly: true };
  const legs = (row.intent as { legs: { leg_id: string; chain: string }[] }).legs;
  const chains = [...new Set(legs.map((l) => l.chain))];
  return {
    ...base,
    chains: chains.map((chain) => ({ chain, legIds: legs.filter((l) => l.chain === chain).map((l) => l.leg_id) })),
    proofClass: storedProofClass((row.intent as { parts?: string[] }).parts?.[0]),
  };
}

/**
 * Starts `intent-<id>` unless it runs already (then the Update goes to it). Never a second run: an id whose run has
 * ended is refused (WorkflowExecutionAlreadyStartedError), and the caller answers from the row.
 */
function startOperation(taskQueue: string, row: IntentRow) {
  return new WithStartWorkflowOperation(intentWorkflow, {
    workflowId: intentWorkflowId(row.id),
    taskQueue,
    args: [intentWorkflowInput(row)],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    typedSearchAttributes: [
      { key: OrgIdKey, value: row.orgId },
      { key: IdentityIdKey, value: row.identityId },
      { key: IntentIdKey, value: row.id },
      { key: StageKey, value: 'signing_required' },
    ],
  });
}

/** Whether `intent-<id>` was ever started (running or ended); throws when Temporal cannot say. */
export async function intentWorkflowExists(client: Client, intentId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(intentWorkflowId(intentId)).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Start `intent-<id>` for a signed intent the workflow never saw (the ledger took its signature directly). */
export async function startIntentWorkflow(client: Client, taskQueue: string, row: IntentRow): Promise<void> {
  const op = startOperation(taskQueue, row);
  await client.workflow.start(intentWorkflow, op.options);
}

/** The signature Update (starting the workflow if need be): verified by the workflow, then submitted to the ledger. */
export async function submitIntentSignature(client: Client, taskQueue: string, row: IntentRow, args: SubmitSignatureArgs): Promise<SubmitSignatureResult> {
  return client.workflow.executeUpdateWithStart(submitSignatureUpdate, { args: [args], startWorkflowOperation: startOperation(taskQueue, row) });
}

/** Prepare the unsigned intent's transaction again (new timestamp, current page version); the workflow takes its hash. */
export async function refreshIntentSigningData(client: Client, taskQueue: string, row: IntentRow): Promise<RefreshedSigningData> {
  return client.workflow.executeUpdateWithStart(refreshSigningDataUpdate, { startWorkflowOperation: startOperation(taskQueue, row) });
}

/** Start the task queue's expiry sweep of unsigned intents unless it runs already (worker start-up). */
export async function ensureIntentExpiry(client: Client, taskQueue: string): Promise<void> {
  await client.workflow.start(intentExpiryWorkflow, {
    taskQueue,
    workflowId: intentExpiryWorkflowId(taskQueue),
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    args: [],
  });
}

/** Stop the expiry sweep (tests). */
export async function stopIntentExpiry(client: Client, taskQueue: string): Promise<void> {
  await client.workflow
    .getHandle(intentExpiryWorkflowId(taskQueue))
    .terminate('stopped')
    .catch(() => undefined);
}
