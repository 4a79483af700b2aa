/**
 * Key material of provider-signing identities (the gateway holds the key and signs):
 *
 *   mnemonic     BIP-39, 24 English words (256 bits of entropy), no passphrase
 *   seed         BIP-39 PBKDF2-HMAC-SHA512 of the mnemonic (64 bytes)
 *   private key  SLIP-0010 ed25519 derivation of the seed along m/44'/281'/0'/0'/0' (281: Accumulate's SLIP-44 coin
 *                type; every level hardened, as ed25519 requires): the 32-byte Ed25519 secret seed
 *   public key   Ed25519 (RFC 8032) of it: the key put on the identity's key page
 *
 * At rest (envelope encryption): a fresh 256-bit data key per identity encrypts the private key and, until it is
 * retrieved, the mnemonic (AES-256-GCM, 96-bit random nonce, the identity id bound in as associated data). The data
 * key is stored wrapped (AES-256-GCM) by a key-encryption key (KEK) from configuration, named by its id; the KEK is
 * never in the database, so a backup of the database alone opens nothing. Several KEKs may be configured: the first
 * wraps new data keys, the others still unwrap what they wrapped (rotation without downtime).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { generateMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english';

/** The derivation path of a provider key (SLIP-0010 ed25519; all levels hardened). */
export const PROVIDER_DERIVATION_PATH = "m/44'/281'/0'/0'/0'";
const HARDENED = 0x80000000;
const PATH_INDICES = [44, 281, 0, 0, 0].map((i) => i + HARDENED);

/** A key-encryption key: its id (stored beside every data key it wraps) and its 32 bytes. */
export interface Kek {
  id: string;
  key: Buffer;
}

/** The configured KEKs; `current` (the first) wraps new data keys, every one unwraps. */
export interface KekRing {
  current: Kek;
  byId: Map<string, Kek>;
}

/** A sealed value: `<nonce>.<tag>.<ciphertext>`, each base64. */
export type Sealed = string;

/** A data key as stored: wrapped by the KEK `kekId`. */
export interface WrappedDataKey {
  kekId: string;
  wrapped: Sealed;
}

/**
 * `PROVIDER_KEKS`: `id:base64key[,id:base64key...]`, each key 32 bytes, ids of letters, digits, `-`, `_`, `.`
 * and unique. Throws an Error naming the problem (the message never holds key bytes).
 */
export function parseKekList(raw: string): Kek[] {
  const out: Kek[] = [];
  for (const [i, entry] of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .entries()) {
    const sep = entry.indexOf(':');
    const id = sep > 0 ? entry.slice(0, sep) : '';
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) throw new Error(`entry ${i + 1}: expected <id>:<base64 key> with an id of letters, digits, '.', '_', '-'`);
    const key = Buffer.from(entry.slice(sep + 1), 'base64');
    if (key.length !== 32) throw new Error(`entry ${i + 1} (${id}): the key must be 32 bytes of base64`);
    if (out.some((k) => k.id === id)) throw new Error(`entry ${i + 1}: the id ${id} is given twice`);
    out.push({ id, key });
  }
  if (out.length === 0) throw new Error('no key given');
  return out;
}

export function kekRing(keks: readonly Kek[]): KekRing {
  if (keks.length === 0) throw new Error('a KEK ring needs at least one key');
  return { current: keks[0]!, byId: new Map(keks.map((k) => [k.id, k])) };
}

/** A new KEK entry for PROVIDER_KEKS (`id:base64`). */
export function newKekEntry(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

function seal(key: Uint8Array, plaintext: Uint8Array, aad: string): Sealed {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, nonce);
  c.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([c.update(plaintext), c.final()]);
  return [nonce, c.getAuthTag(), ct].map((b) => b.toString('base64')).join('.');
}

function open(key: Uint8Array, sealed: Sealed, aad: string): Buffer {
  const [nonce, tag, ct] = sealed.split('.').map((p) => Buffer.from(p, 'base64'));
  if (!nonce || !tag || !ct) throw new Error('sealed value is malformed');
  const d = createDecipheriv('aes-256-gcm', key, nonce);
  d.setAAD(Buffer.from(aad, 'utf8'));
  d.setAuthTag(tag);
  return Buffer.concat([d.update(ct), d.final()]);
}

