/** A quorum's aggregate BLS signature checked against the bundle's validator set (verifications memoized). */
import type { Hex } from 'viem';
import { blsAggregatePublicKeys, blsVerify, signerBitmap } from '../../chain/bls.js';
import { meetsThreshold } from '../../chain/formulas.js';
import type { BundleChain } from '../bundle.js';
import { ensure, index, int, uint } from './checks.js';

/** Aggregate public keys, memoized (decoding and subgroup-checking G2 keys dominates a verification). */
const aggregates = new Map<string, Hex>();
function aggregateKey(keys: readonly Hex[]): Hex {
  const k = keys.map((x) => x.toLowerCase()).join(',');
  let agg = aggregates.get(k);
  if (!agg) {
    agg = blsAggregatePublicKeys(keys);
    if (aggregates.size >= 256) aggregates.delete(aggregates.keys().next().value as string);
    aggregates.set(k, agg);
  }
  return agg;
}

/** blsVerify with successful verifications memoized (a pure function; re-verifying a bundle repeats the pairings). */
const verifiedSigs = new Set<string>();
function blsVerified(signature: Hex, message: Hex, publicKey: Hex): boolean {
  const k = `${signature}|${message}|${publicKey}`.toLowerCase();
  if (verifiedSigs.has(k)) return true;
  if (!blsVerify(signature, message, publicKey)) return false;
  if (verifiedSigs.size >= 1024) verifiedSigs.delete(verifiedSigs.values().next().value as string);
  verifiedSigs.add(k);
  return true;
}

export function quorumCheck(
  set: BundleChain['validator_set'],
  q: { message: Hex; aggregate_signature: Hex; signer_bitmap: string; signers: number[] },
  what: string,
): string {
  const bitmap = uint(q.signer_bitmap, `${what}.signer_bitmap`);
  const signers = q.signers.map((s, i) => index(s, `${what}.signers[${i}]`));
  // one way to write a signer list: strictly ascending, as the bitmap orders them
  ensure(
    signers.every((x, i) => i === 0 || x > signers[i - 1]!),
    `${what}: signers [${signers.join(',')}] are not strictly ascending`,
  );
  ensure(signerBitmap(signers) === bitmap, `${what}: signer bitmap ${bitmap} does not match signers [${signers.join(',')}]`);
  const powers = set.powers.map((p, i) => uint(p, `validator_set.powers[${i}]`));
  const s = {
    powers,
    thresholdNum: BigInt(int(set.threshold_numerator, 'threshold_numerator')),
    thresholdDen: BigInt(int(set.threshold_denominator, 'threshold_denominator')),
  };
  ensure(meetsThreshold(s, bitmap), `${what}: signers [${signers.join(',')}] do not meet the threshold ${s.thresholdNum}/${s.thresholdDen}`);
  const keys = signers.map((i) => {
    const k = set.public_keys[i];
    ensure(k, `${what}: signer ${i} is not in the validator set`);
    return k;
  });
  ensure(
    blsVerified(q.aggregate_signature, q.message, aggregateKey(keys)),
    `${what}: aggregate signature does not verify over ${q.message} against the signers' aggregate key`,
  );
  const signed = powers.reduce((a, p, i) => ((bitmap >> BigInt(i)) & 1n ? a + p : a), 0n);
  const total = powers.reduce((a, p) => a + p, 0n);
  return `${signers.length} signers, power ${signed}/${total} meets ${s.thresholdNum}/${s.thresholdDen}; aggregate verifies`;
}
