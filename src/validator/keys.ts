/**
 * A validator's keys: BLS12-381 (min-sig, with proof of possession) for attestations and Ed25519 for its seat
 * on the protocol ADI's key page. Generated once and kept in `<dir>/validator-<index>.json` (mode 0600).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { blsKeygen, blsProofOfPossession, blsPublicKey, blsVerifyProofOfPossession } from '../chain/bls.js';

export interface ValidatorKeys {
  index: number;
  bls: { secretKey: Hex; publicKey: Hex; proofOfPossession: Hex };
  ed25519: { seed: Hex; publicKey: Hex; publicKeyHash: Hex };
}

/** New keys; deterministic when `seed` (>= 32 bytes) is given (tests). */
export function generateValidatorKeys(index: number, seed?: Uint8Array): ValidatorKeys {
  const blsSeed = seed ? sha256(new Uint8Array([...seed, 1])) : undefined;
  const { secretKey, publicKey } = blsKeygen(blsSeed);
  const edSeed = seed ? sha256(new Uint8Array([...seed, 2])) : Uint8Array.from(randomBytes(32));
  const edPub = ed25519.getPublicKey(edSeed);
  return {
    index,
    bls: { secretKey: bytesToHex(secretKey), publicKey, proofOfPossession: blsProofOfPossession(secretKey) },
    ed25519: { seed: bytesToHex(edSeed), publicKey: bytesToHex(edPub), publicKeyHash: bytesToHex(sha256(edPub)) },
  };
}

export function checkValidatorKeys(k: ValidatorKeys): void {
  const sk = hexToBytes(k.bls.secretKey);
  if (blsPublicKey(sk).toLowerCase() !== k.bls.publicKey.toLowerCase()) throw new Error(`validator ${k.index}: BLS public key does not match its secret key`);
  if (!blsVerifyProofOfPossession(k.bls.publicKey, k.bls.proofOfPossession)) throw new Error(`validator ${k.index}: bad proof of possession`);
  if (bytesToHex(ed25519.getPublicKey(hexToBytes(k.ed25519.seed))) !== k.ed25519.publicKey.toLowerCase()) {
    throw new Error(`validator ${k.index}: Ed25519 public key does not match its seed`);
  }
}

export function validatorKeyFile(dir: string, index: number): string {
  return join(dir, `validator-${index}.json`);
}

export function loadValidatorKeys(file: string): ValidatorKeys {
  const k = JSON.parse(readFileSync(file, 'utf8')) as ValidatorKeys;
  checkValidatorKeys(k);
  return k;
}

/** Loads `<dir>/validator-<index>.json`, creating it (fresh random keys) the first time. */
export function loadOrCreateValidatorKeys(dir: string, index: number): ValidatorKeys {
  const file = validatorKeyFile(dir, index);
  if (existsSync(file)) return loadValidatorKeys(file);
  mkdirSync(dir, { recursive: true });
  const k = generateValidatorKeys(index);
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify(k, null, 2), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return k;
}
