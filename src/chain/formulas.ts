/**
 * Domain formulas of the proof cycle: the ONE place where commitments, leaves, roots, ids and signed
 * messages are defined. Imported by the gateway, the validators and the tests; pinned to the Solidity
 * (ProofAnchor / AbstractAccount views) by test/chain/formulas.test.ts and the shared vectors in
 * test/vectors/formulas.json. Pure functions, no I/O. All hashes are 0x-prefixed 32-byte hex strings,
 * chain integers are bigint.
 *
 *   executionCommitment({chainId, target, value, data})
 *       = keccak256(abi.encodePacked(uint256 chainId, address target, uint256 value, bytes32 keccak256(data)))
 *   adiHash(adiUrl) = keccak256(utf8(adiUrl))            (the URL exactly as given: pass the canonical form)
 *   legLeaf({account, adiHash, executionCommitment, deadline, gasLimit})
 *       = keccak256(abi.encode(bytes32 "pgw:leaf:v3", address account, bytes32 adiHash, bytes32 executionCommitment,
 *                              uint256 deadline, uint256 gasLimit))
 *       account = the identity's AbstractAccount (same address on every chain), i.e. msg.sender of consume();
 *       deadline = unix seconds after which consume() refuses the leaf (the intent's expires_at);
 *       gasLimit = gas the account gives the call, enforced (0: none; the leg's contractCall.gasLimit).
 *   merkleRoot(leaves): positional binary tree, leaves zero-padded to the next power of two,
 *       node = keccak256(left || right); one leaf => root = leaf. merkleProof(leaves, i) = siblings bottom-up.
 *   anchorId({chainId, anchor, commitmentRoot, operationId, ledgerTxHash, leafCount})
 *       = keccak256(abi.encode(bytes32 "pgw:anchor-id:v1", uint256 chainId, address anchor, bytes32 commitmentRoot,
 *                              bytes32 operationId, bytes32 ledgerTxHash, uint256 leafCount))
 *   anchorMessage({chainId, anchor, anchorId, validatorSetRoot})      (what validators BLS-sign; 32 bytes)
 *       = keccak256(abi.encode(bytes32 "pgw:bls:anchor:v1", uint256 chainId, address anchor, bytes32 anchorId,
 *                              bytes32 validatorSetRoot))
 *       The anchor id commits to the commitment root, the operation id and the ledger tx, so the message binds
 *       (chain, contract, anchor, commitment root, operation id, validator set) with domain separation.
 *   validatorSetRoot({publicKeys, powers, thresholdNum, thresholdDen})
 *       = keccak256(bytes32 "pgw:valset:v1" || uint256 num || uint256 den || uint256 n || pk_0..pk_{n-1}
 *                   (EIP-2537 G2, 256 B each) || uint256 power_0..power_{n-1})
 *   rotationMessage({chainId, anchor, currentRoot, newRoot, epoch})   (a quorum of the current set signs it to rotate)
 *       = keccak256(abi.encode(bytes32 "pgw:bls:rotate:v1", uint256 chainId, address anchor, bytes32 currentRoot,
 *                              bytes32 newRoot, uint256 epoch))
 *   operationId(blobs) = sha256( for each blob: u32be(byteLength(canonicalJson(blob))) || canonicalJson(blob) )
 *   resultMessage({...}) (post-execution attestation of an execution's result)
 *       = keccak256(abi.encode(bytes32 "pgw:bls:result:v1", uint256 chainId, address anchor, bytes32 anchorId,
 *                              uint256 leafIndex, bytes32 resultHash, bytes32 validatorSetRoot))
 *
 *   batchOperationId(members) = keccak256(abi.encode(bytes32 "pgw:batch-op:v1", bytes32[] operationIds))
 *   batchLedgerTxHash(members) = keccak256(abi.encode(bytes32 "pgw:batch-ledger:v1", bytes32[] ledgerTxHashes))
 *       the operation id and ledger tx hash of a batch anchor (legs of several intents under one root): positional
 *       over the members in batch order, so the batch's anchor id commits to which intents it holds and in which
 *       order; the leaves (each binding its own account and ADI) are the members' legs in that order.
 *
 * Helpers: planAnchor({chainId, anchor, account, adiUrl, operationId, ledgerTxHash, legs}) derives everything
 * for one identity's legs on one chain (commitments, leaves, root, anchorId, per-leg proofs); planBatchAnchor
 * does the same for legs of several identities (each leg names its account and adiUrl);
 * verifyMerkleProof, merkleDepth, meetsThreshold (the contract's threshold rule), canonicalJson.
 *
 * BLS messages are hashed to G1 (RFC 9380, BLS12381G1_XMD:SHA-256_SSWU_RO_) with DST BLS_SIG_DST; proofs
 * of possession sign the key's 256-byte EIP-2537 encoding with BLS_POP_DST (see ./bls.ts).
 */
