/**
 * The co-signer's Ed25519 key, held by the browser's WebCrypto: generated non-extractable, or imported from a
 * 32-byte seed (also non-extractable once imported), and kept in IndexedDB as a CryptoKey object (the browser
 * stores the key itself; script can sign with it but never read it back). Signatures are made here over the
 * bytes the API asks to sign; only the signature and the public key are sent. The private key never leaves the
 * browser.
 */
import { bytesOfHex, hexOf } from './dom.js';

export interface Signer {
  publicKey: string; // 64 hex
  publicKeyHash: string; // SHA-256 of the raw key, as a key page lists it
  sign(messageHex: string): Promise<string>;
}

const DB = 'pgw-console';
const STORE = 'keys';
const SLOT = 'signer';
const ED25519 = { name: 'Ed25519' } as const;
/** PKCS#8 prefix of a raw Ed25519 seed (RFC 8410) */
const PKCS8_PREFIX = bytesOfHex('302e020100300506032b657004220420');

function idb<T>(mode: IDBTransactionMode, run: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(DB, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(STORE);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const tx = open.result.transaction(STORE, mode);
      const req = run(tx.objectStore(STORE));
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
      tx.oncomplete = () => open.result.close();
    };
  });
}

async function signerOf(pair: { privateKey: CryptoKey; publicKey: CryptoKey }): Promise<Signer> {
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  const hash = await crypto.subtle.digest('SHA-256', raw);
  return {
    publicKey: hexOf(raw),
    publicKeyHash: hexOf(hash),
    sign: async (messageHex) => hexOf(await crypto.subtle.sign(ED25519, pair.privateKey, bytesOfHex(messageHex) as BufferSource)),
  };
}

/** The stored key, if any. */
export async function loadSigner(): Promise<Signer | undefined> {
  const pair = await idb<{ privateKey: CryptoKey; publicKey: CryptoKey } | undefined>('readonly', (s) => s.get(SLOT));
  return pair ? signerOf(pair) : undefined;
}

/** A new key pair; the private half cannot be exported. */
export async function generateSigner(): Promise<Signer> {
  const pair = (await crypto.subtle.generateKey(ED25519, false, ['sign', 'verify'])) as CryptoKeyPair;
  await idb('readwrite', (s) => s.put(pair, SLOT));
  return signerOf(pair);
}

/** A key imported from its 32-byte seed (64 hex); kept non-extractable. */
export async function importSigner(seedHex: string): Promise<Signer> {
  const seed = bytesOfHex(seedHex);
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes (64 hex characters)');
  const pkcs8 = new Uint8Array([...PKCS8_PREFIX, ...seed]);
  // the public half: imported once as extractable to derive it, then the stored private key is not extractable
  const probe = await crypto.subtle.importKey('pkcs8', pkcs8, ED25519, true, ['sign']);
  const jwk = await crypto.subtle.exportKey('jwk', probe);
  const publicKey = await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, ED25519, true, ['verify']);
  const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, ED25519, false, ['sign']);
  seed.fill(0);
  pkcs8.fill(0);
  const pair = { privateKey, publicKey };
  await idb('readwrite', (s) => s.put(pair, SLOT));
  return signerOf(pair);
}

/** Forgets the stored key. */
export async function forgetSigner(): Promise<void> {
  await idb('readwrite', (s) => s.delete(SLOT));
}
