/**
 * The batched class's steps (src/workflows/batch.ts): an intent's chain cycle joins its chain's batcher; a batch is
 * attested in one round in which every validator checks every member and signs the batch's root; the batch anchor
 * is created and proven once; then each member's cycle executes, observes and records its own legs as a standard
 * cycle does, on its view of the batch (context.ts loadChain).
 *
 * Crash-safe like the standard cycle: a member is claimed by one batch in its cycle row (under the row lock) before
 * any validator sees it, so a join delivered twice never puts an intent in two batches; the members a round left out
 * are written down with their reasons before the next round; the attestation is stored on every member; the anchor
 * is content-addressed on chain (exists? proven?), so a retry finds what an earlier attempt sent.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Hex } from 'viem';
import { createAnchor, executeComprehensiveProof, findAnchorTx } from '../../chain/anchor.js';
import { anchorMessage, MAX_LEAVES } from '../../chain/formulas.js';
import { getIntentChains, updateIntentChain } from '../../db/intents.js';
import { quorumRecord } from '../../protocol/cycle-record.js';
import { intentProofClass, planIntentBatch, type BatchPlan } from '../../protocol/intent/index.js';
import { attestBatchRequestFor } from '../../protocol/validator-wire.js';
import { QuorumUnreachableError, type QuorumClient } from '../../validator/quorum.js';
import { heartbeating } from '../heartbeat.js';
import { cycleFailure, type CycleContext, type IntentStepInput } from './context.js';

/** How long legs gather and how many a batch holds at most (BATCH_WINDOW_MS, BATCH_MAX_LEGS). */
export interface BatchSettings {
  windowMs: number;
  maxLegs: number;
}

export const DEFAULT_BATCH_SETTINGS: BatchSettings = { windowMs: 2_000, maxLegs: 32 };

/** BATCH_WINDOW_MS (1..600000) and BATCH_MAX_LEGS (1..128, an anchor's leaves at most) from the environment. */
export function batchSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): BatchSettings {
  const read = (name: string, dflt: number, max: number) => {
    const v = env[name];
    if (v === undefined || v === '') return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`${name} must be an integer from 1 to ${max}, not ${JSON.stringify(v)}`);
    return n;
  };
  return {
    windowMs: read('BATCH_WINDOW_MS', DEFAULT_BATCH_SETTINGS.windowMs, 600_000),
    maxLegs: read('BATCH_MAX_LEGS', DEFAULT_BATCH_SETTINGS.maxLegs, MAX_LEAVES),
  };
}

/**
 * The workflow id of a chain's batcher on a task queue. The queue is part of it: gateways (or test runs) that share a
 * Temporal namespace each batch on their own queue, and a join must never reach another queue's batcher, whose
 * workers may be gone.
 */
export const batcherWorkflowId = (taskQueue: string, chain: string) => `batcher-${taskQueue}-${chain}`;

/** A member's chain cycle as it joins a batch: which workflow to tell the outcome. */
export interface BatchJoin {
  intentId: string;
  legIds: string[];
  /** the workflow running the intent's chain cycle (intent-<id>, or its child per chain), told the batch's outcome */
  workflowId: string;
}

export interface BatchStepInput {
  chain: string;
  /** the batch's workflow id */
  batchId: string;
  /** intent ids in the order they joined */
  members: string[];
}

/** Refusals a later round can overcome (a validator saw the ledger or the chain too early). */
const TRANSIENT = new Set(['INTENT_PENDING', 'INTENT_NOT_FOUND', 'RPC_UNAVAILABLE', 'NOT_YET_VALID']);

/**
 * Members that fail alone: refused (not for a passing reason) by validators holding so much power that the others
 * cannot make a quorum. The reason is the first such refusal's.
 */
function leftOut(e: QuorumUnreachableError, q: QuorumClient, byTx: Map<string, string>): Map<string, string> {
  const total = q.validators.reduce((a, v) => a + (v.power ?? 100n), 0n);
  const refusedBy = new Map<string, { power: bigint; reason: string }>();
  for (const o of e.outcomes) {
    for (const m of o.members ?? []) {
      const intentId = byTx.get(m.intentTxId.toLowerCase());
      if (!intentId || TRANSIENT.has(m.code)) continue;
      const r = refusedBy.get(intentId) ?? { power: 0n, reason: `${m.code}: ${m.reason}` };
      r.power += q.validators.find((v) => v.index === o.index)?.power ?? 100n;
      refusedBy.set(intentId, r);
    }
  }
  return new Map([...refusedBy].filter(([, r]) => total - r.power < e.requiredPower).map(([id, r]) => [id, r.reason]));
}

/** Hands a member to its chain's batcher, starting the batcher when none runs (src/temporal/batches.ts). */
export type JoinBatcher = (client: Client, taskQueue: string, workflowId: string, input: BatchSettings & { chain: string }, join: BatchJoin) => Promise<void>;

