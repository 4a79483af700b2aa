/**
 * The chain cycle (runChainCycle): the proof cycle of one intent on one chain. attesting (5 of 7 validators BLS-sign
 * the anchor) → anchoring (createAnchor, executeComprehensiveProof; a batched intent's legs join their chain's batch
 * instead, src/workflows/batch.ts) → executing (executeGovernanceProofDirect per leg) → observing (validators verify
 * the effects after finality) → recording (proof_result v2 on the ledger). A leg that fails (revert, missing funds,
 * refused observation) fails alone; the others go on. Orchestration only. An intent over one chain runs it in its own
 * workflow (intentWorkflow); one over several chains runs it per chain in a child, intentChainWorkflow
 * (`intent-<id>-<chain>`).
 *
 * The short steps (a chain transaction with its receipt, the result write, a leg's failure) run as local activities
 * since CYCLE_LOCAL_STEPS: in the worker that runs the workflow task, recorded as markers, without a round trip
 * through the task queue each (the cycle's largest cost in Temporal). Since CYCLE_LOCAL_QUORUM the two quorum rounds
 * run so too: a round that waits long (a loaded validator, the chain's confirmations) keeps its workflow task open,
 * and the worker extends it before it times out (a few history events per workflow task timeout of waiting) where an
 * activity heartbeated. A worker that dies in a round is noticed by that timeout, and the round runs again on another
 * worker (it is idempotent: its outcome is stored on the chain's cycle). Histories from before each patch replay on
 * the activity path.
 */
import { condition, patched, proxyActivities, proxyLocalActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { IntentActivities } from '../activities/intent.js';
import type { CycleStage } from '../db/intents.js';
import type { ProofClass } from '../protocol/proof-class.js';
import { CYCLE_ACTIVITY_OPTIONS, CYCLE_RETRY } from './cycle-options.js';
import { innermostFailure } from './failure.js';
import { batchOutcomeSignal, type BatchOutcome } from './batch.js';
import { BatchIdKey, StageKey } from './search-attributes.js';

export interface IntentChainInput {
  intentId: string;
  chain: string;
  legIds: string[];
  /** the intent's class, when its workflow's input had it (see IntentWorkflowInput.proofClass) */
  proofClass?: ProofClass;
}

const acts = proxyActivities<IntentActivities>(CYCLE_ACTIVITY_OPTIONS);

/**
 * The short steps as local activities: the same timeouts and retries, run by the worker that runs the workflow. A
 * retry due more than 10 s later waits on a durable timer instead of holding the workflow task open meanwhile.
 */
const local = proxyLocalActivities<IntentActivities>({
  startToCloseTimeout: '3 minutes',
  scheduleToCloseTimeout: '2 hours',
  localRetryThreshold: '10 seconds',
  retry: CYCLE_RETRY,
});

/** Patch id: short steps of the proof cycle as local activities (intentWorkflow uses it too). */
export const CYCLE_LOCAL_STEPS = 'cycle-local-steps';

/** Patch id: the attestation and observation rounds as local activities too (about 40 % of Temporal's work per cycle). */
export const CYCLE_LOCAL_QUORUM = 'cycle-local-quorum';

/**
 * Patch id: a batched intent's legs join its chain's batch (src/workflows/batch.ts) instead of an anchor of their
 * own; the batch's outcome comes as the signal `batchOutcome`. Runs ask joinBatch first (standard intents go on as
 * before), unless their input names the class: a standard one then neither asks nor passes this patch; histories
 * from before the patch run the standard cycle.
 */
export const BATCHED_ANCHORING = 'batched-anchoring';

export interface ChainCycleResult {
  completed: string[];
  failed: string[];
}

export async function intentChainWorkflow(input: IntentChainInput): Promise<ChainCycleResult> {
  return runChainCycle(input);
}

/**
 * The proof cycle of one intent's legs on one chain, in the workflow that calls it: its own (intentChainWorkflow),
 * or an intent's over a single chain (intentWorkflow since INLINE_CHAIN_CYCLE). `onStage` hears each stage as it
 * begins (the workflow's StageKey by default; the stored stage is moved by the step activities themselves);
 * `inline` leaves the last stage (completed or failed) to the calling workflow, which still assembles the proof.
 */
export async function runChainCycle(input: IntentChainInput, opts: { onStage?: (s: CycleStage) => void; inline?: boolean } = {}): Promise<ChainCycleResult> {
  const short = patched(CYCLE_LOCAL_STEPS) ? local : acts;
  const rounds = short === local && patched(CYCLE_LOCAL_QUORUM) ? local : acts;
  const base = { intentId: input.intentId, chain: input.chain };
  const stage = opts.onStage ?? ((s: CycleStage) => upsertSearchAttributes([{ key: StageKey, value: s }]));
  const failed = new Map<string, string>();
  const fail = async (legIds: string[], err: unknown) => {
    const message = innermostFailure(err).message;
    for (const id of legIds) failed.set(id, message);
    await short.failChainLegs({ ...base, legIds, error: message });
  };
  const live = () => input.legIds.filter((id) => !failed.has(id));

  let outcome: BatchOutcome | undefined;
  setHandler(batchOutcomeSignal, (o) => void (outcome ??= o));

  try {
    stage('attesting');
    // a standard intent whose input says so has no batcher to ask (deterministic: the input is in the history)
    const joined =
      input.proofClass !== 'standard' && patched(BATCHED_ANCHORING)
        ? await short.joinBatch({ ...base, legIds: input.legIds, workflowId: workflowInfo().workflowId })
        : { batched: false };
    if (joined.batched) {
      await condition(() => outcome !== undefined);
      upsertSearchAttributes([{ key: BatchIdKey, value: outcome!.batchId }]);
      if (outcome!.error !== undefined) throw new Error(outcome!.error);
    } else {
      await rounds.attestChain(base);
      stage('anchoring');
      await short.createChainAnchor(base);
      await short.proveChainAnchor(base);
    }
  } catch (err) {
    await fail(input.legIds, err);
    if (!opts.inline) stage('failed');
    return { completed: [], failed: input.legIds };
  }

  stage('executing');
  // one relayer per chain: legs go out one after the other (each waits for its receipt)
  for (const legId of input.legIds) {
    try {
      await short.executeChainLeg({ ...base, legId });
    } catch (err) {
      await fail([legId], err);
    }
  }
  if (live().length) {
    stage('observing');
    await Promise.all(live().map((legId) => rounds.observeChainLeg({ ...base, legId }).catch((err) => fail([legId], err))));
  }
  if (live().length) {
    stage('recording');
    await Promise.all(live().map((legId) => short.recordChainLegResult({ ...base, legId }).catch((err) => fail([legId], err))));
  }
  if (!opts.inline) stage(live().length === input.legIds.length ? 'completed' : 'failed');
  return { completed: live(), failed: [...failed.keys()] };
}
