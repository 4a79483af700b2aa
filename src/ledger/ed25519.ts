/**
 * Ed25519 via node:crypto (OpenSSL). Pure-JS implementations cost 20–60 ms per operation on the dev VMs,
 * which dominated ledger latency; OpenSSL takes well under a millisecond. Keys are raw 32-byte seeds / public keys.
 */
import { createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto';

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

function privateKeyObject(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new Error(`ed25519 seed: expected 32 bytes, got ${seed.length}`);
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

export function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  const der = createPublicKey(privateKeyObject(seed)).export({ format: 'der', type: 'spki' });
  return Uint8Array.from(der.subarray(der.length - 32));
}

export function ed25519Sign(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return Uint8Array.from(nodeSign(null, message, privateKeyObject(seed)));
}

export function ed25519VerifyRaw(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
    return nodeVerify(null, message, key, signature);
  } catch {
    return false;
  }
}
