/**
 * BLS12-381 for the validator quorum, min-sig variant (chosen by measured gas, see bench/gas.ts):
 * public keys in G2, signatures in G1, messages hashed to G1 per RFC 9380 with BLS_SIG_DST (the same DST
 * the ProofAnchor contract uses). Pure: no I/O, no globals beyond @noble/curves.
 *
 * Every point crossing this module's boundary is an EIP-2537 encoding, the form the contract takes:
 * an Fp element is 64 bytes (16 zero bytes + 48-byte big-endian), G1 = x || y (128 bytes),
 * G2 = x.c0 || x.c1 || y.c0 || y.c1 (256 bytes). noble's own toBytes() (ZCash, 48-byte limbs, c1 first,
 * flag bits) is NOT that form.
 *
 * Typical validator flow:
 *   const { secretKey, publicKey } = blsKeygen();            // publicKey: 256-byte G2 hex
 *   const pop = blsProofOfPossession(secretKey);             // registered with the key (ProofAnchor ctor/rotation)
 *   const sig = blsSign(secretKey, anchorMessage({...}));    // 128-byte G1 hex over the 32-byte message
 * Gateway: blsAggregateSignatures([sig...]) + signerBitmap([indices]) -> executeComprehensiveProof.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatHex, hexToBigInt, hexToBytes, numberToHex, sliceHex, type Hex } from 'viem';
import { BLS_POP_DST, BLS_SIG_DST } from './formulas.js';

const sigs = bls12_381.shortSignatures; // signatures in G1, keys in G2
const G1 = bls12_381.G1.Point;
const G2 = bls12_381.G2.Point;
const Fp2 = bls12_381.fields.Fp2;

type G1Point = ReturnType<typeof G1.fromAffine>;
type G2Point = ReturnType<typeof G2.fromAffine>;

const fp = (x: bigint): Hex => numberToHex(x, { size: 64 });
const ZERO = (n: number) => `0x${'00'.repeat(n)}` as Hex;

export function g1ToEip2537(p: G1Point): Hex {
  if (p.is0()) return ZERO(128);
  const a = p.toAffine();
  return concatHex([fp(a.x), fp(a.y)]);
}

export function g2ToEip2537(p: G2Point): Hex {
  if (p.is0()) return ZERO(256);
  const a = p.toAffine();
  return concatHex([fp(a.x.c0), fp(a.x.c1), fp(a.y.c0), fp(a.y.c1)]);
}

function limb(h: Hex, i: number): bigint {
  const part = sliceHex(h, i * 64, (i + 1) * 64);
  if (hexToBigInt(sliceHex(part, 0, 16)) !== 0n) throw new Error('EIP-2537: top 16 bytes of an Fp element must be zero');
  return hexToBigInt(part);
}

/** Decodes and validates (on curve, in subgroup, not infinity) a 128-byte G1 point. */
export function g1FromEip2537(h: Hex): G1Point {
  if (hexToBytes(h).length !== 128) throw new Error('G1 point must be 128 bytes');
  const p = G1.fromAffine({ x: limb(h, 0), y: limb(h, 1) });
  p.assertValidity();
  if (p.is0()) throw new Error('G1 point at infinity');
  return p;
}

/** Decodes and validates (on curve, in subgroup, not infinity) a 256-byte G2 point. */
export function g2FromEip2537(h: Hex): G2Point {
  if (hexToBytes(h).length !== 256) throw new Error('G2 point must be 256 bytes');
  const x = Fp2.create({ c0: limb(h, 0), c1: limb(h, 1) });
  const y = Fp2.create({ c0: limb(h, 2), c1: limb(h, 3) });
  const p = G2.fromAffine({ x, y });
  p.assertValidity();
  if (p.is0()) throw new Error('G2 point at infinity');
  return p;
}

export interface BlsKeyPair {
  secretKey: Uint8Array;
  /** EIP-2537 G2, 256 bytes */
  publicKey: Hex;
}

/**
 * New key pair: random, or deterministic from `seed` (>= 32 bytes of secret entropy; stretched to the 48
 * bytes noble's keygen takes with SHA-512).
 */
export function blsKeygen(seed?: Uint8Array): BlsKeyPair {
  if (seed && seed.length < 32) throw new Error('BLS seed must have at least 32 bytes');
  const { secretKey, publicKey } = sigs.keygen(seed ? sha512(seed).subarray(0, 48) : undefined);
  return { secretKey, publicKey: g2ToEip2537(publicKey) };
}

export function blsPublicKey(secretKey: Uint8Array): Hex {
  return g2ToEip2537(sigs.getPublicKey(secretKey));
}

/** H(m) in G1 under `dst` (default BLS_SIG_DST), EIP-2537 encoded; what the contract computes on chain. */
export function blsHashToG1(message: Hex, dst: string = BLS_SIG_DST): Hex {
  return g1ToEip2537(sigs.hash(hexToBytes(message), dst));
}

/** Signs the bytes of `message` (normally a 32-byte formulas.anchorMessage). Returns a 128-byte G1 hex. */
export function blsSign(secretKey: Uint8Array, message: Hex): Hex {
  return g1ToEip2537(sigs.sign(sigs.hash(hexToBytes(message), BLS_SIG_DST), secretKey));
}

/** Proof of possession: a signature over the key's own 256-byte EIP-2537 encoding under BLS_POP_DST. */
export function blsProofOfPossession(secretKey: Uint8Array): Hex {
  const pk = blsPublicKey(secretKey);
  return g1ToEip2537(sigs.sign(sigs.hash(hexToBytes(pk), BLS_POP_DST), secretKey));
}

export function blsVerifyProofOfPossession(publicKey: Hex, pop: Hex): boolean {
  try {
    return sigs.verify(g1FromEip2537(pop), sigs.hash(hexToBytes(publicKey), BLS_POP_DST), g2FromEip2537(publicKey));
  } catch {
    return false;
  }
}

/** Verifies one (or an aggregate) signature over `message` against one (or an aggregate) key. */
export function blsVerify(signature: Hex, message: Hex, publicKey: Hex): boolean {
  try {
    return sigs.verify(g1FromEip2537(signature), sigs.hash(hexToBytes(message), BLS_SIG_DST), g2FromEip2537(publicKey));
  } catch {
    return false;
  }
}

export function blsAggregateSignatures(signatures: readonly Hex[]): Hex {
  if (!signatures.length) throw new Error('nothing to aggregate');
  return g1ToEip2537(signatures.map(g1FromEip2537).reduce((a, b) => a.add(b)));
}

export function blsAggregatePublicKeys(publicKeys: readonly Hex[]): Hex {
  if (!publicKeys.length) throw new Error('nothing to aggregate');
  return g2ToEip2537(publicKeys.map(g2FromEip2537).reduce((a, b) => a.add(b)));
}

/** Bitmap with bit i set for each validator index i (index = position in the registered set). */
export function signerBitmap(indices: Iterable<number>): bigint {
  let b = 0n;
  for (const i of indices) {
    if (!Number.isInteger(i) || i < 0 || i > 255) throw new Error(`bad validator index ${i}`);
    b |= 1n << BigInt(i);
  }
  return b;
}

export function secretKeyToHex(sk: Uint8Array): Hex {
  return bytesToHex(sk);
}
