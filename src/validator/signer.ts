/**
 * BLS signing for a validator node with the message hash (RFC 9380 hash-to-G1, the dominant cost of a
 * signature) memoized. Byte-identical to chain/bls.ts blsSign. Validators that share a process (the devnet runs
 * 7 in one) may share one hasher: hashing is a pure function of the message.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { hexToBytes, type Hex } from 'viem';
import { g1ToEip2537 } from '../chain/bls.js';
import { BLS_SIG_DST } from '../chain/formulas.js';

const sigs = bls12_381.shortSignatures;
export type G1Point = ReturnType<typeof sigs.hash>;

export interface MessageHasher {
  (message: Hex): G1Point;
}

export function createMessageHasher(maxEntries = 1024): MessageHasher {
  const cache = new Map<string, G1Point>();
  return (message) => {
    const k = message.toLowerCase();
    let p = cache.get(k);
    if (!p) {
      p = sigs.hash(hexToBytes(message), BLS_SIG_DST);
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
      cache.set(k, p);
    }
    return p;
  };
}

export function signWith(hasher: MessageHasher, secretKey: Uint8Array, message: Hex): Hex {
  return g1ToEip2537(sigs.sign(hasher(message), secretKey));
}
