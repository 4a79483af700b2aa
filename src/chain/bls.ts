/**
 * BLS12-381 for the validator quorum, min-sig variant (chosen by measured gas, see bench/gas.ts):
 * public keys in G2, signatures in G1, messages hashed to G1 per RFC 9380 with BLS_SIG_DST (the same DST
 * the ProofAnchor contract uses). No I/O; the only state is bounded memos of hashes and decoded points.
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
 *
 * Two engines, byte-identical results: noble (pure JS: keys, hash-to-curve, the reference) and mcl-wasm (about
 * 6x faster scalar multiplication, 4x faster pairings) for signing, verification, aggregation and point
 * decoding once its WebAssembly has loaded (started on import; `blsReady()` awaits it). Until then, or where it
 * fails to load, noble does everything. Hashing to G1 (RFC 9380 under our DSTs) expands the message in JS and maps
 * the field elements with mcl, and is memoized per message: every signer and verifier in a process shares one H(m).
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { hash_to_field } from '@noble/curves/abstract/hash-to-curve.js';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatHex, hexToBigInt, hexToBytes, numberToHex, sliceHex, type Hex } from 'viem';
import { BLS_POP_DST, BLS_SIG_DST } from './formulas.js';
import { memo } from './memo.js';

type Mcl = typeof import('mcl-wasm');
type MclG1 = InstanceType<Mcl['G1']>;
type MclG2 = InstanceType<Mcl['G2']>;
let mcl: Mcl | undefined;
/** -G2 generator in mcl form, for e(σ, -g2)·e(H(m), pk) = 1 */
let mclNegG2: MclG2 | undefined;
const mclLoading: Promise<void> = import('mcl-wasm')
  .then(async (m) => {
    await m.init(m.BLS12_381);
    m.verifyOrderG1(true); // subgroup checks on every decoded point, as noble's assertValidity
    m.verifyOrderG2(true);
    m.setMapToMode(m.IRTF); // Fp.mapToG1 = RFC 9380 map_to_curve (SSWU + isogeny) then clear_cofactor
    mcl = m;
    mclNegG2 = m.neg(mclG2(g2ToEip2537(bls12_381.G2.Point.BASE)));
  })
  .catch(() => {
    mcl = undefined; // noble stays the engine
  });

/** Resolves once the fast engine is in use (or known to be unavailable); results are the same either way. */
export function blsReady(): Promise<void> {
  return mclLoading;
}

/** Which engine computes signatures and verifications right now (for the benches and tests). */
export function blsEngine(): 'mcl-wasm' | 'noble' {
  return mcl ? 'mcl-wasm' : 'noble';
}

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

const P_MODULUS = bls12_381.fields.Fp.ORDER;

function limb(h: Hex, i: number): bigint {
  const part = sliceHex(h, i * 64, (i + 1) * 64);
  if (hexToBigInt(sliceHex(part, 0, 16)) !== 0n) throw new Error('EIP-2537: top 16 bytes of an Fp element must be zero');
  const v = hexToBigInt(part);
  if (v >= P_MODULUS) throw new Error('EIP-2537: Fp element not below the field modulus');
  return v;
}

/** The 48-byte limbs of an EIP-2537 point as mcl's affine string ("1 x y", base 16), checked as for noble. */
function mclAffine(h: Hex, limbs: number): string {
  if (hexToBytes(h).length !== limbs * 64) throw new Error(`${limbs === 2 ? 'G1' : 'G2'} point must be ${limbs * 64} bytes`);
  const parts: string[] = [];
  for (let i = 0; i < limbs; i++) parts.push(limb(h, i).toString(16));
  if (parts.every((x) => x === '0')) throw new Error(`${limbs === 2 ? 'G1' : 'G2'} point at infinity`);
  return `1 ${parts.join(' ')}`;
}

/** Bounded memo keyed by lower-cased hex: validator keys and signatures are decoded again and again. */
const hexMemo = <V>(max: number, make: (k: string) => V) => memo(max, make, (k) => k.toLowerCase());

