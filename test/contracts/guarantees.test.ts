/**
 * The contracts' guarantees on a real anvil with the compiled contracts: every guarantee is shown as a transaction that is
 * mined, reverts, and leaves no log and no state change; and the happy path executes exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, keccak256, parseEther, stringToHex, type Address, type Hex } from 'viem';
import { testTargetAbi } from '../../src/chain/abi/index.js';
import { createAnchor, executeComprehensiveProof, readAnchorState, revertErrorName, type TxResult } from '../../src/chain/anchor.js';
import {
  accountAbiWithAnchorErrors,
  createAccount,
  executeGovernanceProofDirect,
  executeLeg,
  isLegExecuted,
  proofForLeg,
  type AnchorProofArg,
} from '../../src/chain/account.js';
import { anchorMessage, planBatchAnchor } from '../../src/chain/formulas.js';
import { blsAggregateSignatures, blsSign, signerBitmap } from '../../src/chain/bls.js';
import { ANVIL_ADDRESSES, planFor, quorumSign, setupSystem, type TestSystem } from '../chain/fixture.js';

const GAS = 2_000_000n; // fixed: skip estimation so reverting transactions are actually mined
const FIVE = [0, 1, 2, 4, 6];

let t: TestSystem;
beforeAll(async () => {
  t = await setupSystem();
});
afterAll(async () => {
  await t?.anvil.stop();
});

const record = (tag: string) => encodeFunctionData({ abi: testTargetAbi, functionName: 'record', args: [keccak256(stringToHex(tag))] });

async function targetState() {
  const read = <F extends 'calls' | 'lastValue' | 'lastCaller' | 'lastArg'>(functionName: F) =>
    t.w.public.readContract({ address: t.target, abi: testTargetAbi, functionName });
  return { calls: await read('calls'), lastValue: await read('lastValue'), lastCaller: await read('lastCaller'), lastArg: await read('lastArg') };
}

async function snapshot(account: Address, anchorId: Hex) {
  return {
    target: await targetState(),
    anchor: await readAnchorState(t.w, t.sys.proofAnchor, anchorId),
    accountBalance: await t.w.public.getBalance({ address: account }),
    targetBalance: await t.w.public.getBalance({ address: t.target }),
  };
}

function expectRevertedWithoutLogs(tx: TxResult) {
  expect(tx.status).toBe('reverted');
  expect(tx.receipt.logs).toHaveLength(0);
}

/** An anchor for one leg, created and proven by 5 of 7. */
async function provenLeg(adiUrl: string, leg: { target: Address; value: bigint; data: Hex; gasLimit?: bigint }) {
  const { plan, account, message } = await planFor(t, adiUrl, [leg]);
  await createAnchor(t.w, t.sys.proofAnchor, plan);
  const q = quorumSign(t.validators, FIVE, message);
  const proven = await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...q });
  expect(proven.tx?.status).toBe('success');
  return { plan, account, message, proof: proofForLeg(plan, 0) };
}

/** Sends executeGovernanceProofDirect with fixed gas and asserts: mined, reverted, no logs, no state change. */
async function expectExecutionRejected(account: Address, anchorId: Hex, call: { target: Address; value: bigint; data: Hex; proof: AnchorProofArg }, gas = GAS) {
  const before = await snapshot(account, anchorId);
  const tx = await executeGovernanceProofDirect(t.w, account, call, { gas });
  expectRevertedWithoutLogs(tx);
  expect(await snapshot(account, anchorId)).toEqual(before);
  return tx;
}