export function batchSteps(ctx: CycleContext, joinBatcher: JoinBatcher, settings: BatchSettings = DEFAULT_BATCH_SETTINGS) {
  const { db, access } = ctx;

  /** The members' rows on the chain with this batch's membership, in the order given. */
  async function membersOf(i: BatchStepInput) {
    const out = [];
    for (const intentId of i.members) {
      const row = (await getIntentChains(db, intentId)).find((r) => r.chain === i.chain);
      if (row?.record.batch?.id === i.batchId) out.push({ intentId, record: row.record });
    }
    return out;
  }

  /** The attested batch's plan, from any member's record. */
  async function attestedPlan(i: BatchStepInput): Promise<{ plan: BatchPlan; included: string[] }> {
    const ms = (await membersOf(i)).filter((m) => !m.record.batch?.refused);
    const first = ms.find((m) => m.record.batch?.anchorId);
    if (!first?.record.batch) throw cycleFailure('AttestationMissing', `batch ${i.batchId} was not attested`);
    return { plan: await ctx.batchPlanOf(i.chain, first.record.batch), included: first.record.batch.members!.map((m) => m.intentId) };
  }

  return {
    /**
     * Joins the chain's batcher (signal-with-start) when the intent is of the batched class; a standard intent (or
     * a cycle whose batch already took it) answers batched: false / true without a second join.
     */
    async joinBatch(i: IntentStepInput & { legIds: string[]; workflowId: string }): Promise<{ batched: boolean }> {
      const { intent } = await ctx.loadIntent(i.intentId);
      if (intentProofClass(intent) !== 'batched') return { batched: false };
      const c = await ctx.loadChain(i.intentId, i.chain, 'attesting');
      if (c.record.batch) return { batched: true };
      const join: BatchJoin = { intentId: i.intentId, legIds: i.legIds, workflowId: i.workflowId };
      const a = Context.current();
      await joinBatcher(a.client, a.info.taskQueue, batcherWorkflowId(a.info.taskQueue, i.chain), { chain: i.chain, ...settings }, join);
      return { batched: true };
    },

    /**
     * The batch's attestation round: members claimed for this batch, the batch planned and sent to every validator
     * (each checks every member and signs the root). Members the validators refuse are left out with their reason
     * and the round repeats with the rest. Every member that stays gets the batch's anchor and attestation.
     */
    async attestBatch(i: BatchStepInput): Promise<{ anchorId?: Hex; included: string[]; excluded: { intentId: string; reason: string }[] }> {
      for (const intentId of i.members) {
        await ctx.loadChain(intentId, i.chain, 'attesting');
        await updateIntentChain(db, intentId, i.chain, { record: (rec) => void (rec.batch ??= { id: i.batchId }) });
      }
      const entry = access.entry(i.chain);
      const chainId = BigInt(entry.chainId);
      for (;;) {
        const ms = await membersOf(i);
        const excluded = ms.filter((m) => m.record.batch?.refused).map((m) => ({ intentId: m.intentId, reason: m.record.batch!.refused! }));
        const live = ms.filter((m) => !m.record.batch?.refused);
        if (!live.length) return { included: [], excluded };
        const done = live[0]!.record.batch;
        if (done?.anchorId && live.every((m) => m.record.attestation && m.record.batch?.anchorId === done.anchorId)) {
          return { anchorId: done.anchorId, included: live.map((m) => m.intentId), excluded };
        }
        const loaded = await Promise.all(live.map((m) => ctx.loadIntent(m.intentId)));
        const plan = planIntentBatch(
          loaded.map((l) => ({ intent: l.intent, ledgerTxHash: l.row.txHash ?? '' })),
          { chainId, proofAnchor: entry.contracts.proofAnchor },
        );
        const txIds = loaded.map((l) => l.row.ledgerTxId!);
        const r = access.reader(i.chain);
        const { client, root } = await ctx.quorumFor(i.chain, r, entry.contracts.proofAnchor);
        const message = anchorMessage({ chainId, anchor: plan.anchor.anchor, anchorId: plan.anchor.anchorId, validatorSetRoot: root });
        let q: Awaited<ReturnType<QuorumClient['attestBatch']>>;
        try {
          q = await heartbeating(client.attestBatch(attestBatchRequestFor(txIds, i.chain, plan.anchor), { message }));
        } catch (e) {
          if (!(e instanceof QuorumUnreachableError)) throw e;
          let out = leftOut(e, client, new Map(txIds.map((t, k) => [t.toLowerCase(), live[k]!.intentId])));
          if (!out.size) {
            // members refused only for passing reasons (a validator's ledger read timed out): the round again
            if (e.outcomes.some((o) => o.code === 'BATCH_MEMBER_REFUSED')) throw new Error(`${e.message} (will retry)`);
            const failure = ctx.quorumFailure(e, client, 'AttestationRefused');
            // refused for good as a whole: every member of this batch fails with it (only this batch's members
            // hear it, never an intent another batch holds); a passing failure is retried
            if (!(failure instanceof ApplicationFailure) || !failure.nonRetryable) throw failure;
            out = new Map(live.map((m) => [m.intentId, failure.message]));
          }
          for (const [intentId, reason] of out) {
            await updateIntentChain(db, intentId, i.chain, {
              record: (rec) => void (rec.batch!.refused = `the validators left the intent out of its batch: ${reason}`),
            });
          }
          continue;
        }
        await recordAttested(
          ctx,
          i,
          live.map((m) => m.intentId),
          loaded,
          txIds,
          plan,
          root,
          q,
        );
      }
    },

    /** createAnchor of the batch, once (content-addressed); its transaction recorded on every member. */
    async createBatchAnchor(i: BatchStepInput): Promise<{ txHash: Hex; sent: boolean }> {
      const { plan, included } = await attestedPlan(i);
      const w = access.writer(i.chain);
      const a = plan.anchor;
      const res = await heartbeating(
        createAnchor(w, a.anchor, { commitmentRoot: a.commitmentRoot, operationId: a.operationId, ledgerTxHash: a.ledgerTxHash, leafCount: a.leafCount }),
      );
      if (res.tx && res.tx.status !== 'success') throw new Error(`createAnchor reverted (tx ${res.tx.txHash})`);
      const txHash = res.tx?.txHash ?? (await ctx.foundTx(`AnchorCreated log of anchor ${a.anchorId}`, findAnchorTx(w, a.anchor, a.anchorId, 'created')));
      for (const intentId of included) {
        await updateIntentChain(db, intentId, i.chain, { stage: 'anchoring', record: (rec) => void (rec.createAnchorTx = txHash) });
      }
      return { txHash, sent: !!res.tx };
    },

    /** executeComprehensiveProof of the batch with its aggregate, once; recorded on every member. */
    async proveBatchAnchor(i: BatchStepInput): Promise<{ txHash: Hex; sent: boolean }> {
      const { plan, included } = await attestedPlan(i);
      const first = (await getIntentChains(db, included[0]!)).find((r) => r.chain === i.chain)!;
      const att = first.record.attestation;
      if (!att) throw cycleFailure('AttestationMissing', 'no attestation recorded');
      const w = access.writer(i.chain);
      const a = plan.anchor;
      const res = await heartbeating(
        executeComprehensiveProof(w, a.anchor, { anchorId: a.anchorId, signerBitmap: BigInt(att.signerBitmap), signature: att.aggregateSignature }),
      );
      if (res.tx && res.tx.status !== 'success') throw new Error(`executeComprehensiveProof reverted (tx ${res.tx.txHash})`);
      const txHash = res.tx?.txHash ?? (await ctx.foundTx(`AnchorProven log of anchor ${a.anchorId}`, findAnchorTx(w, a.anchor, a.anchorId, 'proven')));
      for (const intentId of included) {
        await updateIntentChain(db, intentId, i.chain, { step: 'anchored', record: (rec) => void (rec.proveTx = txHash) });
      }
      return { txHash, sent: !!res.tx };
    },
  };
}

