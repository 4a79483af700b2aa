/**
 * Batch anchors on a real anvil: one anchor over the legs of 16 identities (the batched proof class's shape), each
 * leg executed by its own account with its own Merkle proof, exactly once and in any order; a tampered leaf, a
 * path or root of another batch, a leg claimed by another account: mined, reverted, no log, nothing consumed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concatHex, encodeFunctionData, hexToBigInt, keccak256, numberToHex, sliceHex, stringToHex, type Address, type Hex } from 'viem';
import { testTargetAbi } from '../../src/chain/abi/index.js';
import { createAnchor, executeComprehensiveProof, readAnchorState, waitTx, type TxResult } from '../../src/chain/anchor.js';
import { accountAbiWithAnchorErrors, createAccount, executeGovernanceProofDirect, proofForLeg, type AnchorProofArg } from '../../src/chain/account.js';
import { anchorMessage, planBatchAnchor, type AnchorPlan } from '../../src/chain/formulas.js';
import { quorumSign, setupSystem, type TestSystem } from '../chain/fixture.js';

const GAS = 2_000_000n; // fixed: skip estimation so reverting transactions are actually mined
const LEGS = 16;

let t: TestSystem;
let members: { adiUrl: string; account: Address }[];
beforeAll(async () => {
  t = await setupSystem();
  members = [];
  for (let i = 0; i < LEGS; i++) {
    const adiUrl = `acc://batch-member-${i}.acme`;
    members.push({ adiUrl, account: (await createAccount(t.w, t.sys.accountFactory, adiUrl)).address });
  }
}, 120_000);
afterAll(async () => {
  await t?.anvil.stop();
});

const record = (tag: string) => encodeFunctionData({ abi: testTargetAbi, functionName: 'record', args: [keccak256(stringToHex(tag))] });

/** A proven batch anchor over one leg per member, tagged so two batches differ in every leaf. */
async function provenBatch(tag: string) {
  const deadline = BigInt(Math.floor(Date.now() / 1000) + 3600);
  const legs = members.map((m, i) => ({ ...m, target: t.target, value: 0n, data: record(`${tag}-${i}`), deadline }));
  const plan = planBatchAnchor({
    chainId: t.chainId,
    anchor: t.sys.proofAnchor,
    operationId: keccak256(stringToHex(`${tag}-op`)),
    ledgerTxHash: keccak256(stringToHex(`${tag}-ltx`)),
    legs,
  });
  expect((await createAnchor(t.w, t.sys.proofAnchor, plan)).tx?.status).toBe('success');
  const message = anchorMessage({ chainId: t.chainId, anchor: t.sys.proofAnchor, anchorId: plan.anchorId, validatorSetRoot: t.setRoot });
  const proven = await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...quorumSign(t.validators, [0, 1, 2, 4, 6], message) });
  expect(proven.tx?.status).toBe('success');
  return { plan, legs };
}

const used = async (plan: AnchorPlan) => (await readAnchorState(t.w, t.sys.proofAnchor, plan.anchorId)).usedBitmap;

function expectRevertedWithoutLogs(tx: TxResult) {
  expect(tx.status).toBe('reverted');
  expect(tx.receipt.logs).toHaveLength(0);
}

/** Sends the execution with fixed gas: mined, reverted, no log, and neither anchor's used leaves changed. */
async function expectRejected(account: Address, call: { target: Address; value: bigint; data: Hex; proof: AnchorProofArg }, plans: AnchorPlan[]) {
  const before = await Promise.all(plans.map(used));
  expectRevertedWithoutLogs(await executeGovernanceProofDirect(t.w, account, call, { gas: GAS }));
  expect(await Promise.all(plans.map(used))).toEqual(before);
}