const dekAad = (identityId: string, kekId: string) => `pgw:provider-dek:v1:${identityId}:${kekId}`;
const keyAad = (identityId: string) => `pgw:provider-key:v1:${identityId}`;
const mnemonicAad = (identityId: string) => `pgw:provider-mnemonic:v1:${identityId}`;

/** A new data key for `identityId`, and its wrapped form (by the ring's current KEK). */
export function newDataKey(ring: KekRing, identityId: string): { dataKey: Buffer; wrapped: WrappedDataKey } {
  const dataKey = randomBytes(32);
  return { dataKey, wrapped: wrapDataKey(ring, identityId, dataKey) };
}

export function wrapDataKey(ring: KekRing, identityId: string, dataKey: Uint8Array): WrappedDataKey {
  return { kekId: ring.current.id, wrapped: seal(ring.current.key, dataKey, dekAad(identityId, ring.current.id)) };
}

/** The data key, unwrapped by the KEK that wrapped it; throws when that KEK is not configured (any more). */
export function unwrapDataKey(ring: KekRing, identityId: string, w: WrappedDataKey): Buffer {
  const kek = ring.byId.get(w.kekId);
  if (!kek) throw new Error(`the key-encryption key ${w.kekId} that wraps this identity's data key is not configured (PROVIDER_KEKS)`);
  return open(kek.key, w.wrapped, dekAad(identityId, w.kekId));
}

export const sealPrivateKey = (dataKey: Uint8Array, identityId: string, privateKey: Uint8Array): Sealed => seal(dataKey, privateKey, keyAad(identityId));
export const openPrivateKey = (dataKey: Uint8Array, identityId: string, sealed: Sealed): Buffer => open(dataKey, sealed, keyAad(identityId));
export const sealMnemonic = (dataKey: Uint8Array, identityId: string, mnemonic: string): Sealed =>
  seal(dataKey, Buffer.from(mnemonic, 'utf8'), mnemonicAad(identityId));
export const openMnemonic = (dataKey: Uint8Array, identityId: string, sealed: Sealed): string =>
  open(dataKey, sealed, mnemonicAad(identityId)).toString('utf8');

/** SLIP-0010 ed25519: the private key at PROVIDER_DERIVATION_PATH of a BIP-39 seed. */
export function slip10Ed25519(seed: Uint8Array, indices: readonly number[] = PATH_INDICES): Uint8Array {
  let I = hmac(sha512, new TextEncoder().encode('ed25519 seed'), seed);
  for (const index of indices) {
    if (index < HARDENED) throw new Error('SLIP-0010 ed25519 derives hardened children only');
    const data = new Uint8Array(37);
    data[0] = 0;
    data.set(I.slice(0, 32), 1);
    new DataView(data.buffer).setUint32(33, index, false);
    I = hmac(sha512, I.slice(32), data);
  }
  return I.slice(0, 32);
}

/** The private key (32-byte Ed25519 seed) of a mnemonic, along PROVIDER_DERIVATION_PATH. */
export function privateKeyOfMnemonic(mnemonic: string): Uint8Array {
  if (!validateMnemonic(mnemonic, wordlist)) throw new Error('not a valid BIP-39 English mnemonic');
  return slip10Ed25519(mnemonicToSeedSync(mnemonic));
}

/** A new provider key: its mnemonic, private key and public key (hex). */
export function newProviderKey(): { mnemonic: string; privateKey: Uint8Array; publicKey: string } {
  const mnemonic = generateMnemonic(wordlist, 256);
  const privateKey = privateKeyOfMnemonic(mnemonic);
  return { mnemonic, privateKey, publicKey: Buffer.from(ed25519.getPublicKey(privateKey)).toString('hex') };
}

export function publicKeyOf(privateKey: Uint8Array): string {
  return Buffer.from(ed25519.getPublicKey(privateKey)).toString('hex');
}

/** Ed25519 signature (hex) over the raw bytes of a 32-byte hash (hex). */
export function signHash(privateKey: Uint8Array, hashHex: string): string {
  return Buffer.from(ed25519.sign(Buffer.from(hashHex, 'hex'), privateKey)).toString('hex');
}