/** The attested batch on every member's cycle: its membership, the batch's anchor fields, each leg's leaf and path. */
async function recordAttested(
  ctx: CycleContext,
  i: BatchStepInput,
  live: string[],
  loaded: { row: { txHash: string | null }; intent: { operationId: Hex } }[],
  txIds: string[],
  plan: BatchPlan,
  root: Hex,
  q: Awaited<ReturnType<QuorumClient['attestBatch']>>,
): Promise<void> {
  const members = live.map((intentId, k) => ({
    intentId,
    ledgerTxId: txIds[k]!,
    ledgerTxHash: `0x${String(loaded[k]!.row.txHash).replace(/^0x/, '').toLowerCase()}` as Hex,
    operationId: loaded[k]!.intent.operationId,
  }));
  const first = q.responses.values().next().value!;
  for (const [k, intentId] of live.entries()) {
    const authority = first.members[k]!.authority;
    await updateIntentChain(ctx.db, intentId, i.chain, {
      step: 'attested',
      record: (rec) => {
        rec.batch = {
          id: i.batchId,
          anchorId: plan.anchor.anchorId,
          operationId: plan.anchor.operationId,
          ledgerTxHash: plan.anchor.ledgerTxHash,
          members,
          offset: plan.offsets[k]!,
        };
        rec.anchorId = plan.anchor.anchorId;
        rec.commitmentRoot = plan.anchor.commitmentRoot;
        rec.leafCount = plan.anchor.leafCount.toString();
        const view = plan.members[k]!;
        for (const l of rec.legs) {
          const j = view.legs.findIndex((x) => x.legId === l.legId);
          l.leafIndex = Number(view.proofs[j]!.leafIndex);
          l.merkleProof = view.proofs[j]!.merkleProof;
        }
        rec.validatorSetRoot = root;
        rec.attestation = { ...quorumRecord(q), authority };
      },
    });
  }
}