function mclPoint<T extends MclG1 | MclG2>(p: T, str: string): T {
  try {
    p.setStr(str, 16); // on curve and (verifyOrder) in the subgroup, or it throws
  } catch {
    throw new Error('point is not on the curve or not in the subgroup');
  }
  return p;
}
const mclG1 = hexMemo(1024, (h) => mclPoint(new mcl!.G1(), mclAffine(h as Hex, 2)));
const mclG2 = hexMemo(256, (h) => mclPoint(new mcl!.G2(), mclAffine(h as Hex, 4)));

const fpHex = (x: { getStr(base?: number): string }): string => x.getStr(16).padStart(96, '0');
const PAD = '0'.repeat(32);
function mclG1ToEip2537(p: MclG1): Hex {
  if (p.isZero()) return ZERO(128);
  const a = mcl!.normalize(p);
  return `0x${PAD}${fpHex(a.getX())}${PAD}${fpHex(a.getY())}`;
}
function mclG2ToEip2537(p: MclG2): Hex {
  if (p.isZero()) return ZERO(256);
  const a = mcl!.normalize(p);
  const x = a.getX();
  const y = a.getY();
  return `0x${PAD}${fpHex(x.get_a())}${PAD}${fpHex(x.get_b())}${PAD}${fpHex(y.get_a())}${PAD}${fpHex(y.get_b())}`;
}

/** H(m) under `dst`, memoized per (dst, message): the dominant cost of a signature, shared by every signer here. */
const hashKey = (message: Hex, dst: string) => `${dst}|${message}`;
const nobleHash = hexMemo(4096, (k) => {
  const [dst, message] = k.split('|') as [string, Hex];
  return sigs.hash(hexToBytes(message), dst) as G1Point;
});
const hashToG1 = (message: Hex, dst: string): G1Point => nobleHash(hashKey(message, dst));
/**
 * RFC 9380 hash_to_curve on mcl: the two field elements from expand_message_xmd under our DST (hash_to_field, in
 * JS: SHA-256 only), each mapped by mcl's map_to_curve + clear_cofactor, then added. Clearing the cofactor is
 * linear, so clear(Q0) + clear(Q1) = clear(Q0 + Q1), which is the RFC's result: byte-identical to noble's
 * (test/chain/bls.test.ts) in a fraction of its time: signing a message not hashed before took 8.4–9.0 ms with
 * noble's hash and takes 2.0–2.7 ms (`npx tsx bench/validators.ts`, blsSignNewMessageMs; a hashed one 0.5–0.7).
 */
const mclHash = hexMemo(4096, (k) => {
  const [dst, message] = k.split('|') as [string, Hex];
  const [[u0], [u1]] = hash_to_field(hexToBytes(message), 2, { DST: dst, p: P_MODULUS, m: 1, k: 128, expand: 'xmd', hash: sha256 });
  const fp = (u: bigint) => {
    const f = new mcl!.Fp();
    f.setStr(u.toString(16), 16);
    return f;
  };
  return mcl!.add(fp(u0!).mapToG1(), fp(u1!).mapToG1());
});
const mclHashToG1 = (message: Hex, dst: string) => mclHash(hashKey(message, dst));

function mclScalar(secretKey: Uint8Array): InstanceType<Mcl['Fr']> {
  const fr = new mcl!.Fr();
  fr.setStr(bytesToHex(secretKey).slice(2), 16);
  return fr;
}

/** e(σ, -g2) · e(H, pk) == 1 with one final exponentiation. */
function mclPairingCheck(sig: MclG1, h: MclG1, pk: MclG2): boolean {
  const m = mcl!;
  return m.finalExp(m.mul(m.millerLoop(sig, mclNegG2!), m.millerLoop(h, pk))).isOne();
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
  return g1ToEip2537(hashToG1(message, dst));
}

