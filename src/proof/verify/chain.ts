/**
 * Per chain: every leg of the intent accounted for (proven or failed), the anchor re-planned from the intent (a
 * batched intent's: from the batch's members, the intent one of them) with each leg's Merkle proof, the validator set root, the attestation aggregate over formulas.anchorMessage, and the
 * createAnchor / executeComprehensiveProof transactions carrying exactly that anchor and aggregate; then each leg.
 */
import { decodeFunctionData, getAddress, type Hex } from 'viem';
import { proofAnchorAbi } from '../../chain/abi/index.js';
import { anchorId as anchorIdOf, anchorMessage, batchLedgerTxHash, batchOperationId, validatorSetRoot, verifyMerkleProof } from '../../chain/formulas.js';
import { planIntentAnchor, type IntentAnchorPlan } from '../../protocol/intent/index.js';
import type { BundleChain } from '../bundle.js';
import { ensure, eq, index, int, ledger0x, same, type TrustedAnchors, uint, type VerifyContext } from './checks.js';
import { checkProvenTx } from './evidence.js';
import { verifyLeg } from './leg.js';
import { quorumCheck } from './quorum.js';

/** The chains of the bundle, each chain's checks, and the anchors the caller trusts (opts.trust). */
export function verifyChains(ctx: VerifyContext, trust: TrustedAnchors | undefined): void {
  const { b, check, intent } = ctx;
  check('chains', () => {
    ensure(Array.isArray(b.chains) && b.chains.length > 0, 'no chains');
    const names = b.chains.map((c) => c.chain);
    ensure(new Set(names).size === names.length, `a chain is listed twice: ${names.join(', ')}`);
    const legIds = b.chains.flatMap((c) => (Array.isArray(c.legs) ? c.legs.map((l) => l.leg_id) : []));
    ensure(Array.isArray(b.failed_legs), 'failed_legs missing');
    const failed = b.failed_legs.map((l) => l.leg_id);
    const all = [...legIds, ...failed];
    ensure(new Set(all).size === all.length, 'a leg is listed twice (proven or failed)');
    ensure(intent, 'not checked: the intent did not parse');
    // every leg of the intent is accounted for: proven here, or named as failed (a leg left out is not a proof)
    for (const l of intent.legs) ensure(all.includes(l.legId), `leg ${l.legId} of the intent is neither proven nor listed as failed`);
    ensure(all.length === intent.legs.length, `${all.length} legs listed for ${intent.legs.length} in the intent`);
    for (const f of b.failed_legs) {
      const chain = intent.legs.find((l) => l.legId === f.leg_id)!.chain;
      // exactly the intent's chain name (as a proven chain's name must be)
      ensure(f.chain === chain, `failed leg ${f.leg_id} chain: ${f.chain} != ${chain}`);
      ensure(typeof f.reason === 'string' && f.reason.length > 0, `failed leg ${f.leg_id} has no reason`);
    }
    const partial = failed.length ? `; PARTIAL: ${failed.length} failed (${b.failed_legs.map((f) => `${f.leg_id}: ${f.reason}`).join('; ')})` : '';
    return `${names.join(', ')}: ${legIds.length} of ${intent.legs.length} leg(s) proven (${legIds.join(', ')})${partial}`;
  });
  if (Array.isArray(b.chains)) for (const c of b.chains) if (c && typeof c === 'object') verifyChain(ctx, c);
  for (const [name, t] of Object.entries(trust ?? {})) {
    check(`trust[${name}]`, () => {
      const c = Array.isArray(b.chains) ? b.chains.find((x) => x?.chain === name) : undefined;
      ensure(c, `the bundle has no chain ${name}`);
      ensure(same(c.proof_anchor, t.proofAnchor), `ProofAnchor ${c.proof_anchor} is not the trusted ${t.proofAnchor}`);
      if (t.validatorSetRoot)
        ensure(same(c.validator_set.root, t.validatorSetRoot), `validator set ${c.validator_set.root} is not the trusted ${t.validatorSetRoot}`);
      return `ProofAnchor ${c.proof_anchor}${t.validatorSetRoot ? ` and validator set ${c.validator_set.root}` : ''} as trusted`;
    });
  }
}

