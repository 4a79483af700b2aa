/**
 * A batch anchor: the legs of several intents on one chain under one Merkle root, one quorum signature and one
 * on-chain verification (the `batched` proof class). The members' legs are the leaves in batch order (member by
 * member, each member's legs in intent order); the anchor's operation id and ledger tx hash are
 * formulas.batchOperationId / batchLedgerTxHash over the members. Shared by the gateway (which plans and sends it),
 * the validators (which recompute it from the members' ledger transactions) and the offline verifier (which checks
 * a member's legs against the root with their Merkle proofs).
 *
 * A member's view of the batch is an IntentAnchorPlan whose anchor fields are the batch's and whose legs, leaves'
 * commitments and proofs are the member's own (proofs[k].leafIndex is leg k's leaf in the batch): everything that
 * executes, observes or records a leg works on it as on an intent's own anchor.
 */
import type { Address, Hex } from 'viem';
import { batchLedgerTxHash, batchOperationId, MAX_LEAVES, planBatchAnchor, type AnchorPlan } from '../../chain/formulas.js';
import { type ProofClass, storedProofClass } from '../proof-class.js';
import { type IntentAnchorPlan, legsForChain } from './anchor.js';
import { HEX32 } from './fields.js';
import { IntentError, type CanonicalIntent } from './model.js';

/** The proof class of a parsed intent (its intentData part). */
export function intentProofClass(intent: CanonicalIntent): ProofClass {
  return storedProofClass(intent.parts[0]);
}

export interface BatchMemberInput {
  intent: CanonicalIntent;
  /** the ledger transaction that stored the intent, 32 bytes */
  ledgerTxHash: Hex | string;
}

export interface BatchPlan {
  /** the batch anchor (leaves of every member) */
  anchor: AnchorPlan;
  /** per member, in batch order: its view of the batch */
  members: IntentAnchorPlan[];
  /** per member: the leaf of its first leg */
  offsets: number[];
}

const hash32 = (h: string): Hex => {
  const x = (h.startsWith('0x') ? h : `0x${h}`).toLowerCase();
  if (!HEX32.test(x)) throw new IntentError('ledgerTxHash must be 32 bytes', 'ledgerTxHash');
  return x as Hex;
};

/** The batch anchor of `members` on one chain; throws IntentError when a member has no leg there or the batch is too large. */
export function planIntentBatch(members: readonly BatchMemberInput[], p: { chainId: bigint; proofAnchor: Address }): BatchPlan {
  if (!members.length) throw new IntentError('a batch needs at least one member', 'members');
  const ids = new Set(members.map((m) => m.intent.operationId.toLowerCase()));
  if (ids.size !== members.length) throw new IntentError('an intent appears twice in the batch', 'members');
  const legs = members.map((m) => {
    const l = legsForChain(m.intent, p.chainId);
    if (!l.length) throw new IntentError(`intent ${m.intent.intentId} has no leg on chain ${p.chainId}`, 'legs');
    return l;
  });
  const total = legs.reduce((a, l) => a + l.length, 0);
  if (total > MAX_LEAVES) throw new IntentError(`a batch holds at most ${MAX_LEAVES} legs, not ${total}`, 'legs');
  const refs = members.map((m) => ({ operationId: m.intent.operationId, ledgerTxHash: hash32(String(m.ledgerTxHash)) }));
  const anchor = planBatchAnchor({
    chainId: p.chainId,
    anchor: p.proofAnchor,
    operationId: batchOperationId(refs),
    ledgerTxHash: batchLedgerTxHash(refs),
    legs: members.flatMap((m, i) =>
      legs[i]!.map((l) => ({
        account: m.intent.account,
        adiUrl: m.intent.adiUrl,
        target: l.target,
        value: l.value,
        data: l.data,
        // no leg may execute after its intent expires (ProofAnchor.consume checks it)
        deadline: BigInt(m.intent.expiresAt),
        gasLimit: l.gasLimit,
      })),
    ),
  });
  const offsets: number[] = [];
  let at = 0;
  const views = legs.map((l) => {
    offsets.push(at);
    const view: IntentAnchorPlan = {
      ...anchor,
      commitments: anchor.commitments.slice(at, at + l.length),
      proofs: anchor.proofs.slice(at, at + l.length),
      legs: l,
    };
    at += l.length;
    return view;
  });
  return { anchor, members: views, offsets };
}
