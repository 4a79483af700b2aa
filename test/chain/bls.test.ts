/**
 * BLS: the TypeScript side (noble, src/chain/bls.ts) and the contract side (contracts/BLS.sol via the
 * BLSHarness and the ProofAnchor) agree byte for byte; proof-of-possession and key-set rules hold on chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { expand_message_xmd } from '@noble/curves/abstract/hash-to-curve.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { type BaseError, bytesToHex, decodeErrorResult, encodeDeployData, hexToBytes, keccak256, stringToHex, toHex, type Address, type Hex } from 'viem';
import { blsHarnessAbi, blsHarnessBytecode, proofAnchorAbi, proofAnchorBytecode } from '../../src/chain/abi/index.js';
import {
  blsAggregatePublicKeys,
  blsAggregateSignatures,
  blsEngine,
  blsHashToG1,
  blsKeygen,
  blsProofOfPossession,
  blsPublicKey,
  blsReady,
  blsSign,
  blsSignatureProblem,
  blsVerify,
  blsVerifyAggregate,
  blsVerifyProofOfPossession,
  g1FromEip2537,
  g1ToEip2537,
  g2FromEip2537,
  g2ToEip2537,
  signerBitmap,
} from '../../src/chain/bls.js';
import { BLS_POP_DST, BLS_SIG_DST } from '../../src/chain/formulas.js';
import {
  createAnchor,
  executeComprehensiveProof,
  readAnchorState,
  revertErrorName,
  rotateValidatorSet,
  rotationFor,
  readValidatorSet,
} from '../../src/chain/anchor.js';
import { anchorMessage } from '../../src/chain/formulas.js';
import { planFor, quorumSign, registrations, setupSystem, testValidators, type TestSystem } from './fixture.js';

const blsErrors = [
  { type: 'error', name: 'BLSPrecompileFailed', inputs: [{ name: 'precompile', type: 'uint256' }] },
  { type: 'error', name: 'BLSBadInput', inputs: [] },
] as const;

let t: TestSystem;
let harness: Address;
beforeAll(async () => {
  t = await setupSystem();
  const hash = await t.w.wallet.deployContract({ abi: blsHarnessAbi, bytecode: blsHarnessBytecode });
  harness = (await t.w.public.waitForTransactionReceipt({ hash })).contractAddress as Address;
});
afterAll(async () => {
  await t?.anvil.stop();
});

const read = <F extends 'expandMessageXmd' | 'hashToG1' | 'hashToG2' | 'verifyMinSig' | 'verifyMinPk'>(functionName: F, args: readonly unknown[]) =>
  t.w.public.readContract({ address: harness, abi: blsHarnessAbi, functionName, args: args as never }) as Promise<never>;

describe('encodings (pure)', () => {
  it('EIP-2537 round trip for G1 and G2, 64-byte limbs with 16 zero bytes, c0 before c1', () => {
    const { secretKey, publicKey } = blsKeygen(hexToBytes(keccak256('0x01')));
    expect(hexToBytes(publicKey)).toHaveLength(256);
    const p = g2FromEip2537(publicKey);
    expect(g2ToEip2537(p)).toBe(publicKey);
    const a = p.toAffine();
    expect(publicKey.slice(2, 34)).toBe('0'.repeat(32));
    expect(BigInt(`0x${publicKey.slice(2 + 32, 2 + 128)}`)).toBe(a.x.c0);
    expect(BigInt(`0x${publicKey.slice(2 + 128 + 32, 2 + 256)}`)).toBe(a.x.c1);
    const sig = blsSign(secretKey, keccak256('0x02'));
    expect(hexToBytes(sig)).toHaveLength(128);
    expect(g1ToEip2537(g1FromEip2537(sig))).toBe(sig);
  });

  it('rejects malformed points: nonzero padding, off-curve, infinity', () => {
    const { publicKey } = blsKeygen(hexToBytes(keccak256('0x03')));
    const badPad = `0x01${publicKey.slice(4)}` as Hex;
    expect(() => g2FromEip2537(badPad)).toThrow();
    const offCurve = `${publicKey.slice(0, -2)}${publicKey.endsWith('00') ? '01' : '00'}` as Hex;
    expect(() => g2FromEip2537(offCurve)).toThrow();
    expect(() => g1FromEip2537(`0x${'00'.repeat(128)}`)).toThrow();
    expect(blsVerify(`0x${'00'.repeat(128)}`, keccak256('0x00'), publicKey)).toBe(false);
  });

  it('sign / aggregate / verify, and proofs of possession', () => {
    const vs = testValidators(3, 'unit');
    const m = keccak256('0x1234');
    const sigs = vs.map((v) => blsSign(v.secretKey, m));
    expect(blsVerify(sigs[0]!, m, vs[0]!.publicKey)).toBe(true);
    expect(blsVerify(sigs[0]!, m, vs[1]!.publicKey)).toBe(false);
    const agg = blsAggregateSignatures(sigs);
    expect(blsVerify(agg, m, blsAggregatePublicKeys(vs.map((v) => v.publicKey)))).toBe(true);
    expect(blsVerify(agg, keccak256('0x1235'), blsAggregatePublicKeys(vs.map((v) => v.publicKey)))).toBe(false);
    expect(blsVerifyProofOfPossession(vs[0]!.publicKey, vs[0]!.proofOfPossession)).toBe(true);
    expect(blsVerifyProofOfPossession(vs[1]!.publicKey, vs[0]!.proofOfPossession)).toBe(false);
    // a PoP is not a signature over the key under the message DST
    expect(blsVerify(vs[0]!.proofOfPossession, vs[0]!.publicKey, vs[0]!.publicKey)).toBe(false);
    expect(blsPublicKey(vs[2]!.secretKey)).toBe(vs[2]!.publicKey);
    expect(signerBitmap([0, 2, 6])).toBe(0b1000101n);
  });
});

describe('the fast engine (mcl-wasm) equals noble byte for byte', () => {
  const noble = bls12_381.shortSignatures;
  beforeAll(async () => {
    await blsReady();
    expect(blsEngine()).toBe('mcl-wasm');
  });

  it('signatures, proofs of possession and aggregates are the bytes noble computes', () => {
    const vs = testValidators(5, 'engines');
    for (const [i, m] of [keccak256('0x01'), keccak256('0xbeef'), '0x' as Hex, toHex(new Uint8Array(100).fill(9))].entries()) {
      const sigs = vs.map((v) => blsSign(v.secretKey, m));
      const byNoble = vs.map((v) => g1ToEip2537(noble.sign(noble.hash(hexToBytes(m), BLS_SIG_DST), v.secretKey)));
      expect(sigs).toEqual(byNoble);
      const nobleAgg = g1ToEip2537(byNoble.map(g1FromEip2537).reduce((a, b) => a.add(b)));
      expect(blsAggregateSignatures(sigs)).toBe(nobleAgg);
      const nobleKeys = g2ToEip2537(vs.map((v) => g2FromEip2537(v.publicKey)).reduce((a, b) => a.add(b)));
      expect(blsAggregatePublicKeys(vs.map((v) => v.publicKey))).toBe(nobleKeys);
      expect(
        blsVerifyAggregate(
          sigs,
          m,
          vs.map((v) => v.publicKey),
        ),
      ).toBe(true);
      expect(noble.verify(g1FromEip2537(nobleAgg), noble.hash(hexToBytes(m), BLS_SIG_DST), g2FromEip2537(nobleKeys))).toBe(true);
      // one signature by the wrong key, or keys in another order of count, fails the aggregate check
      expect(
        blsVerifyAggregate(
          [...sigs.slice(0, 4), blsSign(vs[0]!.secretKey, m)],
          m,
          vs.map((v) => v.publicKey),
        ),
      ).toBe(false);
      expect(
        blsVerifyAggregate(
          sigs.slice(0, 4),
          m,
          vs.map((v) => v.publicKey),
        ),
      ).toBe(false);
      expect(
        blsVerifyAggregate(
          sigs,
          keccak256(toHex(i + 100)),
          vs.map((v) => v.publicKey),
        ),
      ).toBe(false);
    }
    const v = vs[0]!;
    expect(blsProofOfPossession(v.secretKey)).toBe(g1ToEip2537(noble.sign(noble.hash(hexToBytes(v.publicKey), BLS_POP_DST), v.secretKey)));
  });

  it("hash to G1 on mcl (JS expand_message_xmd, mcl's map_to_curve per field element) is noble's hash_to_curve", () => {
    // H(m) is only reached through signing: sk = 1 signs H(m) itself
    const one = new Uint8Array(32);
    one[31] = 1;
    for (let i = 0; i < 40; i++) {
      const m = keccak256(toHex(i)); // 32-byte anchor and result messages
      expect(blsSign(one, m)).toBe(g1ToEip2537(noble.hash(hexToBytes(m), BLS_SIG_DST) as never));
    }
    for (const m of ['0x' as Hex, toHex(new Uint8Array(256).fill(7)), toHex(new Uint8Array(1000).fill(1))]) {
      expect(blsSign(one, m)).toBe(g1ToEip2537(noble.hash(hexToBytes(m), BLS_SIG_DST) as never));
    }
  });

  it('refuses what noble refuses: a point off the subgroup, a limb not below p, infinity, bad padding', () => {
    // a point on y^2 = x^3 + 4 that is not in the prime-order subgroup (G1's cofactor is large)
    const Fp = bls12_381.fields.Fp;
    let x = 5n;
    let off: Hex | undefined;
    for (; !off; x++) {
      const rhs = Fp.add(Fp.pow(x, 3n), 4n);
      let y: bigint;
      try {
        y = Fp.sqrt(rhs);
      } catch {
        continue;
      }
      const p = bls12_381.G1.Point.fromAffine({ x, y });
      if (!p.isTorsionFree()) off = `0x${x.toString(16).padStart(128, '0')}${y.toString(16).padStart(128, '0')}` as Hex;
    }
    expect(() => g1FromEip2537(off!)).toThrow();
    expect(blsSignatureProblem(off!)).toMatch(/subgroup/);
    const { publicKey } = blsKeygen(hexToBytes(keccak256('0x03')));
    const sig = blsSign(blsKeygen(hexToBytes(keccak256('0x03'))).secretKey, keccak256('0x04'));
    expect(blsSignatureProblem(sig)).toBeUndefined();
    expect(blsVerify(off!, keccak256('0x04'), publicKey)).toBe(false);
    // x + p: the same residue, a non-canonical encoding the precompile refuses
    const xPlusP = BigInt(`0x${sig.slice(2, 130)}`) + Fp.ORDER;
    const nonCanonical = `0x${xPlusP.toString(16).padStart(128, '0')}${sig.slice(130)}` as Hex;
    expect(blsSignatureProblem(nonCanonical)).toMatch(/modulus/);
    expect(blsVerify(nonCanonical, keccak256('0x04'), publicKey)).toBe(false);
    expect(blsSignatureProblem(`0x${'00'.repeat(128)}`)).toMatch(/infinity/);
    expect(blsSignatureProblem(`0x01${sig.slice(4)}`)).toMatch(/zero/);
    expect(blsSignatureProblem(`0x${'00'.repeat(127)}`)).toMatch(/128 bytes/);
  });
});

describe('contract BLS library equals noble', () => {
  const messages: Hex[] = ['0x', '0x00', keccak256('0xabcd'), toHex(new Uint8Array(256).fill(7)), stringToHex('abc')];

  it('expand_message_xmd (RFC 9380) for 128 and 256 bytes', async () => {
    for (const msg of messages) {
      for (const len of [128n, 256n]) {
        const want = bytesToHex(expand_message_xmd(hexToBytes(msg), BLS_SIG_DST, Number(len), sha256));
        expect(await read('expandMessageXmd', [msg, stringToHex(BLS_SIG_DST), len])).toBe(want);
      }
    }
  });

  it('hash_to_curve G1 (used) and G2 (benchmark) match noble for our DSTs and the RFC default', async () => {
    for (const msg of messages) {
      expect(await read('hashToG1', [msg, stringToHex(BLS_SIG_DST)])).toBe(blsHashToG1(msg));
      expect(await read('hashToG1', [msg, stringToHex(BLS_POP_DST)])).toBe(blsHashToG1(msg, BLS_POP_DST));
      const dst = 'QUUX-V01-CS02-with-BLS12381G2_XMD:SHA-256_SSWU_RO_';
      const h2 = bls12_381.longSignatures.hash(hexToBytes(msg), dst).toAffine();
      const fp = (x: bigint) => x.toString(16).padStart(128, '0');
      expect(await read('hashToG2', [msg, stringToHex(dst)])).toBe(`0x${fp(h2.x.c0)}${fp(h2.x.c1)}${fp(h2.y.c0)}${fp(h2.y.c1)}`);
    }
  });

  it('RFC 9380 test vector (J.9.1, BLS12381G1_XMD:SHA-256_SSWU_RO_, msg "abc")', async () => {
    const dst = 'QUUX-V01-CS02-with-BLS12381G1_XMD:SHA-256_SSWU_RO_';
    const p = (await read('hashToG1', [stringToHex('abc'), stringToHex(dst)])) as Hex;
    expect(BigInt(`0x${p.slice(2, 130)}`)).toBe(0x03567bc5ef9c690c2ab2ecdf6a96ef1c139cc0b2f284dca0a9a7943388a49a3aee664ba5379a7655d3c68900be2f6903n);
    expect(BigInt(`0x${p.slice(130)}`)).toBe(0x0b9c15f3fe6e5cf4211f346271d7b01c8f3b28be689c8429c85b67af215533311f0b8dfaaa154fa6b88176c229f2885dn);
  });

  it('pairing verification: valid aggregate true; wrong message false; infinity key and signature rejected', async () => {
    const vs = testValidators(5, 'pairing');
    const m = keccak256('0x77');
    const pk = blsAggregatePublicKeys(vs.map((v) => v.publicKey));
    const sig = blsAggregateSignatures(vs.map((v) => blsSign(v.secretKey, m)));
    const dst = stringToHex(BLS_SIG_DST);
    expect(await read('verifyMinSig', [pk, sig, m, dst])).toBe(true);
    expect(await read('verifyMinSig', [pk, sig, keccak256('0x78'), dst])).toBe(false);
    expect(await read('verifyMinSig', [`0x${'00'.repeat(256)}`, `0x${'00'.repeat(128)}`, m, dst])).toBe(false);
    expect(await read('verifyMinSig', [pk, `0x${'00'.repeat(128)}`, m, dst])).toBe(false);
  });

  it('ProofAnchor.SIG_DST / POP_DST equal the TypeScript constants', async () => {
    const rd = (functionName: 'SIG_DST' | 'POP_DST') => t.w.public.readContract({ address: t.sys.proofAnchor, abi: proofAnchorAbi, functionName });
    expect(await rd('SIG_DST')).toBe(stringToHex(BLS_SIG_DST));
    expect(await rd('POP_DST')).toBe(stringToHex(BLS_POP_DST));
  });
});

describe('validator set registration and rotation', () => {
  const deployAnchor = async (regs: ReturnType<typeof registrations>, num = 2n, den = 3n) => {
    const data = encodeDeployData({
      abi: proofAnchorAbi,
      bytecode: proofAnchorBytecode,
      args: [regs.map((r) => r.publicKey), regs.map((r) => r.proofOfPossession), regs.map((r) => r.power), num, den],
    });
    try {
      await t.w.public.call({ account: t.w.account, data });
      return 'ok';
    } catch (e) {
      const found = (e as BaseError).walk((x) => typeof (x as { data?: unknown }).data === 'string') as { data?: Hex } | null;
      if (!found?.data) throw e;
      return decodeErrorResult({ abi: [...proofAnchorAbi, ...blsErrors], data: found.data }).errorName;
    }
  };

  it('rejects a key without a valid proof of possession (rogue key), a duplicate or a negated key, an infinity key, bad thresholds', async () => {
    const vs = testValidators(3, 'reg');
    const regs = registrations(vs);
    expect(await deployAnchor(regs)).toBe('ok');
    // rogue key: the PoP of another key
    expect(await deployAnchor([regs[0]!, { ...regs[1]!, proofOfPossession: regs[2]!.proofOfPossession }, regs[2]!])).toBe('InvalidProofOfPossession');
    // rogue key: pk_r = pk' - pk_0 has no PoP the attacker can make without knowing its secret key
    const rogue = g2ToEip2537(g2FromEip2537(blsKeygen(hexToBytes(keccak256('0x66'))).publicKey).subtract(g2FromEip2537(regs[0]!.publicKey)));
    expect(await deployAnchor([regs[0]!, { ...regs[1]!, publicKey: rogue }])).toBe('InvalidProofOfPossession');
    expect(await deployAnchor([regs[0]!, regs[1]!, regs[0]!])).toBe('DuplicateValidator');
    // the negation of a key, with a valid proof of possession (made with -sk): its seat would cancel the other
    // in an aggregate, so both bits would count without a signature
    const r = bls12_381.fields.Fr.ORDER;
    const negSk = hexToBytes(toHex((r - BigInt(bytesToHex(vs[0]!.secretKey))) % r, { size: 32 }));
    const negPk = blsPublicKey(negSk);
    expect(g2FromEip2537(negPk).equals(g2FromEip2537(regs[0]!.publicKey).negate())).toBe(true);
    expect(blsVerifyProofOfPossession(negPk, blsProofOfPossession(negSk))).toBe(true);
    expect(await deployAnchor([regs[0]!, regs[1]!, { ...regs[2]!, publicKey: negPk, proofOfPossession: blsProofOfPossession(negSk) }])).toBe(
      'DuplicateValidator',
    );
    expect(await deployAnchor([{ ...regs[0]!, publicKey: `0x${'00'.repeat(256)}` }])).toBe('InvalidProofOfPossession');
    expect(await deployAnchor(regs, 0n, 3n)).toBe('InvalidValidatorSet');
    expect(await deployAnchor(regs, 4n, 3n)).toBe('InvalidValidatorSet');
    expect(await deployAnchor([{ ...regs[0]!, power: 0n }])).toBe('InvalidValidatorSet');
    expect(blsProofOfPossession(vs[0]!.secretKey)).toBe(vs[0]!.proofOfPossession);
  });

  it('rotation needs a quorum of the current set over the new root and epoch; a signed rotation cannot be replayed', async () => {
    const next = testValidators(4, 'rotated');
    const before = await readValidatorSet(t.w, t.sys.proofAnchor);
    const epoch0 = await setEpoch();
    // 4 of 7 is below 2/3; the next set's own keys are not the current set's
    await expect(rotate(next, { from: t.validators, signers: [0, 1, 2, 3], thresholdNum: 3n, thresholdDen: 4n })).rejects.toThrow(/ThresholdNotMet/);
    await expect(rotate(next, { from: next, signers: [0, 1, 2, 3], thresholdNum: 3n, thresholdDen: 4n, bitmapOf: [0, 1, 2, 3, 4] })).rejects.toThrow(
      /InvalidSignature/,
    );
    const { tx, args } = await rotate(next, { from: t.validators, signers: FIVE, thresholdNum: 3n, thresholdDen: 4n });
    expect(tx.status).toBe('success');
    const after = await readValidatorSet(t.w, t.sys.proofAnchor);
    expect(after.root).not.toBe(before.root);
    expect(after.publicKeys).toEqual(next.map((v) => v.publicKey));
    expect(after.thresholdNum).toBe(3n);
    expect(await setEpoch()).toBe(epoch0 + 1n);
    // back to the original set, signed by 3 of the 4
    await rotate(t.validators, { from: next, signers: [0, 1, 3] });
    expect((await readValidatorSet(t.w, t.sys.proofAnchor)).root).toBe(before.root);
    // the first rotation's signed transaction, sent again: the epoch moved on, so its signature no longer verifies
    const replay = await t.w.public
      .simulateContract({ address: t.sys.proofAnchor, abi: proofAnchorAbi, functionName: 'rotateValidatorSet', args, account: t.w.account })
      .catch((e) => e);
    expect(revertErrorName(replay)).toBe('InvalidSignature');
  });
});

const FIVE = [0, 1, 2, 4, 6];
const setEpoch = () => t.w.public.readContract({ address: t.sys.proofAnchor, abi: proofAnchorAbi, functionName: 'setEpoch' });

/** Rotates to `next`, signed by validators `signers` of the current set `from` (over rotationFor's message). */
async function rotate(
  next: ReturnType<typeof testValidators>,
  o: { from: ReturnType<typeof testValidators>; signers: number[]; thresholdNum?: bigint; thresholdDen?: bigint; gas?: bigint; bitmapOf?: number[] },
) {
  const validators = registrations(next);
  const r = await rotationFor(t.w, t.sys.proofAnchor, { validators, thresholdNum: o.thresholdNum, thresholdDen: o.thresholdDen });
  const q = quorumSign(o.from, o.signers, r.message);
  // bitmapOf: claim other signers than those who signed
  const bitmap = o.bitmapOf ? signerBitmap(o.bitmapOf) : q.signerBitmap;
  const tx = await rotateValidatorSet(
    t.w,
    t.sys.proofAnchor,
    { validators, thresholdNum: o.thresholdNum, thresholdDen: o.thresholdDen, signature: q.signature, signerBitmap: bitmap },
    { gas: o.gas },
  );
  const args = [
    validators.map((v) => v.publicKey),
    validators.map((v) => v.proofOfPossession),
    validators.map((v) => v.power),
    o.thresholdNum ?? 2n,
    o.thresholdDen ?? 3n,
    bitmap,
    q.signature,
  ] as const;
  return { tx, args };
}