/**
 * A batched intent's view of its batch anchor (src/protocol/intent/batch.ts): the intent must be the member the
 * bundle says it is (its operation id and ledger transaction), the anchor's operation id and ledger tx hash are
 * recomputed over the members, its id from those and the stated root; each leg of the bundle sits at its leaf of
 * the batch (legs and leaves indexed by batch leaf), and the caller's Merkle checks prove it is under that root.
 */
function batchView(own: IntentAnchorPlan, c: BundleChain, ledgerTxHash: Hex): IntentAnchorPlan {
  const b = c.batch!;
  ensure(Array.isArray(b.members) && b.members.length > 0, 'batch has no members');
  const members = b.members.map((m) => ({ operationId: m.operation_id as Hex, ledgerTxHash: ledger0x(m.tx_hash) }));
  const me = members[index(b.index, 'batch.index')];
  ensure(me, `batch member ${b.index} does not exist`);
  eq(me.operationId, own.operationId, `batch member ${b.index} operation id`);
  eq(me.ledgerTxHash, ledgerTxHash, `batch member ${b.index} ledger transaction`);
  const content = {
    chainId: own.chainId,
    anchor: own.anchor,
    commitmentRoot: c.anchor.commitment_root as Hex,
    operationId: batchOperationId(members),
    ledgerTxHash: batchLedgerTxHash(members),
    leafCount: BigInt(int(c.anchor.leaf_count, 'leaf_count')),
  };
  const n = Number(content.leafCount);
  const view: IntentAnchorPlan = {
    ...content,
    anchorId: anchorIdOf(content),
    leaves: new Array(n),
    commitments: new Array(n),
    proofs: new Array(n),
    legs: new Array(n),
  };
  for (const l of Array.isArray(c.legs) ? c.legs : []) {
    const k = own.legs.findIndex((x) => x.legId === l.leg_id);
    const i = index(l.leaf_index, `leg ${l.leg_id}.leaf_index`);
    ensure(k >= 0 && i < n, `leg ${l.leg_id} is not a leg of the intent on this chain, or its leaf ${i} is beyond the batch's ${n}`);
    view.legs[i] = own.legs[k]!;
    view.leaves[i] = own.leaves[k]!;
    view.commitments[i] = own.commitments[k]!;
    view.proofs[i] = { ...own.proofs[k]!, leafIndex: BigInt(i), merkleProof: l.merkle_proof as Hex[] };
  }
  return view;
}