import { concatHex, encodeAbiParameters, encodePacked, keccak256, numberToHex, sha256, stringToBytes, stringToHex, toHex, type Address, type Hex } from 'viem';

/** bytes32 domain tags, right-padded ASCII (Solidity `bytes32 x = "..."`). */
export const DOMAIN = {
  anchorId: stringToHex('pgw:anchor-id:v1', { size: 32 }),
  anchorMessage: stringToHex('pgw:bls:anchor:v1', { size: 32 }),
  leaf: stringToHex('pgw:leaf:v3', { size: 32 }),
  validatorSet: stringToHex('pgw:valset:v1', { size: 32 }),
  resultMessage: stringToHex('pgw:bls:result:v1', { size: 32 }),
  rotationMessage: stringToHex('pgw:bls:rotate:v1', { size: 32 }),
} as const;

/** bytes32 domain tags of a batch anchor's identifiers (off chain only: the contract sees them as any anchor's). */
export const BATCH_DOMAIN = {
  operation: stringToHex('pgw:batch-op:v1', { size: 32 }),
  ledger: stringToHex('pgw:batch-ledger:v1', { size: 32 }),
} as const;

/** Hash-to-curve domain separation tags (must equal ProofAnchor.SIG_DST / POP_DST). */
export const BLS_SIG_DST = 'PGW-V1-BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_';
export const BLS_POP_DST = 'PGW-V1-BLS_POP_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_';

/** Largest number of legs (leaves) in one anchor (ProofAnchor.MAX_LEAVES). */
export const MAX_LEAVES = 128;

export interface ExecutionCall {
  chainId: bigint;
  target: Address;
  value: bigint;
  /** calldata; '0x' for a native transfer */
  data: Hex;
}

export function executionCommitment({ chainId, target, value, data }: ExecutionCall): Hex {
  return keccak256(encodePacked(['uint256', 'address', 'uint256', 'bytes32'], [chainId, target, value, keccak256(data)]));
}

export function adiHash(adiUrl: string): Hex {
  return keccak256(stringToHex(adiUrl));
}

export function legLeaf(p: { account: Address; adiHash: Hex; executionCommitment: Hex; deadline: bigint; gasLimit: bigint }): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'address' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }, { type: 'uint256' }],
      [DOMAIN.leaf, p.account, p.adiHash, p.executionCommitment, p.deadline, p.gasLimit],
    ),
  );
}

const ZERO32 = `0x${'00'.repeat(32)}` as Hex;

/** Tree depth for n leaves: ceil(log2(n)); 1 leaf => 0. */
export function merkleDepth(leafCount: number): number {
  if (!Number.isInteger(leafCount) || leafCount < 1) throw new Error('leafCount must be a positive integer');
  let d = 0;
  while (1 << d < leafCount) d++;
  return d;
}

