/**
 * The domain formulas are pinned three ways: (1) the committed vectors (test/vectors/formulas.json) are
 * reproduced by src/chain/formulas.ts, (2) independent re-implementations (raw byte concatenation, node:crypto)
 * agree for the byte-level ones, (3) the Solidity views return the same bytes on anvil.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexToBytes, keccak256, stringToHex, type Address, type Hex } from 'viem';
import * as f from '../../src/chain/formulas.js';
import { blsHashToG1, blsKeygen, blsProofOfPossession, blsSign } from '../../src/chain/bls.js';
import { abstractAccountAbi, proofAnchorAbi } from '../../src/chain/abi/index.js';
import { createAccount } from '../../src/chain/account.js';
import { registrations, setupSystem, type TestSystem } from './fixture.js';

type Vectors = {
  domains: Record<string, Hex>;
  dst: { sig: string; pop: string };
  executionCommitment: { input: { chainId: string; target: Address; value: string; data: Hex }; output: Hex }[];
  adiHash: { input: string; output: Hex }[];
  legLeaf: { input: { account: Address; adiHash: Hex; executionCommitment: Hex; deadline: string; gasLimit: string }; output: Hex }[];
  merkle: { leaves: Hex[]; root: Hex; proofs: Hex[][] }[];
  anchorId: { input: { chainId: string; anchor: Address; commitmentRoot: Hex; operationId: Hex; ledgerTxHash: Hex; leafCount: string }; output: Hex }[];
  anchorMessage: { input: { chainId: string; anchor: Address; anchorId: Hex; validatorSetRoot: Hex }; output: Hex }[];
  rotationMessage: { input: { chainId: string; anchor: Address; currentRoot: Hex; newRoot: Hex; epoch: string }; output: Hex }[];
  validatorSetRoot: { input: { publicKeys: Hex[]; powers: string[]; thresholdNum: string; thresholdDen: string }; output: Hex }[];
  operationId: { input: unknown[]; canonical: string[]; output: Hex }[];
  resultMessage: { input: { chainId: string; anchor: Address; anchorId: Hex; leafIndex: string; resultHash: Hex; validatorSetRoot: Hex }; output: Hex }[];
  bls: { seed: Hex; publicKey: Hex; proofOfPossession: Hex; message: Hex; hashToG1: Hex; signature: Hex }[];
};
const V = JSON.parse(readFileSync(new URL('../vectors/formulas.json', import.meta.url), 'utf8')) as Vectors;
const call = (i: Vectors['executionCommitment'][number]['input']) => ({ ...i, chainId: BigInt(i.chainId), value: BigInt(i.value) });

describe('vectors reproduced by the TypeScript formulas', () => {
  it('domains and DSTs', () => {
    expect(f.DOMAIN).toEqual(V.domains);
    expect(V.dst).toEqual({ sig: f.BLS_SIG_DST, pop: f.BLS_POP_DST });
  });
  it('executionCommitment, also as a raw 116-byte preimage', () => {
    for (const v of V.executionCommitment) {
      expect(f.executionCommitment(call(v.input))).toBe(v.output);
      const be = (x: bigint, n: number) => Buffer.from(x.toString(16).padStart(n * 2, '0'), 'hex');
      const pre = Buffer.concat([
        be(BigInt(v.input.chainId), 32),
        Buffer.from(v.input.target.slice(2), 'hex'),
        be(BigInt(v.input.value), 32),
        Buffer.from(keccak256(v.input.data).slice(2), 'hex'),
      ]);
      expect(pre).toHaveLength(116);
      expect(keccak256(pre)).toBe(v.output);
    }
  });
  it('adiHash, legLeaf', () => {
    for (const v of V.adiHash) expect(f.adiHash(v.input)).toBe(v.output);
    for (const v of V.legLeaf) expect(f.legLeaf({ ...v.input, deadline: BigInt(v.input.deadline), gasLimit: BigInt(v.input.gasLimit) })).toBe(v.output);
  });
  it('merkle roots and proofs; proofs verify only at their own index', () => {
    for (const v of V.merkle) {
      expect(f.merkleRoot(v.leaves)).toBe(v.root);
      v.leaves.forEach((leaf, i) => {
        expect(f.merkleProof(v.leaves, i)).toEqual(v.proofs[i]);
        expect(f.verifyMerkleProof({ leaf, index: i, proof: v.proofs[i]!, root: v.root, leafCount: v.leaves.length })).toBe(true);
        if (v.leaves.length > 1) {
          const j = (i + 1) % v.leaves.length;
          expect(f.verifyMerkleProof({ leaf, index: j, proof: v.proofs[i]!, root: v.root, leafCount: v.leaves.length })).toBe(false);
        }
      });
    }
    expect(f.merkleRoot([V.merkle[0]!.leaves[0]!])).toBe(V.merkle[0]!.leaves[0]);
  });
  it('anchorId, anchorMessage, validatorSetRoot, resultMessage', () => {
    for (const v of V.anchorId) expect(f.anchorId({ ...v.input, chainId: BigInt(v.input.chainId), leafCount: BigInt(v.input.leafCount) })).toBe(v.output);
    for (const v of V.anchorMessage) expect(f.anchorMessage({ ...v.input, chainId: BigInt(v.input.chainId) })).toBe(v.output);
    for (const v of V.rotationMessage) expect(f.rotationMessage({ ...v.input, chainId: BigInt(v.input.chainId), epoch: BigInt(v.input.epoch) })).toBe(v.output);
    for (const v of V.validatorSetRoot) {
      expect(
        f.validatorSetRoot({
          publicKeys: v.input.publicKeys,
          powers: v.input.powers.map(BigInt),
          thresholdNum: BigInt(v.input.thresholdNum),
          thresholdDen: BigInt(v.input.thresholdDen),
        }),
      ).toBe(v.output);
    }
    for (const v of V.resultMessage) {
      expect(f.resultMessage({ ...v.input, chainId: BigInt(v.input.chainId), leafIndex: BigInt(v.input.leafIndex) })).toBe(v.output);
    }
  });
  it('operationId = sha256 of length-prefixed canonical JSON (checked with node:crypto)', () => {
    for (const v of V.operationId) {
      expect(v.input.map(f.canonicalJson)).toEqual(v.canonical);
      expect(f.operationId(v.input)).toBe(v.output);
      const h = createHash('sha256');
      for (const c of v.canonical) {
        const b = Buffer.from(c, 'utf8');
        const len = Buffer.alloc(4);
        len.writeUInt32BE(b.length);
        h.update(len).update(b);
      }
      expect(`0x${h.digest('hex')}`).toBe(v.output);
    }
    // key order, whitespace and undefined do not matter; unsafe numbers are refused
    expect(f.operationId([{ b: 1, a: [1, { d: 2, c: undefined }] }])).toBe(f.operationId([{ a: [1, { d: 2 }], b: 1 }]));
    expect(() => f.canonicalJson({ x: 2 ** 53 })).toThrow();
    expect(() => f.canonicalJson({ x: 1.5 })).toThrow();
  });
  it('BLS keys, proofs of possession, hashes and signatures are deterministic', () => {
    for (const v of V.bls) {
      const k = blsKeygen(hexToBytes(v.seed));
      expect(k.publicKey).toBe(v.publicKey);
      expect(blsProofOfPossession(k.secretKey)).toBe(v.proofOfPossession);
      expect(blsHashToG1(v.message)).toBe(v.hashToG1);
      expect(blsSign(k.secretKey, v.message)).toBe(v.signature);
    }
  });
  it('meetsThreshold: 5 of 7 at equal power yes, 4 of 7 no; bits beyond the set no', () => {
    const s = { powers: Array(7).fill(100n) as bigint[], thresholdNum: 2n, thresholdDen: 3n };
    expect(f.meetsThreshold(s, 0b1010111n)).toBe(true);
    expect(f.meetsThreshold(s, 0b1010101n)).toBe(false);
    expect(f.meetsThreshold(s, 0b10011111n)).toBe(false);
  });
});

describe('the Solidity views return the same bytes', () => {
  let t: TestSystem;
  let account: Address;
  beforeAll(async () => {
    t = await setupSystem();
    account = (await createAccount(t.w, t.sys.accountFactory, 'acc://vectors.acme')).address;
  });
  afterAll(async () => {
    await t?.anvil.stop();
  });
  const anchorRead = (functionName: string, args: readonly unknown[] = []) =>
    t.w.public.readContract({ address: t.sys.proofAnchor, abi: proofAnchorAbi, functionName: functionName as never, args: args as never }) as Promise<unknown>;

  it('domain tags', async () => {
    expect(await anchorRead('ANCHOR_ID_DOMAIN')).toBe(f.DOMAIN.anchorId);
    expect(await anchorRead('ANCHOR_MSG_DOMAIN')).toBe(f.DOMAIN.anchorMessage);
    expect(await anchorRead('LEAF_DOMAIN')).toBe(f.DOMAIN.leaf);
    expect(await anchorRead('VALSET_DOMAIN')).toBe(f.DOMAIN.validatorSet);
    expect(await anchorRead('ROTATION_MSG_DOMAIN')).toBe(f.DOMAIN.rotationMessage);
    expect(await anchorRead('MAX_LEAVES')).toBe(BigInt(f.MAX_LEAVES));
  });
  it('AbstractAccount.executionCommitment (block.chainid = 11155111)', async () => {
    const onChain = V.executionCommitment.filter((v) => v.input.chainId === String(t.chainId));
    expect(onChain.length).toBeGreaterThan(0);
    for (const v of onChain) {
      expect(
        await t.w.public.readContract({
          address: account,
          abi: abstractAccountAbi,
          functionName: 'executionCommitment',
          args: [v.input.target, BigInt(v.input.value), v.input.data],
        }),
      ).toBe(v.output);
    }
  });
  it('computeLeaf and computeRoot', async () => {
    for (const v of V.legLeaf)
      expect(
        await anchorRead('computeLeaf', [v.input.account, v.input.adiHash, v.input.executionCommitment, BigInt(v.input.deadline), BigInt(v.input.gasLimit)]),
      ).toBe(v.output);
    for (const v of V.merkle) {
      for (let i = 0; i < v.leaves.length; i++) {
        expect(await anchorRead('computeRoot', [v.leaves[i], BigInt(i), v.proofs[i]])).toBe(v.root);
      }
    }
  });
  it('computeAnchorId, anchorMessage and rotationMessage for this chain and this anchor', async () => {
    for (const v of V.anchorId) {
      const input = { ...v.input, chainId: t.chainId, anchor: t.sys.proofAnchor, leafCount: BigInt(v.input.leafCount) };
      expect(await anchorRead('computeAnchorId', [input.commitmentRoot, input.operationId, input.ledgerTxHash, input.leafCount])).toBe(f.anchorId(input));
    }
    const id = keccak256(stringToHex('some anchor'));
    const root = keccak256(stringToHex('some set'));
    expect(await anchorRead('anchorMessage', [id, root])).toBe(
      f.anchorMessage({ chainId: t.chainId, anchor: t.sys.proofAnchor, anchorId: id, validatorSetRoot: root }),
    );
    const next = keccak256(stringToHex('next set'));
    expect(await anchorRead('rotationMessage', [root, next, 3n])).toBe(
      f.rotationMessage({ chainId: t.chainId, anchor: t.sys.proofAnchor, currentRoot: root, newRoot: next, epoch: 3n }),
    );
  });
  it('validatorSetRoot of the deployed set', async () => {
    const regs = registrations(t.validators);
    const want = f.validatorSetRoot({ publicKeys: regs.map((r) => r.publicKey), powers: regs.map((r) => r.power), thresholdNum: 2n, thresholdDen: 3n });
    expect(await anchorRead('validatorSetRoot')).toBe(want);
    expect(t.setRoot).toBe(want);
  });
});
