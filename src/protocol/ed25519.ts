/**
 * Ed25519 via node:crypto (OpenSSL), for the gateway's own keys and checks (ledger signing, requests to the
 * validators). Pure-JS implementations cost about 1 ms (and 20–60 ms on slow VMs) per operation; OpenSSL takes tens
 * of microseconds. Keys are raw 32-byte seeds / public keys; their key objects are made once each and kept (a
 * process uses a handful of keys).
 */
import { createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto';

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** key objects kept per process; past this many (never in normal use) the cache starts over */
const MAX_CACHED = 256;

function cached(cache: Map<string, KeyObject>, raw: Uint8Array, make: () => KeyObject): KeyObject {
  const id = Buffer.from(raw).toString('hex');
  let k = cache.get(id);
  if (!k) {
    if (cache.size >= MAX_CACHED) cache.clear();
    k = make();
    cache.set(id, k);
  }
  return k;
}

const privateKeys = new Map<string, KeyObject>();
const publicKeys = new Map<string, KeyObject>();

function privateKeyObject(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new Error(`ed25519 seed: expected 32 bytes, got ${seed.length}`);
  return cached(privateKeys, seed, () => createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' }));
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
    const key = cached(publicKeys, publicKey, () => createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' }));
    return nodeVerify(null, message, key, signature);
  } catch {
    return false;
  }
}