function verifyChain(ctx: VerifyContext, c: BundleChain) {
  const { b, check, intent } = ctx;
  const L = b.ledger;
  const P = `chain[${c.chain}]`;
  let plan: IntentAnchorPlan | undefined;
  let chainId = 0n;
  check(`${P}.anchor`, () => {
    ensure(intent, 'not checked: the intent did not parse');
    chainId = BigInt(int(c.evm_chain_id, 'evm_chain_id'));
    const own = planIntentAnchor(intent, { chainId, proofAnchor: getAddress(c.proof_anchor), ledgerTxHash: L.tx_hash });
    plan = c.batch ? batchView(own, c, ledger0x(L.tx_hash)) : own;
    for (const l of own.legs) ensure(l.chain === c.chain, `leg ${l.legId} with chain id ${chainId} names chain ${l.chain}`);
    eq(c.anchor.anchor_id, plan.anchorId, 'anchor id');
    eq(c.anchor.commitment_root, plan.commitmentRoot, 'commitment root');
    eq(c.anchor.operation_id, plan.operationId, 'operation id');
    eq(ledger0x(c.anchor.tx_hash), plan.ledgerTxHash, 'anchor tx_hash (the ledger transaction hash)');
    ensure(BigInt(int(c.anchor.leaf_count, 'leaf_count')) === plan.leafCount, `leaf count ${c.anchor.leaf_count} != ${plan.leafCount}`);
    ensure(Array.isArray(c.legs) && c.legs.length > 0, 'no legs');
    for (const l of c.legs) {
      const i = index(l.leaf_index, `leg ${l.leg_id}.leaf_index`);
      const pl = plan.legs[i];
      ensure(pl && pl.legId === l.leg_id, `leaf ${i} of the anchor is ${pl?.legId ?? 'absent'}, not ${l.leg_id}`);
      ensure(
        verifyMerkleProof({ leaf: plan.leaves[i]!, index: i, proof: l.merkle_proof, root: plan.commitmentRoot, leafCount: Number(plan.leafCount) }),
        `leg ${l.leg_id}: merkle proof does not lead from its leaf to the commitment root`,
      );
    }
    const batch = c.batch ? `batch ${c.batch.id} (member ${c.batch.index} of ${c.batch.members.length}): ` : '';
    return `${batch}anchor ${plan.anchorId} re-planned from the intent: root ${plan.commitmentRoot}, ${plan.leafCount} leaf/leaves; ${c.legs.length} leg proof(s) verify`;
  });
  check(`${P}.validator_set`, () => {
    const s = c.validator_set;
    ensure(s && Array.isArray(s.public_keys) && Array.isArray(s.powers), 'validator set missing');
    const root = validatorSetRoot({
      publicKeys: s.public_keys,
      powers: s.powers.map((p, i) => uint(p, `powers[${i}]`)),
      thresholdNum: BigInt(int(s.threshold_numerator, 'threshold_numerator')),
      thresholdDen: BigInt(int(s.threshold_denominator, 'threshold_denominator')),
    });
    eq(root, s.root, 'validator set root');
    return `${s.public_keys.length} validators, root ${root}`;
  });
  check(`${P}.attestation`, () => {
    ensure(plan, 'not checked: the anchor did not re-plan');
    const m = anchorMessage({ chainId, anchor: getAddress(c.proof_anchor), anchorId: plan.anchorId, validatorSetRoot: c.validator_set.root });
    eq(c.attestation.message, m, 'attestation message (formulas.anchorMessage)');
    return quorumCheck(c.validator_set, c.attestation, 'attestation');
  });
  check(`${P}.create_anchor`, () => {
    ensure(plan, 'not checked: the anchor did not re-plan');
    const f = checkProvenTx(c.create_anchor, 'createAnchor');
    ensure(f.tx.to && getAddress(f.tx.to) === getAddress(c.proof_anchor), `createAnchor was sent to ${f.tx.to}, not ProofAnchor ${c.proof_anchor}`);
    ensure(BigInt(f.tx.chainId ?? -1) === chainId, `createAnchor is for chain id ${f.tx.chainId}`);
    const d = decodeFunctionData({ abi: proofAnchorAbi, data: f.tx.data ?? '0x' });
    ensure(d.functionName === 'createAnchor', `transaction calls ${d.functionName}, not createAnchor`);
    const [root, op, ltx, n] = d.args as unknown as [Hex, Hex, Hex, bigint];
    eq(root, plan.commitmentRoot, 'createAnchor commitmentRoot');
    eq(op, plan.operationId, 'createAnchor operationId');
    eq(ltx, plan.ledgerTxHash, 'createAnchor ledgerTxHash');
    ensure(n === plan.leafCount, `createAnchor leafCount ${n} != ${plan.leafCount}`);
    return `${c.create_anchor.tx_hash} in block ${f.blockNumber}: header, tx and receipt proofs verify, status 1`;
  });
  check(`${P}.prove`, () => {
    ensure(plan, 'not checked: the anchor did not re-plan');
    const f = checkProvenTx(c.prove, 'executeComprehensiveProof');
    ensure(f.tx.to && getAddress(f.tx.to) === getAddress(c.proof_anchor), `executeComprehensiveProof was sent to ${f.tx.to}, not ${c.proof_anchor}`);
    ensure(BigInt(f.tx.chainId ?? -1) === chainId, `executeComprehensiveProof is for chain id ${f.tx.chainId}`);
    const d = decodeFunctionData({ abi: proofAnchorAbi, data: f.tx.data ?? '0x' });
    ensure(d.functionName === 'executeComprehensiveProof', `transaction calls ${d.functionName}, not executeComprehensiveProof`);
    const [id, bitmap, sig] = d.args as unknown as [Hex, bigint, Hex];
    eq(id, plan.anchorId, 'executeComprehensiveProof anchorId');
    ensure(
      bitmap === uint(c.attestation.signer_bitmap, 'signer_bitmap'),
      `executeComprehensiveProof bitmap ${bitmap} != attestation ${c.attestation.signer_bitmap}`,
    );
    eq(sig, c.attestation.aggregate_signature, 'executeComprehensiveProof signature');
    return `${c.prove.tx_hash} in block ${f.blockNumber} carries the attestation aggregate, status 1`;
  });
  for (const l of c.legs ?? []) verifyLeg(ctx, c, l, P, () => plan, chainId);
}
