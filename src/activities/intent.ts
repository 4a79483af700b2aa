/**
 * Activities of the proof cycle: submit the client's signature to the ledger, follow the intent's
 * ledger transaction, and per chain: attestation quorum → createAnchor → executeComprehensiveProof →
 * executeGovernanceProofDirect per leg → observation quorum → proof_result on the ledger; then the proof.
 *
 * Every step reads the ledger, the chain or its own record first and skips what is already done, so a retry
 * after a worker crash never sends a second transaction: the anchor is content-addressed (exists? proven?), a
 * leg's leaf is consumed exactly once on chain (isLeafUsed, then the Executed log names the transaction), and the
 * validators write a result once (they look it up on the ledger). Outputs are stored on the intent_chains row,
 * so the workflow history stays small and GET /v1/transaction/{id} shows each transaction as soon as it exists.
 *
 * The steps live in src/activities/cycle/ by concern, each a factory over one cycle context built here once:
 * signature.ts (the ledger side), quorum.ts (the validator rounds), chain-steps.ts (the chain transactions),
 * finalize.ts (the end), batch.ts (the batched class: joining a batch, its attestation and anchor), transfer.ts (the end of a ledger-only intent: a token transfer), expiry.ts (unsigned intents past their expiry). The activity names are the keys below; recorded workflow histories name them.
 */
import { batchSettingsFromEnv, batchSteps, type JoinBatcher } from './cycle/batch.js';
import { chainSteps } from './cycle/chain-steps.js';
import { createCycleContext, type IntentActivityDeps } from './cycle/context.js';
import { expirySteps, type IntentWorkflowAccess } from './cycle/expiry.js';
import { finalizeSteps } from './cycle/finalize.js';
import { quorumSteps } from './cycle/quorum.js';
import { signatureSteps } from './cycle/signature.js';
import { signingDataSteps } from './cycle/signing-data.js';
import { transferSteps } from './cycle/transfer.js';

export type { IntentActivityDeps, IntentStepInput, LegStepInput, SendExecution } from './cycle/context.js';

/** What the activities start or ask of workflows (src/temporal/); passed in because activities never import workflow code. */
export interface IntentWorkflowHandles {
  /** starts or feeds a chain's batcher workflow */
  joinBatcher: JoinBatcher;
  /** the intent workflow, for the expiry sweep */
  intents: IntentWorkflowAccess;
}

export function createIntentActivities(deps: IntentActivityDeps, workflows: IntentWorkflowHandles) {
  const ctx = createCycleContext(deps);
  return {
    ...signatureSteps(ctx),
    ...quorumSteps(ctx),
    ...chainSteps(ctx),
    ...finalizeSteps(ctx),
    ...transferSteps(ctx),
    ...signingDataSteps(ctx),
    ...batchSteps(ctx, workflows.joinBatcher, batchSettingsFromEnv()),
    ...expirySteps(ctx, workflows.intents),
  };
}
export type IntentActivities = ReturnType<typeof createIntentActivities>;
export const INTENT_ACTIVITY_NAMES: (keyof IntentActivities)[] = [
  'submitIntentSignature',
  'followIntentTransaction',
  'attestChain',
  'createChainAnchor',
  'proveChainAnchor',
  'executeChainLeg',
  'observeChainLeg',
  'recordChainLegResult',
  'failChainLegs',
  'finalizeIntent',
  'failIntent',
  'finalizeLedgerIntent',
  'refreshIntentSigningData',
  'joinBatch',
  'attestBatch',
  'createBatchAnchor',
  'proveBatchAnchor',
  'expireDueIntents',
  'recordedSubmission',
];
