/**
 * intentChainWorkflow (`intent-<id>-<chain>`): the proof cycle of one intent on one chain, a child of
 * intentWorkflow. attesting (5 of 7 validators BLS-sign the anchor) → anchoring (createAnchor,
 * executeComprehensiveProof) → executing (executeGovernanceProofDirect per leg) → observing (validators verify the
 * effects after finality) → recording (proof_result v2 on the ledger). A leg that fails (revert, missing funds,
 * refused observation) fails alone; the others go on. Orchestration only.
 */
import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { IntentActivities } from '../activities/intent.js';
import type { CycleStage } from '../db/intents.js';
import { NON_RETRYABLE_INTENT_ERRORS } from '../proof/failures.js';
import { innermostFailure } from './failure.js';
import { StageKey } from './search-attributes.js';

export interface IntentChainInput {
  intentId: string;
  chain: string;
  legIds: string[];
}

const retry = { initialInterval: '250 milliseconds', backoffCoefficient: 2, maximumInterval: '15 seconds', nonRetryableErrorTypes: NON_RETRYABLE_INTENT_ERRORS };

/** Quorum rounds and chain transactions: retried with backoff for as long as the intent can still be valid. */
const acts = proxyActivities<IntentActivities>({
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '20 seconds',
  scheduleToCloseTimeout: '2 hours',
  retry,
});

export async function intentChainWorkflow(input: IntentChainInput): Promise<{ completed: string[]; failed: string[] }> {
  const base = { intentId: input.intentId, chain: input.chain };
  const stage = async (s: CycleStage) => {
    upsertSearchAttributes([{ key: StageKey, value: s }]);
    await acts.setChainStage({ ...base, stage: s });
  };
  const failed = new Map<string, string>();
  const fail = async (legIds: string[], err: unknown) => {
    const message = innermostFailure(err).message;
    for (const id of legIds) failed.set(id, message);
    await acts.failChainLegs({ ...base, legIds, error: message });
  };
  const live = () => input.legIds.filter((id) => !failed.has(id));

  await acts.beginChainCycle(base);
  try {
    await stage('attesting');
    await acts.attestChain(base);
    await stage('anchoring');
    await acts.createChainAnchor(base);
    await acts.proveChainAnchor(base);
  } catch (err) {
    await fail(input.legIds, err);
    await stage('failed');
    return { completed: [], failed: input.legIds };
  }

  await stage('executing');
  // one relayer per chain: legs go out one after the other (each waits for its receipt)
  for (const legId of input.legIds) {
    try {
      await acts.executeChainLeg({ ...base, legId });
    } catch (err) {
      await fail([legId], err);
    }
  }
  if (live().length) {
    await stage('observing');
    await Promise.all(live().map((legId) => acts.observeChainLeg({ ...base, legId }).catch((err) => fail([legId], err))));
  }
  if (live().length) {
    await stage('recording');
    await Promise.all(live().map((legId) => acts.recordChainLegResult({ ...base, legId }).catch((err) => fail([legId], err))));
  }
  await stage(live().length === input.legIds.length ? 'completed' : 'failed');
  return { completed: live(), failed: [...failed.keys()] };
}
