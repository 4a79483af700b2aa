/**
 * Batch anchors at a validator (the `batched` proof class; src/protocol/intent/batch.ts).
 *
 * Attestation: every member is checked as attest.ts checks one intent (executed under its book with a page's
 * threshold met, recomputed from its stored bytes, legs on the chain, its account, created_at not beyond now +
 * CLOCK_SKEW_S, not expired) and must be of the batched class; then the batch anchor is recomputed from the members
 * and must equal the request's. A member that fails is named in a 422 BATCH_MEMBER_REFUSED with its own code and
 * reason, and nothing is signed: the gateway leaves it out and asks again with the rest.
 *
 * One anchor per intent and chain, whatever the class: the node's store keys every attestation by (chain, the
 * intent's operation id), so a member is refused (CONFLICTING_ANCHOR) when this node attested another anchor for it,
 * alone or in another batch, and the batch's record for each member is on disk before the signature leaves. A
 * standard intent is never a member and a batched intent never has an anchor of its own (attest.ts refuses it), so
 * the class the client signed decides the path; an anchor already proven on chain for a member's operation id is a
 * conflict too. Two quorums of one set share an honest validator, so no intent gets two proven anchors.
 *
 * Observation and result records of a member's leg name the batch: the member's view of the batch plan
 * (memberPlanFor) then stands where the intent's own plan stands.
 */
import type { Hex } from 'viem';
import { proofAnchorAbi } from '../chain/abi/index.js';
import { readAnchorState } from '../chain/anchor.js';
import { anchorMessage } from '../chain/formulas.js';
import { blockAtOrBefore, scanLogs } from '../chain/logs.js';
import { intentProofClass, type IntentAnchorPlan, IntentError, planIntentBatch, type BatchPlan } from '../protocol/intent/index.js';
import type { AttestBatchRequest, AttestBatchResponse, BatchRef, MemberRefusal } from '../protocol/validator-wire.js';
import { CLOCK_SKEW_S } from './attest.js';
import type { ChainCtx, LoadedIntent, NodeContext } from './context.js';
import { coalescingCache } from '../net/coalesce.js';
import { refuse, ValidatorRefusal } from './refusal.js';

/** A refusal of a whole batch that names its refused members (answered 422 with `members`). */
export class BatchRefusal extends ValidatorRefusal {
  constructor(readonly members: MemberRefusal[]) {
    super('BATCH_MEMBER_REFUSED', `${members.length} member(s) refused: ${members.map((m) => `${m.intentTxId} ${m.code}: ${m.reason}`).join('; ')}`);
  }
}

export interface BatchPlanning {
  /** The batch's members loaded (each checked as an intent) and its plan on the chain; refuses as the members do. */
  planBatch(c: ChainCtx, batch: BatchRef): Promise<{ loaded: LoadedIntent[]; plan: BatchPlan }>;
  /** The intent's own plan, or, for a batch, its view of the batch's (refused when it is not a member). */
  memberPlanFor(loaded: LoadedIntent, c: ChainCtx, batch: BatchRef | undefined, intentTxId: string): Promise<IntentAnchorPlan>;
}

export function createBatchPlanning(ctx: NodeContext): BatchPlanning {
  // the members' observations and result writes of one batch come together: one plan for them all
  const plans = coalescingCache<string, { loaded: LoadedIntent[]; plan: BatchPlan }>(1_000);

  function planBatch(c: ChainCtx, batch: BatchRef) {
    const key = `${c.entry.name}:${batch.members.map((m) => m.toLowerCase()).join(',')}`;
    return plans(key, async () => {
      if (new Set(batch.members.map((m) => m.toLowerCase())).size !== batch.members.length) refuse('BAD_REQUEST', 'a member appears twice in the batch');
      const loaded = await Promise.all(batch.members.map((m) => ctx.loadIntent(m)));
      let plan: BatchPlan;
      try {
        plan = planIntentBatch(
          loaded.map((l) => ({ intent: l.intent, ledgerTxHash: l.txHash })),
          { chainId: BigInt(c.entry.chainId), proofAnchor: c.entry.contracts!.proofAnchor },
        );
      } catch (e) {
        if (e instanceof IntentError) refuse('ANCHOR_MISMATCH', `the batch does not plan: ${e.message}`);
        throw e;
      }
      return { loaded, plan: plan! };
    });
  }

  async function memberPlanFor(loaded: LoadedIntent, c: ChainCtx, batch: BatchRef | undefined, intentTxId: string): Promise<IntentAnchorPlan> {
    if (!batch) return ctx.planFor(loaded, c);
    const at = batch.members.findIndex((m) => m.toLowerCase() === intentTxId.toLowerCase());
    if (at < 0) refuse('ANCHOR_MISMATCH', `intent ${intentTxId} is not a member of the batch`);
    // each member's own checks (its legs on the chain, its account) before the batch is planned
    ctx.planFor(loaded, c);
    return (await planBatch(c, batch)).plan.members[at]!;
  }

  return { planBatch, memberPlanFor };
}

