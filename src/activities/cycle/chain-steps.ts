/**
 * The proof cycle's transactions on one chain: createAnchor, executeComprehensiveProof with the attestation's
 * aggregate, and executeGovernanceProofDirect per leg. Each is sent at most once: the anchor is content-addressed
 * (exists? proven?) and a leg's leaf is consumed exactly once on chain (isLeafUsed, then the Executed log names the
 * transaction), so a retry after a crash finds what an earlier attempt sent instead of sending it again.
 */
import { BaseError, decodeErrorResult, type Hex } from 'viem';
import { accountAbiWithAnchorErrors, findExecutionTx, isLegExecuted, proofForLeg, sendGovernanceProofDirect } from '../../chain/account.js';
import { createAnchor, executeComprehensiveProof, findAnchorTx, revertErrorName } from '../../chain/anchor.js';
import { beat, heartbeating } from '../heartbeat.js';
import { cycleFailure, updateLoadedChain, type CycleContext, type IntentStepInput, type LegStepInput } from './context.js';

/** What the account's and the anchor's errors mean for a leg. */
const REVERT_MEANING: Record<string, string> = {
  InvalidMerkleProof: 'the runtime (chain id, target, value, calldata) does not match the anchored execution commitment',
  LeafAlreadyUsed: 'the proof was already used',
  AnchorNotProven: 'the anchor is not proven',
  AnchorNotFound: 'no such anchor',
  AnchorExpired: 'the intent expired (expires_at) before the leg could execute',
};

function revertData(e: unknown): Hex | undefined {
  const found = e instanceof BaseError ? e.walk((x) => typeof (x as { data?: unknown }).data === 'string') : undefined;
  const d = (found as { data?: unknown } | undefined)?.data;
  return typeof d === 'string' && d.startsWith('0x') && d.length >= 10 ? (d as Hex) : undefined;
}

/** The decoded custom error of a revert with its meaning, or the revert reason as viem reports it. */
function explainRevert(e: unknown): string {
  let name = revertErrorName(e);
  const data = revertData(e);
  if (!name && data) {
    try {
      name = decodeErrorResult({ abi: accountAbiWithAnchorErrors, data }).errorName;
    } catch {
      /* an error of the target contract, not ours */
    }
  }
  if (name) return REVERT_MEANING[name] ? `${name}: ${REVERT_MEANING[name]}` : name;
  return e instanceof BaseError ? e.shortMessage : String(e);
}