function levels(leaves: readonly Hex[]): Hex[][] {
  const depth = merkleDepth(leaves.length);
  let level: Hex[] = [...leaves];
  while (level.length < 1 << depth) level.push(ZERO32);
  const out = [level];
  while (level.length > 1) {
    const next: Hex[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(keccak256(concatHex([level[i]!, level[i + 1]!])));
    level = next;
    out.push(level);
  }
  return out;
}

export function merkleRoot(leaves: readonly Hex[]): Hex {
  const ls = levels(leaves);
  return ls[ls.length - 1]![0]!;
}

/** Sibling hashes from the leaf up; the leaf index gives the left/right order at each level. */
export function merkleProof(leaves: readonly Hex[], index: number): Hex[] {
  if (index < 0 || index >= leaves.length) throw new Error('leaf index out of range');
  return proofFromLevels(levels(leaves), index);
}

function proofFromLevels(ls: readonly Hex[][], index: number): Hex[] {
  const proof: Hex[] = [];
  let i = index;
  for (let l = 0; l < ls.length - 1; l++) {
    proof.push(ls[l]![i ^ 1]!);
    i >>= 1;
  }
  return proof;
}

export function verifyMerkleProof(p: { leaf: Hex; index: number; proof: readonly Hex[]; root: Hex; leafCount: number }): boolean {
  if (p.index < 0 || p.index >= p.leafCount || p.proof.length !== merkleDepth(p.leafCount)) return false;
  let node = p.leaf;
  for (let l = 0; l < p.proof.length; l++) {
    node = (p.index >> l) & 1 ? keccak256(concatHex([p.proof[l]!, node])) : keccak256(concatHex([node, p.proof[l]!]));
  }
  return node.toLowerCase() === p.root.toLowerCase();
}

export interface AnchorContent {
  chainId: bigint;
  /** ProofAnchor address */
  anchor: Address;
  commitmentRoot: Hex;
  operationId: Hex;
  /** the ledger (Accumulate) transaction the anchor came from, 32 bytes */
  ledgerTxHash: Hex;
  leafCount: bigint;
}

export function anchorId(a: AnchorContent): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }],
      [DOMAIN.anchorId, a.chainId, a.anchor, a.commitmentRoot, a.operationId, a.ledgerTxHash, a.leafCount],
    ),
  );
}

export function anchorMessage(p: { chainId: bigint; anchor: Address; anchorId: Hex; validatorSetRoot: Hex }): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes32' }, { type: 'bytes32' }],
      [DOMAIN.anchorMessage, p.chainId, p.anchor, p.anchorId, p.validatorSetRoot],
    ),
  );
}

export interface ValidatorSetParams {
  /** EIP-2537 G2 encodings (256 bytes each), in validator index order (bit i of a signer bitmap) */
  publicKeys: readonly Hex[];
  powers: readonly bigint[];
  thresholdNum: bigint;
  thresholdDen: bigint;
}

export function validatorSetRoot(s: ValidatorSetParams): Hex {
  if (s.publicKeys.length !== s.powers.length) throw new Error('publicKeys and powers differ in length');
  const u = (x: bigint) => numberToHex(x, { size: 32 });
  return keccak256(concatHex([DOMAIN.validatorSet, u(s.thresholdNum), u(s.thresholdDen), u(BigInt(s.publicKeys.length)), ...s.publicKeys, ...s.powers.map(u)]));
}

/**
 * What a quorum of the current set BLS-signs to replace it with the set of root `newRoot` (ProofAnchor
 * .rotationMessage): keccak256(abi.encode(bytes32 "pgw:bls:rotate:v1", uint256 chainId, address anchor,
 * bytes32 currentRoot, bytes32 newRoot, uint256 epoch)), epoch = rotations so far (ProofAnchor.setEpoch).
 */
export function rotationMessage(p: { chainId: bigint; anchor: Address; currentRoot: Hex; newRoot: Hex; epoch: bigint }): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }],
      [DOMAIN.rotationMessage, p.chainId, p.anchor, p.currentRoot, p.newRoot, p.epoch],
    ),
  );
}

/** The operation id of a batch anchor: its members' operation ids in batch order. */
export function batchOperationId(members: readonly { operationId: Hex }[]): Hex {
  return keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'bytes32[]' }], [BATCH_DOMAIN.operation, members.map((m) => m.operationId)]));
}

