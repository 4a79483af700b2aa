/**
 * Batched anchoring (the `batched` proof class): one anchor, one quorum round and one on-chain verification for the
 * legs of many intents on a chain.
 *
 *   batcherWorkflow (`batcher-<task queue>-<chain>`)  one per chain and task queue, started or fed by signal-with-start (the activity joinBatch
 *       of a member's chain cycle sends `join`). From the first join it gathers for the window (BATCH_WINDOW_MS) or
 *       until BATCH_MAX_LEGS legs wait, whichever comes first, then hands the batch to a child batchWorkflow (left
 *       running on its own) and gathers the next. Renewed with continue-as-new to keep its history short (joins
 *       still waiting are carried over); it ends after a quiet minute and the next join starts it again.
 *   batchWorkflow (`batch-<chain>-<uuid>`)  one batch: the attestation round (every validator checks every member
 *       and signs the root; members refused are left out with their reason), createAnchor, executeComprehensiveProof;
 *       then each member's chain cycle hears the outcome (`batchOutcome`) and executes, observes and records its own
 *       legs with their Merkle proofs. Its `BatchIntents` search attribute lists its intents; each member's cycle
 *       carries `BatchId`, so the Temporal UI finds the batch of an intent and the intents of a batch.
 *
 * Orchestration only; the steps are idempotent activities (src/activities/cycle/batch.ts).
 */
import {
  condition,
  continueAsNew,
  defineSignal,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { BatchJoin, BatchSettings } from '../activities/cycle/batch.js';
import type { IntentActivities } from '../activities/intent.js';
import { CYCLE_ACTIVITY_OPTIONS } from './cycle-options.js';
import { innermostFailure } from './failure.js';
import { BatchIntentsKey, StageKey } from './search-attributes.js';

/** What a member's chain cycle hears from its batch: the anchor its legs execute under, or why it was left out. */
export interface BatchOutcome {
  batchId: string;
  anchorId?: string;
  error?: string;
}

export const joinBatchSignal = defineSignal<[BatchJoin]>('join');
export const batchOutcomeSignal = defineSignal<[BatchOutcome]>('batchOutcome');

export interface BatcherInput extends BatchSettings {
  chain: string;
  /** joins that were waiting when the previous run continued as new */
  waiting?: BatchJoin[];
}

export interface BatchInput {
  chain: string;
  members: BatchJoin[];
}

const acts = proxyActivities<IntentActivities>(CYCLE_ACTIVITY_OPTIONS);

/**
 * Patch id: a batch tells its members their outcome with all the signals in one workflow task; histories recorded
 * before it sent them one after the other.
 */
export const CONCURRENT_OUTCOMES = 'batch-concurrent-outcomes';

/** Batches a run starts before it continues as new (its history stays a few hundred events). */
const BATCHES_PER_RUN = 50;
/** A batcher with nothing to gather for this long ends; the next join starts it again. */
const IDLE_MS = 60_000;

export async function batcherWorkflow(input: BatcherInput): Promise<void> {
  const waiting: BatchJoin[] = [...(input.waiting ?? [])];
  setHandler(joinBatchSignal, (j) => {
    // a join delivered twice (its activity retried) waits once; one already batched is refused by its batch's claim
    if (!waiting.some((w) => w.intentId === j.intentId)) waiting.push(j);
  });
  const legs = () => waiting.reduce((a, j) => a + j.legIds.length, 0);
  for (let started = 0; started < BATCHES_PER_RUN; ) {
    if (!(await condition(() => waiting.length > 0, IDLE_MS))) return;
    await condition(() => legs() >= input.maxLegs, input.windowMs);
    // whole intents in join order up to maxLegs legs (an intent with more legs than that goes alone)
    const members: BatchJoin[] = [];
    let n = 0;
    while (waiting.length && (members.length === 0 || n + waiting[0]!.legIds.length <= input.maxLegs)) {
      const j = waiting.shift()!;
      members.push(j);
      n += j.legIds.length;
    }
    const batchId = `batch-${input.chain}-${uuid4()}`;
    await startChild(batchWorkflow, {
      workflowId: batchId,
      args: [{ chain: input.chain, members }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: [
        { key: BatchIntentsKey, value: members.map((m) => m.intentId) },
        { key: StageKey, value: 'attesting' },
      ],
    });
    started++;
  }
  await continueAsNew<typeof batcherWorkflow>({ ...input, waiting });
}

export async function batchWorkflow(input: BatchInput): Promise<{ anchorId?: string; included: string[]; excluded: { intentId: string; reason: string }[] }> {
  const batchId = workflowInfo().workflowId;
  const step = { chain: input.chain, batchId, members: input.members.map((m) => m.intentId) };
  const tell = async (intentIds: string[], outcome: BatchOutcome) => {
    // a member's cycle that ended meanwhile (cancelled, terminated) has nothing to hear
    const signal = (m: BatchJoin) =>
      getExternalWorkflowHandle(m.workflowId)
        .signal(batchOutcomeSignal, outcome)
        .catch(() => undefined);
    const to = input.members.filter((x) => intentIds.includes(x.intentId));
    // every member's signal in one workflow task (one after the other cost a task each: seconds for a large batch)
    if (patched(CONCURRENT_OUTCOMES)) await Promise.all(to.map(signal));
    else for (const m of to) await signal(m);
  };
  let attested: Awaited<ReturnType<IntentActivities['attestBatch']>>;
  try {
    attested = await acts.attestBatch(step);
  } catch (err) {
    upsertSearchAttributes([{ key: StageKey, value: 'failed' }]);
    await tell(step.members, { batchId, error: innermostFailure(err).message });
    return { included: [], excluded: step.members.map((intentId) => ({ intentId, reason: innermostFailure(err).message })) };
  }
  if (patched(CONCURRENT_OUTCOMES)) await Promise.all(attested.excluded.map((x) => tell([x.intentId], { batchId, error: x.reason })));
  else for (const x of attested.excluded) await tell([x.intentId], { batchId, error: x.reason });
  if (attested.included.length) {
    upsertSearchAttributes([
      { key: BatchIntentsKey, value: attested.included },
      { key: StageKey, value: 'anchoring' },
    ]);
    try {
      await acts.createBatchAnchor(step);
      await acts.proveBatchAnchor(step);
    } catch (err) {
      upsertSearchAttributes([{ key: StageKey, value: 'failed' }]);
      await tell(attested.included, { batchId, error: innermostFailure(err).message });
      return { included: [], excluded: [...attested.excluded, ...attested.included.map((intentId) => ({ intentId, reason: innermostFailure(err).message }))] };
    }
    await tell(attested.included, { batchId, anchorId: attested.anchorId });
  }
  upsertSearchAttributes([{ key: StageKey, value: attested.included.length ? 'anchored' : 'failed' }]);
  return attested;
}