describe('batch anchors', () => {
  it('16 identities in one anchor: every leg executes once, from its own account, in any order', async () => {
    const { plan, legs } = await provenBatch('batch-all');
    expect(plan.leafCount).toBe(BigInt(LEGS));
    expect(plan.proofs[5]!.merkleProof).toHaveLength(4);
    const order = [...legs.keys()].sort((a, b) => ((a * 7) % LEGS) - ((b * 7) % LEGS));
    for (const i of order) {
      const l = legs[i]!;
      const tx = await executeGovernanceProofDirect(t.w, l.account, { target: l.target, value: 0n, data: l.data, proof: proofForLeg(plan, i) });
      expect(tx.status).toBe('success');
      await expectRejected(l.account, { target: l.target, value: 0n, data: l.data, proof: proofForLeg(plan, i) }, [plan]);
    }
    expect(await used(plan)).toBe((1n << BigInt(LEGS)) - 1n);
  });

  it('a tampered leaf, a leg run by another account, a path or a root of another batch: each reverts, nothing consumed', async () => {
    const a = await provenBatch('batch-a');
    const b = await provenBatch('batch-b');
    const i = 9;
    const l = a.legs[i]!;
    const call = { target: l.target, value: 0n, data: l.data };
    // tampered leaf: other calldata, another value, another deadline or gas limit than the anchored leaf
    await expectRejected(l.account, { ...call, data: record('tampered'), proof: proofForLeg(a.plan, i) }, [a.plan, b.plan]);
    await expectRejected(l.account, { ...call, proof: { ...proofForLeg(a.plan, i), deadline: proofForLeg(a.plan, i).deadline + 1n } }, [a.plan, b.plan]);
    await expectRejected(l.account, { ...call, proof: { ...proofForLeg(a.plan, i), gasLimit: 1n } }, [a.plan, b.plan]);
    // the same leg claimed by another member's account
    await expectRejected(a.legs[i + 1]!.account, { ...call, proof: proofForLeg(a.plan, i) }, [a.plan, b.plan]);
    // batch b's leg i (same account, same index) with batch a's proof, and a's leg with b's path under a's root
    const lb = b.legs[i]!;
    await expectRejected(lb.account, { target: lb.target, value: 0n, data: lb.data, proof: proofForLeg(a.plan, i) }, [a.plan, b.plan]);
    await expectRejected(l.account, { ...call, proof: { ...proofForLeg(a.plan, i), merkleProof: proofForLeg(b.plan, i).merkleProof } }, [a.plan, b.plan]);
    // a's leg presented under b's root and ids (an anchor that does not hold it)
    const underB = { ...proofForLeg(b.plan, i), leafIndex: BigInt(i), merkleProof: proofForLeg(a.plan, i).merkleProof };
    await expectRejected(l.account, { ...call, proof: underB }, [a.plan, b.plan]);
    // a sibling swapped within the path
    const path = [...proofForLeg(a.plan, i).merkleProof];
    [path[0], path[1]] = [path[1]!, path[0]!];
    await expectRejected(l.account, { ...call, proof: { ...proofForLeg(a.plan, i), merkleProof: path } }, [a.plan, b.plan]);
    expect(await used(a.plan)).toBe(0n);
    expect(await used(b.plan)).toBe(0n);
    // the genuine proofs still work afterwards
    expect((await executeGovernanceProofDirect(t.w, l.account, { ...call, proof: proofForLeg(a.plan, i) })).status).toBe('success');
    expect((await executeGovernanceProofDirect(t.w, lb.account, { target: lb.target, value: 0n, data: lb.data, proof: proofForLeg(b.plan, i) })).status).toBe(
      'success',
    );
    expect(await used(a.plan)).toBe(1n << BigInt(i));
    expect(await used(b.plan)).toBe(1n << BigInt(i));
  });

  it('the account forwards the Merkle path wherever the calldata puts it (a non-canonical offset), and only the anchored leaf', async () => {
    const { plan, legs } = await provenBatch('batch-offset');
    const i = 3;
    const l = legs[i]!;
    const canonical = encodeFunctionData({
      abi: accountAbiWithAnchorErrors,
      functionName: 'executeGovernanceProofDirect',
      args: [l.target, 0n, l.data, { ...proofForLeg(plan, i), merkleProof: [...proofForLeg(plan, i).merkleProof] }],
    });
    // the proof struct's tail: its 8th head word is the path's offset (0x100, right after the head); move the path
    // one word further, with a junk word in between
    const struct = 4 + Number(hexToBigInt(sliceHex(canonical, 4 + 3 * 32, 4 + 4 * 32)));
    const at = (k: number) => struct + k;
    expect(hexToBigInt(sliceHex(canonical, at(0xe0), at(0x100)))).toBe(0x100n);
    const moved = (path: Hex) =>
      concatHex([sliceHex(canonical, 0, at(0xe0)), numberToHex(0x120, { size: 32 }), sliceHex(canonical, at(0x100), at(0x100)), `0x${'ff'.repeat(32)}`, path]);
    const pathBytes = sliceHex(canonical, at(0x100));
    // a path with one sibling changed is refused
    const bad = concatHex([sliceHex(pathBytes, 0, 32 + 32), keccak256('0x01'), sliceHex(pathBytes, 32 + 64)]);
    const sent = async (data: Hex) => waitTx(t.w, await t.w.wallet.sendTransaction({ to: l.account, data, gas: GAS }));
    expectRevertedWithoutLogs(await sent(moved(bad)));
    expect(await used(plan)).toBe(0n);
    expect((await sent(moved(pathBytes))).status).toBe('success');
    expect(await used(plan)).toBe(1n << BigInt(i));
  });
});