/** The ledger tx hash of a batch anchor: its members' ledger transaction hashes in batch order. */
export function batchLedgerTxHash(members: readonly { ledgerTxHash: Hex }[]): Hex {
  return keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'bytes32[]' }], [BATCH_DOMAIN.ledger, members.map((m) => m.ledgerTxHash)]));
}

/** Whether signers with these powers meet the threshold (signed * den >= total * num), as on chain. */
export function meetsThreshold(s: Pick<ValidatorSetParams, 'powers' | 'thresholdNum' | 'thresholdDen'>, signerBitmap: bigint): boolean {
  let signed = 0n;
  let total = 0n;
  s.powers.forEach((p, i) => {
    total += p;
    if ((signerBitmap >> BigInt(i)) & 1n) signed += p;
  });
  return signerBitmap !== 0n && signerBitmap >> BigInt(s.powers.length) === 0n && signed * s.thresholdDen >= total * s.thresholdNum;
}

export function resultMessage(p: { chainId: bigint; anchor: Address; anchorId: Hex; leafIndex: bigint; resultHash: Hex; validatorSetRoot: Hex }): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes32' }, { type: 'uint256' }, { type: 'bytes32' }, { type: 'bytes32' }],
      [DOMAIN.resultMessage, p.chainId, p.anchor, p.anchorId, p.leafIndex, p.resultHash, p.validatorSetRoot],
    ),
  );
}

/** JSON with object keys sorted recursively (code-point order), no whitespace, arrays in order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`canonicalJson: number ${value} is not a safe integer (use a string)`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => compareCodePoints(a, b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new Error(`canonicalJson: unsupported type ${typeof value}`);
}

/** Order of code points: how canonicalJson orders keys (and the proof bundle its sorted lists). */
export function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d) return d;
  }
  return x.length - y.length;
}

/** SHA-256 over the length-prefixed canonical JSON of each blob of the intent, as stored on the ledger. */
export function operationId(blobs: readonly unknown[]): Hex {
  const parts: Hex[] = [];
  for (const b of blobs) {
    const bytes = stringToBytes(canonicalJson(b));
    parts.push(numberToHex(bytes.length, { size: 4 }), toHex(bytes));
  }
  return sha256(parts.length ? concatHex(parts) : '0x');
}

/** Everything about one anchor on one chain, derived from its legs. */
export interface AnchorPlan extends AnchorContent {
  leaves: Hex[];
  commitments: Hex[];
  anchorId: Hex;
  /** per leg: { leafIndex, deadline, gasLimit, merkleProof } as AbstractAccount.executeGovernanceProofDirect expects */
  proofs: { leafIndex: bigint; deadline: bigint; gasLimit: bigint; merkleProof: Hex[] }[];
}

/**
 * Builds the anchor for the legs of one identity on one chain. Leg i is leaf i.
 * `account` is the identity's AbstractAccount address, `adiUrl` its ADI (canonical form), `deadline` the unix
 * second after which no leg may execute (the intent's expires_at); a leg's `gasLimit` (default 0: none) the gas its
 * call must be given.
 */
export function planAnchor(p: {
  chainId: bigint;
  anchor: Address;
  account: Address;
  adiUrl: string;
  operationId: Hex;
  ledgerTxHash: Hex;
  deadline: bigint;
  legs: readonly { target: Address; value: bigint; data: Hex; gasLimit?: bigint }[];
}): AnchorPlan {
  return planBatchAnchor({ ...p, legs: p.legs.map((l) => ({ ...l, account: p.account, adiUrl: p.adiUrl, deadline: p.deadline })) });
}

/**
 * A batched anchor: legs of several identities under one root (each leaf binds its own account and ADI,
 * so an account can only consume its own legs). Leg i is leaf i.
 */