describe('happy path', () => {
  it('5-of-7 aggregate -> the call executes once, from the account, and only once', async () => {
    const data = record('happy');
    const { plan, account, message, proof } = await (async () => {
      const { plan, account, message } = await planFor(t, 'acc://happy.acme', [{ target: t.target, value: 0n, data }]);
      const created = await createAnchor(t.w, t.sys.proofAnchor, plan);
      expect(created.tx?.status).toBe('success');
      expect(created.tx!.receipt.logs).toHaveLength(1); // AnchorCreated
      expect(await readAnchorState(t.w, t.sys.proofAnchor, plan.anchorId)).toMatchObject({ status: 'created', leafCount: 1n });
      const q = quorumSign(t.validators, FIVE, message);
      const proven = await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...q });
      expect(proven.tx?.status).toBe('success');
      expect(proven.tx!.receipt.logs).toHaveLength(1); // AnchorProven
      return { plan, account, message, proof: proofForLeg(plan, 0) };
    })();
    expect(message).toMatch(/^0x[0-9a-f]{64}$/);
    const before = await targetState();
    const tx = await executeGovernanceProofDirect(t.w, account, { target: t.target, value: 0n, data, proof });
    expect(tx.status).toBe('success');
    const after = await targetState();
    expect(after.calls).toBe(before.calls + 1n);
    expect(after.lastCaller).toBe(account);
    expect(after.lastArg).toBe(keccak256(stringToHex('happy')));
    expect((await readAnchorState(t.w, t.sys.proofAnchor, plan.anchorId)).usedBitmap).toBe(1n);

    // resubmitting the used proof: mined, reverted, nothing happens
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data, proof });
    expect((await targetState()).calls).toBe(after.calls);
  });

  it('native value transfer: the account pays the committed value to the committed recipient', async () => {
    const recipient = '0x000000000000000000000000000000000000bEEF' as Address;
    const value = parseEther('0.25');
    const { account, proof } = await provenLeg('acc://payer.acme', { target: recipient, value, data: '0x' });
    await t.w.public.waitForTransactionReceipt({ hash: await t.w.wallet.sendTransaction({ to: account, value: parseEther('1') }) });
    const before = await t.w.public.getBalance({ address: recipient });
    const tx = await executeGovernanceProofDirect(t.w, account, { target: recipient, value, data: '0x', proof });
    expect(tx.status).toBe('success');
    expect(await t.w.public.getBalance({ address: recipient })).toBe(before + value);
    expect(await t.w.public.getBalance({ address: account })).toBe(parseEther('0.75'));
  });
});

describe('idempotent helpers for retries', () => {
  it('createAnchor, executeComprehensiveProof and executeLeg send nothing the second time', async () => {
    const data = record('retry');
    const { plan, account, message } = await planFor(t, 'acc://retry.acme', [{ target: t.target, value: 0n, data }]);
    expect((await createAnchor(t.w, t.sys.proofAnchor, plan)).alreadyExisted).toBe(false);
    expect(await createAnchor(t.w, t.sys.proofAnchor, plan)).toEqual({ anchorId: plan.anchorId, alreadyExisted: true });
    const q = quorumSign(t.validators, FIVE, message);
    expect((await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...q })).alreadyProven).toBe(false);
    expect(await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...q })).toEqual({ alreadyProven: true });
    const leg = { proofAnchor: t.sys.proofAnchor, account, target: t.target, value: 0n, data, proof: proofForLeg(plan, 0) };
    const calls = (await targetState()).calls;
    expect(await isLegExecuted(t.w, t.sys.proofAnchor, leg.proof)).toBe(false);
    const first = await executeLeg(t.w, leg);
    expect(first.tx?.status).toBe('success');
    expect(await executeLeg(t.w, leg)).toEqual({ alreadyExecuted: true });
    // without the pre-check, the estimate fails with the anchor's error decoded by name
    const err = await executeGovernanceProofDirect(t.w, account, leg).catch((e: unknown) => e);
    expect(revertErrorName(err)).toBe('LeafAlreadyUsed');
    expect(await isLegExecuted(t.w, t.sys.proofAnchor, leg.proof)).toBe(true);
    expect((await targetState()).calls).toBe(calls + 1n);
  });
});

