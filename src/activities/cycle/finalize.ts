/**
 * The end of the proof cycle: the failed legs of a chain recorded, then the intent ended. With every leg recorded
 * the proof (bundle + custody chain) is stored and the intent completes; otherwise it fails naming each failed leg,
 * keeping a partial proof of the legs that completed.
 */
import { completeIntent, getVersionedIntentChains, markIntentFailed, storePartialProof, updateIntentChain, type CycleStage } from '../../db/intents.js';
import { assembleBundle } from '../../proof/assemble.js';
import { serializeBundle } from '../../proof/bundle.js';
import { custodyTrail } from '../../proof/custody-trail.js';
import type { CycleRecord } from '../../protocol/cycle-record.js';
import { executionPayload } from '../../webhooks/stored-forms.js';
import { heartbeating } from '../heartbeat.js';
import type { CycleContext, IntentStepInput } from './context.js';

export function finalizeSteps(ctx: CycleContext) {
  const { db, ledger, access } = ctx;
  return {
    async failChainLegs(i: IntentStepInput & { legIds: string[]; error: string }): Promise<void> {
      // a chain whose cycle never started (its first step failed before the cycle was created) has nothing to
      // record: finalizeIntent counts its legs as failed
      const chains = await getVersionedIntentChains(db, i.intentId);
      if (!chains.some((c) => c.chain === i.chain)) return;
      await updateIntentChain(
        db,
        i.intentId,
        i.chain,
        {
          record: (rec) => {
            for (const l of rec.legs) if (i.legIds.includes(l.legId) && !l.result) l.error = i.error;
          },
        },
        chains,
      );
    },

    /**
     * Ends the intent: with every leg recorded, the proof (bundle + custody) is stored and the intent completes;
     * otherwise it fails naming each failed leg (a partial proof of the completed legs is kept).
     */
    async finalizeIntent(i: { intentId: string }): Promise<{ status: 'completed' | 'failed'; proofId?: string; error?: string }> {
      const { row, intent } = await ctx.loadIntent(i.intentId);
      const chains = await getVersionedIntentChains(db, i.intentId);
      for (const c of chains) {
        const stage: CycleStage = c.record.legs.every((l) => l.result) ? 'completed' : 'failed';
        if (c.stage !== stage) await updateIntentChain(db, i.intentId, c.chain, { stage }, chains);
        c.stage = stage;
      }
      // every leg of the intent, so a chain whose cycle never started fails its legs instead of being left out
      const legs = intent.legs.map((il) => {
        const c = chains.find((x) => x.chain === il.chain);
        const l = c?.record.legs.find((x) => x.legId === il.legId);
        return { chain: il.chain, chainId: il.chainId.toString(), legId: il.legId, ...l, ...(c ? {} : { error: `no proof cycle ran on ${il.chain}` }) };
      });
      const done = legs.filter((l) => l.result && l.executionTx);
      const failed = legs.filter((l) => !(l.result && l.executionTx));
      let proofId: string | undefined;
      const cycle: CycleRecord = {
        intentId: row.id,
        adiUrl: intent.adiUrl,
        dataAccountUrl: row.prepared.principal,
        ledgerTxId: row.ledgerTxId ?? undefined,
        ledgerTxHash: row.txHash ?? undefined,
        chains: chains.map((c) => ({ ...c.record, legs: c.record.legs.filter((l) => l.result) })).filter((c) => c.legs.length),
        failedLegs: failed.map((l) => ({ legId: l.legId, chain: l.chain, reason: l.error ?? 'not completed' })),
      };
      const proof = async () => {
        const bundle = await heartbeating(assembleBundle({ ledger, chain: (name) => access.reader(name) }, cycle));
        const custody = custodyTrail({
          intentId: row.id,
          operationId: row.operationId,
          createdAt: row.createdAt.toISOString(),
          ledgerTxHash: row.txHash ?? undefined,
          chains: chains.map((c) => ({ chain: c.chain, record: c.record, stepTimes: c.stepTimes })),
          bundleHash: bundle.bundle_hash,
        });
        return { bundle: serializeBundle(bundle), bundleHash: bundle.bundle_hash, custody };
      };
      if (!failed.length && done.length) {
        proofId = await completeIntent(db, i.intentId, {
          proof: await proof(),
          executions: done.map((l) => executionPayload({ legId: l.legId, chain: l.chain, evmChainId: l.chainId, txHash: l.executionTx! })),
        });
        return { status: 'completed', proofId };
      }
      if (done.length) proofId = await storePartialProof(db, i.intentId, await proof());
      const error =
        failed.map((l) => `leg ${l.legId} (${l.chain}) failed: ${l.error ?? 'not completed'}`).join('; ') +
        (done.length ? `; completed: ${done.map((l) => l.legId).join(', ')}` : '');
      const stage = chains.find((c) => c.stage === 'failed') ? 'failed' : row.stage;
      await markIntentFailed(db, i.intentId, { status: 'failed', stage, error, proofId });
      return { status: 'failed', proofId, error };
    },
  };
}