export function chainSteps(ctx: CycleContext) {
  const { db, access } = ctx;
  const send = ctx.deps.sendExecution ?? sendGovernanceProofDirect;

  return {
    /** createAnchor, once: an existing anchor is found with its transaction. */
    async createChainAnchor(i: IntentStepInput): Promise<{ txHash: Hex; sent: boolean }> {
      const c = await ctx.loadChain(i.intentId, i.chain, 'anchoring');
      if (c.record.createAnchorTx) return { txHash: c.record.createAnchorTx, sent: false };
      const w = access.writer(i.chain);
      // An account that cannot pay its legs fails them here, before an anchor exists: a proven anchor whose legs
      // fail stays executable by anyone once the account is funded, until the intent's expires_at (the leaf's deadline).
      const need = c.plan.legs.reduce((a, l) => a + l.value, 0n);
      if (need > 0n) {
        const account = c.plan.legs[0]!.account;
        const balance = await w.public.getBalance({ address: account });
        if (balance < need) {
          throw cycleFailure(
            'InsufficientFunds',
            `the account ${account} holds ${balance} wei but the legs on ${i.chain} send ${need} wei; nothing was anchored`,
          );
        }
      }
      const res = await heartbeating(
        createAnchor(w, c.plan.anchor, {
          commitmentRoot: c.plan.commitmentRoot,
          operationId: c.plan.operationId,
          ledgerTxHash: c.plan.ledgerTxHash,
          leafCount: c.plan.leafCount,
        }),
      );
      if (res.tx && res.tx.status !== 'success') throw new Error(`createAnchor reverted (tx ${res.tx.txHash})`);
      const txHash =
        res.tx?.txHash ?? (await ctx.foundTx(`AnchorCreated log of anchor ${c.plan.anchorId}`, findAnchorTx(w, c.plan.anchor, c.plan.anchorId, 'created')));
      await updateLoadedChain(db, i, c, { record: (rec) => void (rec.createAnchorTx = txHash) });
      return { txHash, sent: !!res.tx };
    },

    /** executeComprehensiveProof with the aggregate, once: a proven anchor is found with its transaction. */
    async proveChainAnchor(i: IntentStepInput): Promise<{ txHash: Hex; sent: boolean }> {
      const c = await ctx.loadChain(i.intentId, i.chain);
      if (c.record.proveTx) return { txHash: c.record.proveTx, sent: false };
      const att = c.record.attestation;
      if (!att) throw cycleFailure('AttestationMissing', 'no attestation recorded');
      const w = access.writer(i.chain);
      const res = await heartbeating(
        executeComprehensiveProof(w, c.plan.anchor, { anchorId: c.plan.anchorId, signerBitmap: BigInt(att.signerBitmap), signature: att.aggregateSignature }),
      );
      if (res.tx && res.tx.status !== 'success') throw new Error(`executeComprehensiveProof reverted (tx ${res.tx.txHash})`);
      const txHash =
        res.tx?.txHash ?? (await ctx.foundTx(`AnchorProven log of anchor ${c.plan.anchorId}`, findAnchorTx(w, c.plan.anchor, c.plan.anchorId, 'proven')));
      await updateLoadedChain(db, i, c, { step: 'anchored', record: (rec) => void (rec.proveTx = txHash) });
      return { txHash, sent: !!res.tx };
    },

    /**
     * executeGovernanceProofDirect for one leg, exactly once: a consumed leaf is found with its transaction. The
     * account must hold the value a native leg sends; a call that reverts fails the leg with the decoded reason.
     */
    async executeChainLeg(i: LegStepInput): Promise<{ txHash: Hex; sent: boolean }> {
      const c = await ctx.loadChain(i.intentId, i.chain, 'executing');
      const { leg, index } = ctx.legOf(c.plan, i.legId);
      const done = c.record.legs.find((l) => l.legId === i.legId)?.executionTx;
      if (done) return { txHash: done, sent: false };
      const w = access.writer(i.chain);
      const proof = proofForLeg(c.plan, index);
      // a proven leaf is executable by anyone until its deadline: a failed leg must say so, not just "not executed"
      const stillValid = `; its proof stays valid until ${new Date(Number(proof.deadline) * 1000).toISOString()} (the intent's expires_at): anyone may still run the leg before then if the call would succeed`;
      const record = async (txHash: Hex, sent: boolean) => {
        await updateLoadedChain(db, i, c, {
          step: 'executed',
          record: (rec) => {
            const l = rec.legs.find((x) => x.legId === i.legId)!;
            l.executionTx = txHash;
          },
        });
        return { txHash, sent };
      };
      const found = async () =>
        (await isLegExecuted(w, c.plan.anchor, proof))
          ? ctx.foundTx(
              `Executed log of anchor ${c.plan.anchorId} leaf ${proof.leafIndex} on ${leg.account}`,
              findExecutionTx(w, {
                proofAnchor: c.plan.anchor,
                account: leg.account,
                anchorId: c.plan.anchorId,
                leafIndex: proof.leafIndex,
                maxRange: access.entry(i.chain).logRangeBlocks,
              }),
            )
          : undefined;
      const already = await found();
      if (already) return record(already, false);
      if (leg.value > 0n) {
        const balance = await w.public.getBalance({ address: leg.account });
        if (balance < leg.value) {
          throw cycleFailure(
            'InsufficientFunds',
            `leg ${leg.legId}: the account ${leg.account} holds ${balance} wei but the leg sends ${leg.value} wei${stillValid}`,
          );
        }
      }
      let hash: Hex;
      try {
        hash = await send(w, leg.account, { target: leg.target, value: leg.value, data: leg.data, proof });
      } catch (e) {
        // a concurrent or earlier attempt consumed the leaf between the check and the send
        const again = await found();
        if (again) return record(again, false);
        if (revertErrorName(e) || revertData(e))
          throw cycleFailure('ExecutionReverted', `leg ${leg.legId}: the account reverted the call (${explainRevert(e)})${stillValid}`);
        throw e instanceof BaseError ? new Error(e.shortMessage) : e;
      }
      beat({ txHash: hash });
      const receipt = await ctx.waitReceipt(w, hash);
      if (receipt.status !== 'success') {
        const again = await found();
        if (again) return record(again, false);
        // replay the mined call on the state before its block to learn why it reverted
        const sent = await w.public.getTransaction({ hash });
        const why = await w.public
          .call({ to: sent.to ?? undefined, data: sent.input, value: sent.value, account: sent.from, blockNumber: receipt.blockNumber - 1n })
          .then(
            () => 'reverted',
            (e: unknown) => explainRevert(e),
          );
        throw cycleFailure(
          'ExecutionReverted',
          `leg ${leg.legId}: execution transaction ${hash} reverted on chain (${why}); nothing was executed${stillValid}`,
        );
      }
      return record(hash, true);
    },
  };
}
