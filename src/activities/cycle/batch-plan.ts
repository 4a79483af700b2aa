/**
 * A batched cycle's batch, as the gateway's cycle steps see it: the batch anchor recomputed from its members as
 * stored (src/protocol/intent/batch.ts), and what the validators are told of it in observations and result writes.
 */
import type { ChainCycleRecord, BatchMembership } from '../../protocol/cycle-record.js';
import { planIntentBatch, type BatchPlan, type CanonicalIntent } from '../../protocol/intent/index.js';
import type { BatchRef } from '../../protocol/validator-wire.js';
import type { ChainAccess } from '../chain-access.js';
import { coalescingCache } from '../../net/coalesce.js';

export function batchPlanning(access: ChainAccess, loadIntent: (intentId: string) => Promise<{ row: { txHash: string | null }; intent: CanonicalIntent }>) {
  // by anchor id: a batch's members ask for it together after their anchor (their execute, observe and record steps)
  const plans = coalescingCache<string, BatchPlan>(200);

  /** The batch anchor of an attested batch, recomputed from its members as stored (one at a time per anchor, cached). */
  function batchPlanOf(chain: string, b: BatchMembership): Promise<BatchPlan> {
    return plans(`${chain}:${b.anchorId}`, async () => {
      const e = access.entry(chain);
      const members = await Promise.all(
        (b.members ?? []).map(async (m) => {
          const { row, intent } = await loadIntent(m.intentId);
          return { intent, ledgerTxHash: row.txHash ?? '' };
        }),
      );
      const plan = planIntentBatch(members, { chainId: BigInt(e.chainId), proofAnchor: e.contracts.proofAnchor });
      if (plan.anchor.anchorId.toLowerCase() !== b.anchorId?.toLowerCase())
        throw new Error(`batch ${b.id} recomputes to anchor ${plan.anchor.anchorId}, not ${b.anchorId}`);
      return plan;
    });
  }

  /** What the validators are told of a batched cycle's batch (its members' ledger transactions); none for a standard one. */
  function batchRef(record: ChainCycleRecord): BatchRef | undefined {
    return record.batch?.anchorId && record.batch.members ? { members: record.batch.members.map((m) => m.ledgerTxId) } : undefined;
  }

  return { batchPlanOf, batchRef };
}
