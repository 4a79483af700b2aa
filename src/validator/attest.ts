/**
 * Attestation, before execution: the intent's ledger transaction executed under the identity's book with a page's
 * threshold met, the intent recomputed from its stored bytes, legs on the chain, created_at not beyond now +
 * CLOCK_SKEW_S, not expired, of the standard class (a batched intent is attested in its batch: batch.ts), no conflicting anchor for the operation id (in this node's store, and none proven on
 * chain since created_at) -> a BLS signature over formulas.anchorMessage.
 */
import type { Hex } from 'viem';
import { proofAnchorAbi } from '../chain/abi/index.js';
import { readAnchorState } from '../chain/anchor.js';
import { anchorMessage } from '../chain/formulas.js';
import { blockAtOrBefore, scanLogs } from '../chain/logs.js';
import { intentProofClass } from '../protocol/intent/index.js';
import type { AttestRequest, AttestResponse } from '../protocol/validator-wire.js';
import type { ChainCtx, NodeContext } from './context.js';
import { refuse } from './refusal.js';

/**
 * Clock skew tolerated between the gateway that stamps an intent's created_at, the validators and the chains.
 * No validator attests an intent before created_at - CLOCK_SKEW_S, so no anchor of its operation can have been
 * proven before then: the on-chain conflict search starts at a block from created_at - 2 * CLOCK_SKEW_S.
 */
export const CLOCK_SKEW_S = 300;

export function createAttestation(ctx: NodeContext): (req: AttestRequest) => Promise<AttestResponse> {
  const { keys, index, store, now, chainCtx, loadIntent, validatorSet, planFor, signOnce } = ctx;

  /** A block at or before `at`; the last answer is reused for times up to a minute after it (a slightly wider search). */
  async function conflictSearchStart(c: ChainCtx, at: bigint): Promise<bigint> {
    if (c.blockAt && at >= c.blockAt.at && at - c.blockAt.at <= 60n) return c.blockAt.block;
    const block = await blockAtOrBefore(c.clients, at);
    c.blockAt = { at, block };
    return block;
  }

  async function attest(req: AttestRequest): Promise<AttestResponse> {
    const t0 = performance.now();
    if (!req || typeof req.intentTxId !== 'string' || typeof req.chain !== 'string' || !req.anchor)
      refuse('BAD_REQUEST', 'intentTxId, chain and anchor are required');
    const c = chainCtx(req.chain);
    const [loaded, set] = await Promise.all([loadIntent(req.intentTxId), validatorSet(c)]);
    const t = now();
    if (loaded.intent.expiresAt <= t) refuse('EXPIRED', `intent expired at ${new Date(loaded.intent.expiresAt * 1000).toISOString()}`);
    if (loaded.intent.createdAt > t + CLOCK_SKEW_S) {
      refuse(
        'NOT_YET_VALID',
        `intent created_at ${new Date(loaded.intent.createdAt * 1000).toISOString()} is more than ${CLOCK_SKEW_S} s ahead of this validator's clock`,
      );
    }
    if (intentProofClass(loaded.intent) === 'batched')
      refuse('WRONG_PROOF_CLASS', `intent ${loaded.intent.intentId} is of the batched class: it is anchored in a batch (attest-batch), never alone`);
    const plan = planFor(loaded, c);
    const a = req.anchor;
    const cmp = (field: string, got: unknown, want: string) => {
      if (String(got ?? '').toLowerCase() !== want.toLowerCase())
        refuse('ANCHOR_MISMATCH', `anchor.${field} ${String(got)} does not match the intent (recomputed ${want})`);
    };
    if (a.proofAnchor !== undefined) cmp('proofAnchor', a.proofAnchor, plan.anchor);
    cmp('operationId', a.operationId, plan.operationId);
    cmp('ledgerTxHash', a.ledgerTxHash, plan.ledgerTxHash);
    cmp('leafCount', a.leafCount, plan.leafCount.toString());
    cmp('commitmentRoot', a.commitmentRoot, plan.commitmentRoot);
    cmp('anchorId', a.anchorId, plan.anchorId);
    const chainId = BigInt(c.entry.chainId);
    /** Refuses if this node attested another anchor for the operation; true if it attested this one. */
    const attestedBefore = () => {
      const prior = store.attestedAnchor(chainId, plan.operationId);
      if (prior && prior !== plan.anchorId.toLowerCase()) {
        refuse('CONFLICTING_ANCHOR', `already attested anchor ${prior} for operation ${plan.operationId} on ${c.entry.name}`);
      }
      return prior !== undefined;
    };
    attestedBefore();
    // another anchor for this operation already PROVEN on chain (by any quorum) is a conflict too; merely
    // created ones are not (createAnchor is permissionless, so they prove nothing)
    const fromBlock = await conflictSearchStart(c, BigInt(loaded.intent.createdAt - 2 * CLOCK_SKEW_S));
    const created = await scanLogs(
      c.clients,
      fromBlock,
      (from, to) =>
        c.clients.public.getContractEvents({
          address: plan.anchor,
          abi: proofAnchorAbi,
          eventName: 'AnchorCreated',
          args: { operationId: plan.operationId },
          fromBlock: from,
          toBlock: to,
        }),
      { maxRange: c.entry.logRangeBlocks },
    );
    for (const ev of created) {
      const other = (ev.args as { anchorId?: Hex }).anchorId;
      if (!other || other.toLowerCase() === plan.anchorId.toLowerCase()) continue;
      if ((await readAnchorState(c.clients, plan.anchor, other)).status === 'proven') {
        refuse('CONFLICTING_ANCHOR', `anchor ${other} for operation ${plan.operationId} is already proven on ${c.entry.name}`);
      }
    }
    // checked again, and recorded in the same turn of the event loop: while the search above was awaited, a request
    // for another ledger tx of the same operation may have been attested here. On disk before the signature leaves,
    // also when a concurrent identical request recorded it a moment ago.
    await (attestedBefore() ? store.durable() : store.recordAttestation(chainId, plan.operationId, plan.anchorId));
    const message = anchorMessage({ chainId, anchor: plan.anchor, anchorId: plan.anchorId, validatorSetRoot: set.root });
    const signature = signOnce(message);
    return {
      ok: true,
      kind: 'attestation',
      validatorIndex: index,
      publicKey: keys.bls.publicKey,
      chainId: chainId.toString(),
      anchorId: plan.anchorId,
      operationId: plan.operationId,
      validatorSetRoot: set.root,
      message,
      signature,
      authority: loaded.authority,
      legs: plan.legs.map((l) => l.legId),
      elapsedMs: Math.round(performance.now() - t0),
    };
  }

  return attest;
}
