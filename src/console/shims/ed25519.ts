/**
 * Browser stand-in for src/protocol/ed25519.ts (node:crypto) in the console bundle: the same three functions on
 * @noble/curves' Ed25519. The verifier only verifies signatures; the console signs with WebCrypto, not with this.
 */
import { ed25519 } from '@noble/curves/ed25519.js';

export function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  return ed25519.getPublicKey(seed);
}

export function ed25519Sign(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return ed25519.sign(message, seed);
}

export function ed25519VerifyRaw(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    return ed25519.verify(signature, message, publicKey);
  } catch {
    return false;
  }
}