describe('spec §1.6: each violation is a mined transaction that reverts, with no event and no state change', () => {
  it('changed target', async () => {
    const data = record('target');
    const { plan, account, proof } = await provenLeg('acc://g-target.acme', { target: t.target, value: 0n, data });
    const other = ANVIL_ADDRESSES[2];
    await expectExecutionRejected(account, plan.anchorId, { target: other, value: 0n, data, proof });
    // the honest call still works afterwards: nothing was consumed
    expect((await executeGovernanceProofDirect(t.w, account, { target: t.target, value: 0n, data, proof })).status).toBe('success');
  });

  it('changed value', async () => {
    const data = record('value');
    const { plan, account, proof } = await provenLeg('acc://g-value.acme', { target: t.target, value: 1000n, data });
    await t.w.public.waitForTransactionReceipt({ hash: await t.w.wallet.sendTransaction({ to: account, value: 10_000n }) });
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 1001n, data, proof });
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data, proof });
    expect((await executeGovernanceProofDirect(t.w, account, { target: t.target, value: 1000n, data, proof })).status).toBe('success');
    expect((await targetState()).lastValue).toBe(1000n);
  });

  it('one calldata byte changed', async () => {
    const data = record('calldata');
    const { plan, account, proof } = await provenLeg('acc://g-data.acme', { target: t.target, value: 0n, data });
    const bytes = Buffer.from(data.slice(2), 'hex');
    bytes[bytes.length - 1] ^= 0x01;
    const tampered = `0x${bytes.toString('hex')}` as Hex;
    expect(tampered).not.toBe(data);
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data: tampered, proof });
    // an appended byte is a changed calldata too
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data: `${data}00`, proof });
  });

  it('forged aggregate: proof transaction reverts, the anchor stays unproven, execution reverts', async () => {
    const data = record('forged');
    const { plan, account, message } = await planFor(t, 'acc://g-forged.acme', [{ target: t.target, value: 0n, data }]);
    await createAnchor(t.w, t.sys.proofAnchor, plan);
    const forgedCases: { signature: Hex; signerBitmap: bigint }[] = [
      // right signers, wrong message
      quorumSign(t.validators, FIVE, keccak256(stringToHex('another message'))),
      // 4 real signatures claimed as 5
      { signature: blsAggregateSignatures([0, 1, 2, 4].map((i) => blsSign(t.validators[i]!.secretKey, message))), signerBitmap: signerBitmap(FIVE) },
      // a valid aggregate under a different bitmap
      { signature: quorumSign(t.validators, FIVE, message).signature, signerBitmap: signerBitmap([0, 1, 2, 3, 4]) },
      // point at infinity
      { signature: `0x${'00'.repeat(128)}`, signerBitmap: signerBitmap(FIVE) },
      // not a curve point
      { signature: `0x${'00'.repeat(16)}${'11'.repeat(48)}${'00'.repeat(16)}${'22'.repeat(48)}`, signerBitmap: signerBitmap(FIVE) },
    ];
    for (const forged of forgedCases) {
      const before = await snapshot(account, plan.anchorId);
      const r = await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...forged }, { gas: GAS });
      expectRevertedWithoutLogs(r.tx!);
      expect(await snapshot(account, plan.anchorId)).toEqual(before);
      expect(before.anchor.status).toBe('created');
    }
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data, proof: proofForLeg(plan, 0) });
  });

  it('absent proof: anchor created but not proven; and an anchor that does not exist', async () => {
    const data = record('absent');
    const { plan, account } = await planFor(t, 'acc://g-absent.acme', [{ target: t.target, value: 0n, data }]);
    // not created at all
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data, proof: proofForLeg(plan, 0) });
    // created, not proven
    await createAnchor(t.w, t.sys.proofAnchor, plan);
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data, proof: proofForLeg(plan, 0) });
  });

  it('signatures from only 4 of 7', async () => {
    const data = record('four');
    const { plan, account, message } = await planFor(t, 'acc://g-four.acme', [{ target: t.target, value: 0n, data }]);
    await createAnchor(t.w, t.sys.proofAnchor, plan);
    const before = await snapshot(account, plan.anchorId);
    const q = quorumSign(t.validators, [0, 2, 4, 6], message); // a genuine 4-of-7 aggregate
    const r = await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...q }, { gas: GAS });
    expectRevertedWithoutLogs(r.tx!);
    expect(await snapshot(account, plan.anchorId)).toEqual(before);
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data, proof: proofForLeg(plan, 0) });
    // a 5th signature makes the same anchor provable and executable
    const q5 = quorumSign(t.validators, [0, 2, 3, 4, 6], message);
    expect((await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...q5 })).tx?.status).toBe('success');
    expect((await executeGovernanceProofDirect(t.w, account, { target: t.target, value: 0n, data, proof: proofForLeg(plan, 0) })).status).toBe('success');
  });

  it('resubmitted (used) proof', async () => {
    const data = record('reuse');
    const { plan, account, proof } = await provenLeg('acc://g-reuse.acme', { target: t.target, value: 0n, data });
    expect((await executeGovernanceProofDirect(t.w, account, { target: t.target, value: 0n, data, proof })).status).toBe('success');
    const calls = (await targetState()).calls;
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data, proof });
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data, proof });
    expect((await targetState()).calls).toBe(calls);
    // re-proving a proven anchor is rejected too
    const q = quorumSign(t.validators, FIVE, (await planFor(t, 'acc://g-reuse.acme', [{ target: t.target, value: 0n, data }])).message);
    const r = await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...q }, { gas: GAS });
    expectRevertedWithoutLogs(r.tx!);
  });

  it('anchor for another identity', async () => {
    const data = record('identity');
    const { plan, proof } = await provenLeg('acc://victim.acme', { target: t.target, value: 0n, data });
    const { account: attacker } = await planFor(t, 'acc://attacker.acme', [{ target: t.target, value: 0n, data }]);
    await expectExecutionRejected(attacker, plan.anchorId, { target: t.target, value: 0n, data, proof });
  });

  it('a failing target call reverts everything and consumes nothing', async () => {
    const data = encodeFunctionData({ abi: testTargetAbi, functionName: 'fail' });
    const { plan, account, proof } = await provenLeg('acc://g-fail.acme', { target: t.target, value: 0n, data });
    await expectExecutionRejected(account, plan.anchorId, { target: t.target, value: 0n, data, proof });
    expect((await readAnchorState(t.w, t.sys.proofAnchor, plan.anchorId)).usedBitmap).toBe(0n);
  });
});

