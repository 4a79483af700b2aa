/** min-pk (keys G1, signatures G2) material for the gas comparison only; the system uses min-sig (src/chain/bls.ts). */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { concatHex, hexToBytes, keccak256, numberToHex, stringToHex, type Hex } from 'viem';

const fp = (x: bigint): Hex => numberToHex(x, { size: 64 });

export function blsLongEncodings(n: number, msg: Hex) {
  const long = bls12_381.longSignatures;
  const short = bls12_381.shortSignatures;
  const dst = 'PGW-V1-BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_';
  const sks = Array.from({ length: n }, (_, i) => hexToBytes(keccak256(stringToHex(`long-${i}`))).slice(0, 32));
  for (const sk of sks) sk[0] = 0x01; // keep below the group order
  let t = performance.now();
  const sigs = sks.map((sk) => long.sign(long.hash(hexToBytes(msg), dst), sk));
  const minPkSignMs = (performance.now() - t) / n;
  t = performance.now();
  for (const sk of sks) short.sign(short.hash(hexToBytes(msg)), sk);
  const minSigSignMs = (performance.now() - t) / n;
  const apk = long.aggregatePublicKeys(sks.map((sk) => long.getPublicKey(sk))).toAffine();
  const sig = long.aggregateSignatures(sigs).toAffine();
  return {
    dst,
    publicKey: concatHex([fp(apk.x), fp(apk.y)]),
    signature: concatHex([fp(sig.x.c0), fp(sig.x.c1), fp(sig.y.c0), fp(sig.y.c1)]),
    minPkSignMs,
    minSigSignMs,
  };
}