export function planBatchAnchor(p: {
  chainId: bigint;
  anchor: Address;
  operationId: Hex;
  ledgerTxHash: Hex;
  legs: readonly { account: Address; adiUrl: string; target: Address; value: bigint; data: Hex; deadline: bigint; gasLimit?: bigint }[];
}): AnchorPlan {
  if (p.legs.length < 1 || p.legs.length > MAX_LEAVES) throw new Error(`an anchor holds 1..${MAX_LEAVES} legs`);
  const commitments = p.legs.map((l) => executionCommitment({ chainId: p.chainId, target: l.target, value: l.value, data: l.data }));
  const leaves = p.legs.map((l, i) =>
    legLeaf({ account: l.account, adiHash: adiHash(l.adiUrl), executionCommitment: commitments[i]!, deadline: l.deadline, gasLimit: l.gasLimit ?? 0n }),
  );
  // the tree once: every leg's proof is read from it (a tree per proof made planning a batch quadratic)
  const tree = levels(leaves);
  const content: AnchorContent = {
    chainId: p.chainId,
    anchor: p.anchor,
    commitmentRoot: tree[tree.length - 1]![0]!,
    operationId: p.operationId,
    ledgerTxHash: p.ledgerTxHash,
    leafCount: BigInt(leaves.length),
  };
  return {
    ...content,
    leaves,
    commitments,
    anchorId: anchorId(content),
    proofs: leaves.map((_, i) => ({
      leafIndex: BigInt(i),
      deadline: p.legs[i]!.deadline,
      gasLimit: p.legs[i]!.gasLimit ?? 0n,
      merkleProof: proofFromLevels(tree, i),
    })),
  };
}

// =====================================================================================================
// Post-execution result, as the validators attest it; pinned by
// test/validator/formulas-result.test.ts.
//
//   eventsHash(logs) = keccak256(abi.encode(bytes32 "pgw:events:v1", (address,bytes32[],bytes)[] logs))
//       over ALL logs of the execution receipt, in receipt order (as proven by the receipt trie).
//   resultHash(r)    = keccak256(abi.encode(bytes32 "pgw:result:v1", uint256 chainId, bytes32 txHash,
//                        uint256 blockNumber, bytes32 blockHash, bytes32 transactionsRoot, bytes32 receiptsRoot,
//                        bytes32 stateRoot, uint8 status, uint256 txIndex, uint256 gasUsed, bytes32 eventsHash,
//                        bytes32 executionCommitment))
//   The result message the validators BLS-sign is resultMessage({chainId, anchor, anchorId, leafIndex,
//   resultHash, validatorSetRoot}) above.
// =====================================================================================================

export const RESULT_DOMAIN = {
  events: stringToHex('pgw:events:v1', { size: 32 }),
  result: stringToHex('pgw:result:v1', { size: 32 }),
} as const;

export interface ResultLog {
  address: Address;
  topics: readonly Hex[];
  data: Hex;
}

export function eventsHash(logs: readonly ResultLog[]): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        {
          type: 'tuple[]',
          components: [
            { name: 'address', type: 'address' },
            { name: 'topics', type: 'bytes32[]' },
            { name: 'data', type: 'bytes' },
          ],
        },
      ],
      [RESULT_DOMAIN.events, logs.map((l) => ({ address: l.address, topics: [...l.topics], data: l.data }))],
    ),
  );
}

export interface ExecutionResult {
  chainId: bigint;
  txHash: Hex;
  blockNumber: bigint;
  blockHash: Hex;
  transactionsRoot: Hex;
  receiptsRoot: Hex;
  stateRoot: Hex;
  /** receipt status: 1 success, 0 reverted */
  status: number;
  txIndex: bigint;
  gasUsed: bigint;
  eventsHash: Hex;
  executionCommitment: Hex;
}

export function resultHash(r: ExecutionResult): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'uint8' },
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'bytes32' },
      ],
      [
        RESULT_DOMAIN.result,
        r.chainId,
        r.txHash,
        r.blockNumber,
        r.blockHash,
        r.transactionsRoot,
        r.receiptsRoot,
        r.stateRoot,
        r.status,
        r.txIndex,
        r.gasUsed,
        r.eventsHash,
        r.executionCommitment,
      ],
    ),
  );
}
