/** An intent's legs per chain and the anchor that commits to them on one chain. */
import type { Address, Hex } from 'viem';
import { planAnchor, type AnchorPlan } from '../../chain/formulas.js';
import { HEX32 } from './fields.js';
import { IntentError, type CanonicalIntent, type IntentLeg } from './model.js';

/** The legs of `chainId`, in intent order (leg i of the chain = leaf i of its anchor). */
export function legsForChain(intent: CanonicalIntent, chainId: bigint): IntentLeg[] {
  return intent.legs.filter((l) => l.chainId === chainId);
}

export interface IntentAnchorPlan extends AnchorPlan {
  legs: IntentLeg[];
}

/**
 * The anchor of this intent on one chain: formulas.planAnchor over the chain's legs, bound to the
 * identity's account, ADI, operation id and the ledger transaction that stored the intent.
 */
export function planIntentAnchor(intent: CanonicalIntent, p: { chainId: bigint; proofAnchor: Address; ledgerTxHash: Hex | string }): IntentAnchorPlan {
  const legs = legsForChain(intent, p.chainId);
  if (!legs.length) throw new IntentError(`intent has no leg on chain ${p.chainId}`, 'legs');
  const h = p.ledgerTxHash.startsWith('0x') ? p.ledgerTxHash : `0x${p.ledgerTxHash}`;
  if (!HEX32.test(h)) throw new IntentError('ledgerTxHash must be 32 bytes', 'ledgerTxHash');
  const plan = planAnchor({
    chainId: p.chainId,
    anchor: p.proofAnchor,
    account: intent.account,
    adiUrl: intent.adiUrl,
    operationId: intent.operationId,
    ledgerTxHash: h.toLowerCase() as Hex,
    // no leg may execute after the intent expires (ProofAnchor.consume checks it)
    deadline: BigInt(intent.expiresAt),
    legs: legs.map((l) => ({ target: l.target, value: l.value, data: l.data, gasLimit: l.gasLimit })),
  });
  return { ...plan, legs };
}