describe('multi-leg anchors', () => {
  it('a batched anchor for two identities: each account executes only its own leg', async () => {
    const alice = (await createAccount(t.w, t.sys.accountFactory, 'acc://batch-alice.acme')).address;
    const bob = (await createAccount(t.w, t.sys.accountFactory, 'acc://batch-bob.acme')).address;
    const legA = { account: alice, adiUrl: 'acc://batch-alice.acme', target: t.target, value: 0n, data: record('batch-a') };
    const legB = { account: bob, adiUrl: 'acc://batch-bob.acme', target: t.target, value: 0n, data: record('batch-b') };
    const plan = planBatchAnchor({
      chainId: t.chainId,
      anchor: t.sys.proofAnchor,
      operationId: keccak256(stringToHex('batch-op')),
      ledgerTxHash: keccak256(stringToHex('batch-ltx')),
      legs: [legA, legB].map((l) => ({ ...l, deadline: BigInt(Math.floor(Date.now() / 1000) + 3600) })),
    });
    await createAnchor(t.w, t.sys.proofAnchor, plan);
    const message = anchorMessage({ chainId: t.chainId, anchor: t.sys.proofAnchor, anchorId: plan.anchorId, validatorSetRoot: t.setRoot });
    await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...quorumSign(t.validators, FIVE, message) });
    // bob's account cannot run alice's leg (nor with bob's own index)
    await expectExecutionRejected(bob, plan.anchorId, { target: legA.target, value: 0n, data: legA.data, proof: proofForLeg(plan, 0) });
    await expectExecutionRejected(bob, plan.anchorId, { target: legA.target, value: 0n, data: legA.data, proof: proofForLeg(plan, 1) });
    expect((await executeGovernanceProofDirect(t.w, alice, { target: legA.target, value: 0n, data: legA.data, proof: proofForLeg(plan, 0) })).status).toBe(
      'success',
    );
    expect((await targetState()).lastCaller).toBe(alice);
    expect((await executeGovernanceProofDirect(t.w, bob, { target: legB.target, value: 0n, data: legB.data, proof: proofForLeg(plan, 1) })).status).toBe(
      'success',
    );
    expect((await targetState()).lastCaller).toBe(bob);
  });

  it('three legs in one anchor: each executes once, in any order; leaf indices cannot be swapped', async () => {
    const legs = ['a', 'b', 'c'].map((x) => ({ target: t.target, value: 0n, data: record(`leg-${x}`) }));
    const { plan, account, message } = await planFor(t, 'acc://multi.acme', legs);
    expect(plan.leafCount).toBe(3n);
    await createAnchor(t.w, t.sys.proofAnchor, plan);
    await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...quorumSign(t.validators, [1, 2, 3, 4, 5, 6], message) });
    // leg 2's call with leg 0's proof
    await expectExecutionRejected(account, plan.anchorId, { ...legs[2]!, proof: proofForLeg(plan, 0) });
    // leg 2's call claiming index 0 with its own path
    await expectExecutionRejected(account, plan.anchorId, { ...legs[2]!, proof: { ...proofForLeg(plan, 2), leafIndex: 0n } });
    for (const i of [2, 0, 1]) {
      const tx = await executeGovernanceProofDirect(t.w, account, { ...legs[i]!, proof: proofForLeg(plan, i) });
      expect(tx.status).toBe('success');
      await expectExecutionRejected(account, plan.anchorId, { ...legs[i]!, proof: proofForLeg(plan, i) });
    }
    expect((await readAnchorState(t.w, t.sys.proofAnchor, plan.anchorId)).usedBitmap).toBe(0b111n);
  });
});

