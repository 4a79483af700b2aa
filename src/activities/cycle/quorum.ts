/**
 * The proof cycle's validator rounds on one chain: the attestation before anything is sent (every validator reads
 * the intent from the ledger itself and BLS-signs the anchor), the observation after a leg executed (they read the
 * receipt and block themselves and verify the committed effects), and the proof_result record one of the signers
 * writes to the ledger. Each outcome is stored on the chain's cycle, so a retry finds it instead of asking again.
 */
import type { Hex } from 'viem';
import { anchorMessage } from '../../chain/formulas.js';
import { quorumRecord } from '../../protocol/cycle-record.js';
import { attestRequestFor, observeRequestFor } from '../../protocol/validator-wire.js';
import { heartbeating } from '../heartbeat.js';
import { cycleFailure, updateLoadedChain, type CycleContext, type IntentStepInput, type LegStepInput } from './context.js';

export function quorumSteps(ctx: CycleContext) {
  const { db, access } = ctx;
  return {
    /** Pre-execution quorum: every validator reads the intent from the ledger itself and BLS-signs the anchor. */
    async attestChain(i: IntentStepInput): Promise<{ signers: number[] }> {
      const c = await ctx.loadChain(i.intentId, i.chain, 'attesting');
      if (c.record.attestation) return { signers: c.record.attestation.signers };
      const r = access.reader(i.chain);
      const { client, root } = await ctx.quorumFor(i.chain, r, c.entry.contracts.proofAnchor);
      const message = anchorMessage({ chainId: BigInt(c.entry.chainId), anchor: c.plan.anchor, anchorId: c.plan.anchorId, validatorSetRoot: root });
      const q = await heartbeating(client.attest(attestRequestFor(c.ledgerTxId, i.chain, c.plan), { message })).catch((e: unknown) => {
        throw ctx.quorumFailure(e, client, 'AttestationRefused');
      });
      const authority = q.responses.values().next().value!.authority;
      await updateLoadedChain(db, i, c, {
        step: 'attested',
        record: (rec) => {
          rec.validatorSetRoot = root;
          rec.attestation = { ...quorumRecord(q), authority };
        },
      });
      return { signers: q.signers };
    },

    /** Post-execution quorum: validators read the receipt and block themselves and verify the committed effects. */
    async observeChainLeg(i: LegStepInput): Promise<{ resultHash: Hex }> {
      const c = await ctx.loadChain(i.intentId, i.chain, 'observing');
      const { index } = ctx.legOf(c.plan, i.legId);
      const l = c.record.legs.find((x) => x.legId === i.legId)!;
      if (l.observation) return { resultHash: l.observation.resultHash };
      if (!l.executionTx) throw cycleFailure('LegNotExecuted', `leg ${i.legId} has no execution`);
      const r = access.reader(i.chain);
      const { client, root } = await ctx.quorumFor(i.chain, r, c.entry.contracts.proofAnchor);
      const request = observeRequestFor(c.ledgerTxId, i.chain, c.plan.anchorId, c.plan.proofs[index]!.leafIndex, l.executionTx, ctx.batchRef(c.record));
      const q = await heartbeating(client.observe(request, { chainId: BigInt(c.entry.chainId), proofAnchor: c.plan.anchor, validatorSetRoot: root })).catch(
        (e: unknown) => {
          throw ctx.quorumFailure(e, client, 'ObservationRefused');
        },
      );
      const first = q.responses.values().next().value!;
      // what the signers counted before they signed (not part of what they signed): the first well-formed count,
      // so that one signer's malformed number cannot make the proof bundle unbuildable
      const confirmations = [...q.responses.values()].map((r) => r.confirmations).find((n) => Number.isSafeInteger(n) && n >= 0);
      if (confirmations === undefined) throw new Error(`no signer of the observation of leg ${i.legId} reported a well-formed confirmation count`);
      await updateLoadedChain(db, i, c, {
        step: 'observed',
        record: (rec) => {
          rec.legs.find((x) => x.legId === i.legId)!.observation = {
            ...quorumRecord(q),
            resultHash: q.resultHash,
            confirmations,
            checks: first.checks,
          };
        },
      });
      return { resultHash: q.resultHash };
    },

    /** The proof_result v2 record, written to the ledger by one of the signers (once; they check the ledger). */
    async recordChainLegResult(i: LegStepInput): Promise<{ resultId: Hex }> {
      const c = await ctx.loadChain(i.intentId, i.chain, 'recording');
      const { index } = ctx.legOf(c.plan, i.legId);
      const l = c.record.legs.find((x) => x.legId === i.legId)!;
      if (l.result) return { resultId: l.result.resultId };
      const o = l.observation;
      if (!o || !l.executionTx) throw cycleFailure('LegNotObserved', `leg ${i.legId} was not observed`);
      const r = access.reader(i.chain);
      const { client } = await ctx.quorumFor(i.chain, r, c.entry.contracts.proofAnchor);
      const req = observeRequestFor(c.ledgerTxId, i.chain, c.plan.anchorId, c.plan.proofs[index]!.leafIndex, l.executionTx, ctx.batchRef(c.record));
      const w = await heartbeating(
        client.writeResult(req, { signers: o.signers, aggregateSignature: o.aggregateSignature, signerBitmap: BigInt(o.signerBitmap) }),
      );
      await updateLoadedChain(db, i, c, {
        step: 'recorded',
        record: (rec) => {
          rec.legs.find((x) => x.legId === i.legId)!.result = {
            resultId: w.resultId,
            resultsAccount: w.resultsAccount,
            txId: w.txId,
            writtenBy: w.writtenBy,
          };
        },
      });
      return { resultId: w.resultId };
    },
  };
}