function signUnder(secretKey: Uint8Array, message: Hex, dst: string): Hex {
  if (mcl) return mclG1ToEip2537(mcl.mul(mclHashToG1(message, dst), mclScalar(secretKey)));
  return g1ToEip2537(sigs.sign(hashToG1(message, dst), secretKey));
}

function verifyUnder(signature: Hex, message: Hex, publicKey: Hex, dst: string): boolean {
  try {
    if (mcl) return mclPairingCheck(mclG1(signature), mclHashToG1(message, dst), mclG2(publicKey));
    return sigs.verify(g1FromEip2537(signature), hashToG1(message, dst), g2FromEip2537(publicKey));
  } catch {
    return false;
  }
}

/** Why `signature` is not a valid G1 point (length, padding, field, curve, subgroup, infinity), or undefined. */
export function blsSignatureProblem(signature: Hex): string | undefined {
  try {
    if (mcl) mclG1(signature);
    else g1FromEip2537(signature);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Signs the bytes of `message` (normally a 32-byte formulas.anchorMessage). Returns a 128-byte G1 hex. */
export function blsSign(secretKey: Uint8Array, message: Hex): Hex {
  return signUnder(secretKey, message, BLS_SIG_DST);
}

/** Proof of possession: a signature over the key's own 256-byte EIP-2537 encoding under BLS_POP_DST. */
export function blsProofOfPossession(secretKey: Uint8Array): Hex {
  return signUnder(secretKey, blsPublicKey(secretKey), BLS_POP_DST);
}

export function blsVerifyProofOfPossession(publicKey: Hex, pop: Hex): boolean {
  return verifyUnder(pop, publicKey, publicKey, BLS_POP_DST);
}

/** Verifies one (or an aggregate) signature over `message` against one (or an aggregate) key. */
export function blsVerify(signature: Hex, message: Hex, publicKey: Hex): boolean {
  return verifyUnder(signature, message, publicKey, BLS_SIG_DST);
}

/**
 * Verifies that `signatures` (one per key, all over `message`) are together valid: the plain aggregate checked
 * once against the sum of the keys (two pairings whatever the count), which is what ProofAnchor verifies. Sound as
 * a multi-signature only for keys registered with a proof of possession. False on any malformed input.
 */
export function blsVerifyAggregate(signatures: readonly Hex[], message: Hex, publicKeys: readonly Hex[]): boolean {
  if (!signatures.length || signatures.length !== publicKeys.length) return false;
  try {
    if (mcl) return mclPairingCheck(mclSumG1(signatures), mclHashToG1(message, BLS_SIG_DST), mclSumG2(publicKeys));
    return sigs.verify(nobleSumG1(signatures), hashToG1(message, BLS_SIG_DST), nobleSumG2(publicKeys));
  } catch {
    return false;
  }
}

export function blsAggregateSignatures(signatures: readonly Hex[]): Hex {
  if (!signatures.length) throw new Error('nothing to aggregate');
  return mcl ? mclG1ToEip2537(mclSumG1(signatures)) : g1ToEip2537(nobleSumG1(signatures));
}

export function blsAggregatePublicKeys(publicKeys: readonly Hex[]): Hex {
  if (!publicKeys.length) throw new Error('nothing to aggregate');
  return mcl ? mclG2ToEip2537(mclSumG2(publicKeys)) : g2ToEip2537(nobleSumG2(publicKeys));
}

/** Sums of decoded (and validated) points, per engine; non-empty input. */
const mclSumG1 = (hs: readonly Hex[]) => hs.map(mclG1).reduce((a, b) => mcl!.add(a, b));
const mclSumG2 = (hs: readonly Hex[]) => hs.map(mclG2).reduce((a, b) => mcl!.add(a, b));
const nobleSumG1 = (hs: readonly Hex[]) => hs.map(g1FromEip2537).reduce((a, b) => a.add(b));
const nobleSumG2 = (hs: readonly Hex[]) => hs.map(g2FromEip2537).reduce((a, b) => a.add(b));

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