describe('gas limit', () => {
  const ROUNDS = 12_000n; // heavy() alone: about 1M gas
  const tryHeavy = encodeFunctionData({ abi: testTargetAbi, functionName: 'tryHeavy', args: [ROUNDS] });
  const outcomes = (tx: TxResult) =>
    tx.receipt.logs
      .filter((l) => l.address.toLowerCase() === t.target.toLowerCase() && l.topics[0] === keccak256(stringToHex('Outcome(bool)')))
      .map((l) => BigInt(l.data) === 1n);

  it('without a gas limit anyone can use the leaf up with too little gas: the target takes its failure branch', async () => {
    const leg = { target: t.target, value: 0n, data: tryHeavy };
    const { plan, account, proof } = await provenLeg('acc://g-nogas.acme', leg);
    const starved = await executeGovernanceProofDirect(t.w, account, { ...leg, proof }, { gas: 300_000n });
    expect(starved.status).toBe('success');
    expect(outcomes(starved)).toEqual([false]);
    expect((await readAnchorState(t.w, t.sys.proofAnchor, plan.anchorId)).usedBitmap).toBe(1n); // gone for good
  });

  it('with a gas limit the call gets that gas or the transaction reverts (InsufficientGas), the leaf unused', async () => {
    const leg = { target: t.target, value: 0n, data: tryHeavy, gasLimit: 1_500_000n };
    const { plan, account, proof } = await provenLeg('acc://g-gas.acme', leg);
    expect(proof.gasLimit).toBe(1_500_000n);
    // too little to give the call its whole limit (a check after the call instead would pass the starved
    // try/catch, whose target returns the gas its failed inner call did not use)
    for (const gas of [300_000n, 900_000n, 1_540_000n]) {
      const sim = await t.w.public
        .simulateContract({
          address: account,
          abi: accountAbiWithAnchorErrors,
          functionName: 'executeGovernanceProofDirect',
          args: [leg.target, 0n, leg.data, { ...proof, merkleProof: [...proof.merkleProof] }],
          account: t.w.account,
          gas,
        })
        .catch((e) => e);
      expect(revertErrorName(sim)).toBe('InsufficientGas');
      await expectExecutionRejected(account, plan.anchorId, { ...leg, proof }, gas);
    }
    // a proof that claims no limit (or another) is not the leaf
    await expectExecutionRejected(account, plan.anchorId, { ...leg, proof: { ...proof, gasLimit: 0n } }, 300_000n);
    // the gateway's way: viem's estimate, which now finds the gas the limit needs
    const ok = await executeGovernanceProofDirect(t.w, account, { ...leg, proof });
    expect(ok.status).toBe('success');
    expect(ok.receipt.gasUsed).toBeGreaterThan(700_000n);
    expect(outcomes(ok)).toEqual([true]);
    expect((await readAnchorState(t.w, t.sys.proofAnchor, plan.anchorId)).usedBitmap).toBe(1n);
  });
});

// last: it moves the chain's clock forward
describe('deadline', () => {
  it("a proven leg cannot execute after its deadline (the intent's expires_at); a later deadline in the proof does not match the leaf", async () => {
    const now = (await t.w.public.getBlock()).timestamp;
    const data = record('deadline');
    const leg = { target: t.target, value: 0n, data };
    const { plan, account, message } = await planFor(t, 'acc://g-deadline.acme', [leg], now + 600n);
    await createAnchor(t.w, t.sys.proofAnchor, plan);
    await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...quorumSign(t.validators, FIVE, message) });
    const proof = proofForLeg(plan, 0);
    expect(proof.deadline).toBe(now + 600n);
    await expectExecutionRejected(account, plan.anchorId, { ...leg, proof: { ...proof, deadline: now + 86_400n } });
    const early = await t.w.public.simulateContract({
      address: account,
      abi: accountAbiWithAnchorErrors,
      functionName: 'executeGovernanceProofDirect',
      args: [leg.target, 0n, data, { ...proof, merkleProof: [...proof.merkleProof] }],
      account: t.w.account,
    });
    expect(early.result).toBeDefined(); // before the deadline it would run
    await t.w.public.request({ method: 'evm_increaseTime', params: [601] } as never);
    await t.w.public.request({ method: 'evm_mine', params: [] } as never);
    const late = await t.w.public
      .simulateContract({
        address: account,
        abi: accountAbiWithAnchorErrors,
        functionName: 'executeGovernanceProofDirect',
        args: [leg.target, 0n, data, { ...proof, merkleProof: [...proof.merkleProof] }],
        account: t.w.account,
      })
      .catch((e) => e);
    expect(revertErrorName(late)).toBe('AnchorExpired');
    await expectExecutionRejected(account, plan.anchorId, { ...leg, proof });
    expect((await readAnchorState(t.w, t.sys.proofAnchor, plan.anchorId)).usedBitmap).toBe(0n);
  });
});
