/** Shared test fixture: 7 deterministic validators, anvil keys, a deployed system. */
import { keccak256, stringToHex, type Address, type Hex } from 'viem';
import { blsKeygen, blsProofOfPossession, blsSign, blsAggregateSignatures, signerBitmap } from '../../src/chain/bls.js';
import type { ValidatorRegistration } from '../../src/chain/deploy.js';
import { hexToBytes } from 'viem';

/** anvil's default accounts 0..2 */
export const ANVIL_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3d71a88ff8c14b3b',
] as const satisfies readonly Hex[];
export const ANVIL_ADDRESSES = [
  '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
  '0x70997970C51812dc3A010C7d01b50e0aa3dc79C8',
  '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
] as const satisfies readonly Address[];

export interface TestValidator {
  secretKey: Uint8Array;
  publicKey: Hex;
  proofOfPossession: Hex;
}

export function testValidators(n = 7, tag = 'pgw-test-validator'): TestValidator[] {
  return Array.from({ length: n }, (_, i) => {
    const seed = hexToBytes(keccak256(stringToHex(`${tag}-${i}`)));
    const { secretKey, publicKey } = blsKeygen(seed);
    return { secretKey, publicKey, proofOfPossession: blsProofOfPossession(secretKey) };
  });
}

export function registrations(vs: readonly TestValidator[], power = 100n): ValidatorRegistration[] {
  return vs.map((v) => ({ publicKey: v.publicKey, proofOfPossession: v.proofOfPossession, power }));
}

/** Aggregate signature of validators `indices` over `message`, plus the bitmap. */
export function quorumSign(vs: readonly TestValidator[], indices: readonly number[], message: Hex) {
  return {
    signature: blsAggregateSignatures(indices.map((i) => blsSign(vs[i]!.secretKey, message))),
    signerBitmap: signerBitmap(indices),
  };
}