describe('rotation and in-flight anchors', () => {
  it('after a rotation the old set can no longer prove; the new set (3 of 4 at 3/4) can', async () => {
    const { plan, message: oldMessage } = await planFor(t, 'acc://rotation.acme', [{ target: t.target, value: 0n, data: '0x' }]);
    await createAnchor(t.w, t.sys.proofAnchor, plan);
    const oldSig = quorumSign(t.validators, [0, 1, 2, 3, 4, 5, 6], oldMessage);
    const next = testValidators(4, 'rotated-2');
    await rotate(next, { from: t.validators, signers: FIVE, thresholdNum: 3n, thresholdDen: 4n });
    try {
      const newRoot = (await readValidatorSet(t.w, t.sys.proofAnchor)).root;
      // old set, old message: the bitmap now names the new set's keys and the message the new root
      const r1 = await executeComprehensiveProof(
        t.w,
        t.sys.proofAnchor,
        { anchorId: plan.anchorId, signature: oldSig.signature, signerBitmap: 0b1111n },
        { gas: 2_000_000n },
      );
      expect(r1.tx?.status).toBe('reverted');
      const newMessage = anchorMessage({ chainId: t.chainId, anchor: t.sys.proofAnchor, anchorId: plan.anchorId, validatorSetRoot: newRoot });
      // 2 of 4 is below 3/4
      const r2 = await executeComprehensiveProof(
        t.w,
        t.sys.proofAnchor,
        { anchorId: plan.anchorId, ...quorumSign(next, [0, 3], newMessage) },
        { gas: 2_000_000n },
      );
      expect(r2.tx?.status).toBe('reverted');
      const r3 = await executeComprehensiveProof(t.w, t.sys.proofAnchor, { anchorId: plan.anchorId, ...quorumSign(next, [0, 1, 3], newMessage) });
      expect(r3.tx?.status).toBe('success');
      expect((await readAnchorState(t.w, t.sys.proofAnchor, plan.anchorId)).status).toBe('proven');
    } finally {
      await rotate(t.validators, { from: next, signers: [0, 1, 3] });
    }
  });
});

describe('set size limit', () => {
  it('accepts MAX_VALIDATORS (40) keys and rejects 41', async () => {
    const many = testValidators(41, 'many');
    const gas = 30_000_000n;
    const { tx: ok } = await rotate(many.slice(0, 40), { from: t.validators, signers: FIVE, gas });
    expect(ok.status).toBe('success');
    expect((await readValidatorSet(t.w, t.sys.proofAnchor)).publicKeys).toHaveLength(40);
    const { tx: tooMany } = await rotate(many, { from: many.slice(0, 40), signers: Array.from({ length: 27 }, (_, i) => i), gas });
    expect(tooMany.status).toBe('reverted');
    await rotate(t.validators, { from: many.slice(0, 40), signers: Array.from({ length: 27 }, (_, i) => i), gas });
    expect((await readValidatorSet(t.w, t.sys.proofAnchor)).root).toBe(t.setRoot);
  }, 120_000);
});