export function createBatchAttestation(ctx: NodeContext, planning: BatchPlanning): (req: AttestBatchRequest) => Promise<AttestBatchResponse> {
  const { keys, index, store, now, chainCtx, loadIntent, validatorSet, planFor, signOnce } = ctx;

  /** The member's own checks; its refusal, or undefined when it passes. */
  async function checkMember(c: ChainCtx, intentTxId: string, t: number): Promise<MemberRefusal | undefined> {
    try {
      const loaded = await loadIntent(intentTxId);
      if (loaded.intent.expiresAt <= t) refuse('EXPIRED', `intent expired at ${new Date(loaded.intent.expiresAt * 1000).toISOString()}`);
      if (loaded.intent.createdAt > t + CLOCK_SKEW_S)
        refuse('NOT_YET_VALID', `intent created_at is more than ${CLOCK_SKEW_S} s ahead of this validator's clock`);
      if (intentProofClass(loaded.intent) !== 'batched')
        refuse(
          'WRONG_PROOF_CLASS',
          `intent ${loaded.intent.intentId} is of the ${intentProofClass(loaded.intent)} class: it is anchored alone, never in a batch`,
        );
      planFor(loaded, c);
      return undefined;
    } catch (e) {
      if (e instanceof ValidatorRefusal) return { intentTxId, code: e.code, reason: e.message };
      throw e;
    }
  }

  /** Members with an anchor of their own operation id proven on chain (by any quorum) other than this batch's. */
  async function provenElsewhere(c: ChainCtx, members: readonly string[], loaded: LoadedIntent[], plan: BatchPlan): Promise<MemberRefusal[]> {
    const from = BigInt(Math.min(...loaded.map((l) => l.intent.createdAt)) - 2 * CLOCK_SKEW_S);
    const fromBlock = await blockAtOrBefore(c.clients, from);
    const created = await scanLogs(
      c.clients,
      fromBlock,
      (f, to) =>
        c.clients.public.getContractEvents({
          address: plan.anchor.anchor,
          abi: proofAnchorAbi,
          eventName: 'AnchorCreated',
          args: { operationId: loaded.map((l) => l.intent.operationId) },
          fromBlock: f,
          toBlock: to,
        }),
      { maxRange: c.entry.logRangeBlocks },
    );
    const out: MemberRefusal[] = [];
    for (const ev of created) {
      const { anchorId: other, operationId } = ev.args as { anchorId?: Hex; operationId?: Hex };
      if (!other || !operationId || other.toLowerCase() === plan.anchor.anchorId.toLowerCase()) continue;
      if ((await readAnchorState(c.clients, plan.anchor.anchor, other)).status !== 'proven') continue;
      const i = loaded.findIndex((l) => l.intent.operationId.toLowerCase() === operationId.toLowerCase());
      out.push({
        intentTxId: members[i]!,
        code: 'CONFLICTING_ANCHOR',
        reason: `anchor ${other} for operation ${operationId} is already proven on ${c.entry.name}`,
      });
    }
    return out;
  }

  return async function attestBatch(req: AttestBatchRequest): Promise<AttestBatchResponse> {
    const t0 = performance.now();
    const c = chainCtx(req.chain);
    const chainId = BigInt(c.entry.chainId);
    const set = await validatorSet(c);
    const t = now();
    const refused = (await Promise.all(req.batch.members.map((m) => checkMember(c, m, t)))).filter((r) => r !== undefined);
    if (refused.length) throw new BatchRefusal(refused);
    const { loaded, plan } = await planning.planBatch(c, req.batch);
    const a = req.anchor;
    const cmp = (field: string, got: unknown, want: string) => {
      if (String(got ?? '').toLowerCase() !== want.toLowerCase())
        refuse('ANCHOR_MISMATCH', `anchor.${field} ${String(got)} does not match the batch (recomputed ${want})`);
    };
    if (a.proofAnchor !== undefined) cmp('proofAnchor', a.proofAnchor, plan.anchor.anchor);
    cmp('operationId', a.operationId, plan.anchor.operationId);
    cmp('ledgerTxHash', a.ledgerTxHash, plan.anchor.ledgerTxHash);
    cmp('leafCount', a.leafCount, plan.anchor.leafCount.toString());
    cmp('commitmentRoot', a.commitmentRoot, plan.anchor.commitmentRoot);
    cmp('anchorId', a.anchorId, plan.anchor.anchorId);
    const anchorId = plan.anchor.anchorId.toLowerCase();
    /** Members this node attested under another anchor (alone or in another batch). */
    const conflicts = (): MemberRefusal[] =>
      loaded.flatMap((l, i) => {
        const prior = store.attestedAnchor(chainId, l.intent.operationId);
        return prior && prior !== anchorId
          ? [
              {
                intentTxId: req.batch.members[i]!,
                code: 'CONFLICTING_ANCHOR',
                reason: `already attested anchor ${prior} for operation ${l.intent.operationId} on ${c.entry.name}`,
              },
            ]
          : [];
      });
    let bad = conflicts();
    if (!bad.length) bad = await provenElsewhere(c, req.batch.members, loaded, plan);
    // checked again and recorded in the same turn of the event loop (another request may have been attested while
    // the search was awaited); on disk before the signature leaves
    if (!bad.length) bad = conflicts();
    if (bad.length) throw new BatchRefusal(bad);
    await Promise.all(
      loaded.map((l) =>
        store.attestedAnchor(chainId, l.intent.operationId) ? store.durable() : store.recordAttestation(chainId, l.intent.operationId, anchorId),
      ),
    );
    const message = anchorMessage({ chainId, anchor: plan.anchor.anchor, anchorId: plan.anchor.anchorId, validatorSetRoot: set.root });
    return {
      ok: true,
      kind: 'batch-attestation',
      validatorIndex: index,
      publicKey: keys.bls.publicKey,
      chainId: chainId.toString(),
      anchorId: plan.anchor.anchorId,
      operationId: plan.anchor.operationId,
      validatorSetRoot: set.root,
      message,
      signature: signOnce(message),
      members: loaded.map((l, i) => ({
        intentTxId: req.batch.members[i]!,
        operationId: l.intent.operationId,
        authority: l.authority,
        legs: plan.members[i]!.legs.map((x) => x.legId),
      })),
      elapsedMs: Math.round(performance.now() - t0),
    };
  };
}
