/**
 * Transaction building, signature metadata, hash_to_sign and Ed25519 verification.
 * Every protocol hash comes from accumulate.js (Transaction.hash, encode); SHA-256 is Node's (./sha256.ts).
 *
 *   mdHash      = SHA-256(binary(signature with `signature` and `transactionHash` omitted))
 *   initiator   = mdHash of the initiating signature, written into header.initiator BEFORE the tx hash is taken
 *   txHash      = accumulate.js Transaction.hash()
 *   hashToSign  = SHA-256(mdHash || txHash)   (32 bytes; the Ed25519 message)
 */
import './accumulate-compat.js';
import { sha256 } from './sha256.js';
import { ED25519Key, core } from 'accumulate.js';
import { encode } from 'accumulate.js/encoding';
import { ed25519PublicKey, ed25519Sign, ed25519VerifyRaw } from '../protocol/ed25519.js';
import { LedgerInputError } from './errors.js';
import { normUrl, parseAccUrl } from './urls.js';

export type Vote = 'accept' | 'reject' | 'abstain';
const VOTE_TYPE: Record<Vote, core.VoteType> = {
  accept: core.VoteType.Accept,
  reject: core.VoteType.Reject,
  abstain: core.VoteType.Abstain,
};

export function toHex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

/** Decode hex with a length check; names the field in the error. */
export function fromHex(hex: unknown, field: string, expectBytes?: number): Uint8Array {
  if (typeof hex !== 'string') throw new LedgerInputError(`${field}: expected a hex string`, field);
  const h = hex.startsWith('0x') ? hex.slice(2) : hex;
  if (h.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(h)) throw new LedgerInputError(`${field}: not valid hex`, field);
  const b = Uint8Array.from(Buffer.from(h, 'hex'));
  if (expectBytes !== undefined && b.length !== expectBytes) {
    throw new LedgerInputError(`${field}: expected ${expectBytes} bytes (${expectBytes * 2} hex chars), got ${b.length} bytes`, field);
  }
  return b;
}

export function bytesArg(v: Uint8Array | string, field: string, expectBytes?: number): Uint8Array {
  if (v instanceof Uint8Array) {
    if (expectBytes !== undefined && v.length !== expectBytes) {
      throw new LedgerInputError(`${field}: expected ${expectBytes} bytes, got ${v.length}`, field);
    }
    return v;
  }
  return fromHex(v, field, expectBytes);
}

export interface TxOptions {
  memo?: string;
  /** header.expire.atTime */
  expireAt?: Date;
  /** header.authorities: extra authorities that must also approve */
  authorities?: string[];
}

/** A fresh, unhashed transaction. Never call .hash() on it before the initiator is set. */
export function buildTransaction(principal: string, body: core.TransactionBodyArgs | core.TransactionBody, opts: TxOptions = {}): core.Transaction {
  const p = parseAccUrl(principal, 'principal');
  const header: core.TransactionHeaderArgs = { principal: p };
  if (opts.memo) header.memo = opts.memo;
  if (opts.expireAt) {
    const ms = opts.expireAt.getTime();
    if (!Number.isFinite(ms)) throw new LedgerInputError('expireAt: invalid date', 'expireAt');
    header.expire = { atTime: new Date(Math.ceil(ms / 1000) * 1000) }; // encoded as whole seconds
  }
  if (opts.authorities?.length) header.authorities = opts.authorities.map((a) => parseAccUrl(a, 'authorities'));
  return new core.Transaction({ header, body: body as core.TransactionBodyArgs });
}

/** Hash of a transaction computed on a fresh copy, so the memoised hash inside accumulate.js can never be stale. */
export function transactionHash(txn: core.Transaction): Uint8Array {
  return new core.Transaction(txn.asObject()).hash();
}

export interface SignatureMetadataArgs {
  publicKey: Uint8Array | string;
  signer: string;
  signerVersion: number;
  timestamp?: number;
  vote?: Vote;
  /** Delegation path, innermost first: delegators[0] is the page that lists the signer's book as a delegate. */
  delegators?: string[];
}

/** ED25519Signature metadata (no signature, no transactionHash), wrapped in DelegatedSignature per delegator. */
export function signatureMetadata(a: SignatureMetadataArgs): core.ED25519Signature | core.DelegatedSignature {
  const publicKey = bytesArg(a.publicKey, 'publicKey', 32);
  if (!Number.isSafeInteger(a.signerVersion) || a.signerVersion < 1) {
    throw new LedgerInputError(`signerVersion: expected a positive integer, got ${a.signerVersion}`, 'signerVersion');
  }
  if (a.timestamp !== undefined && (!Number.isSafeInteger(a.timestamp) || a.timestamp < 0)) {
    throw new LedgerInputError(`timestamp: expected a non-negative safe integer`, 'timestamp');
  }
  if (a.vote !== undefined && !(a.vote in VOTE_TYPE)) {
    throw new LedgerInputError(`vote: expected accept, reject or abstain, got ${String(a.vote)}`, 'vote');
  }
  let sig: core.ED25519Signature | core.DelegatedSignature = new core.ED25519Signature({
    publicKey,
    signer: parseAccUrl(a.signer, 'signer'),
    signerVersion: a.signerVersion,
    timestamp: a.timestamp || undefined,
    vote: a.vote && a.vote !== 'accept' ? VOTE_TYPE[a.vote] : undefined,
  });
  for (const d of a.delegators ?? []) {
    sig = new core.DelegatedSignature({ signature: sig, delegator: parseAccUrl(d, 'delegator') });
  }
  return sig;
}

/** Innermost key signature of a (possibly delegated) signature, plus the delegators innermost-first. */
export function unwrapSignature(sig: core.Signature): { key: core.ED25519Signature; delegators: string[] } {
  const delegators: string[] = [];
  let s: core.Signature | undefined = sig;
  let depth = 0;
  while (s instanceof core.DelegatedSignature) {
    if (++depth > 20) throw new LedgerInputError('signature: delegation deeper than 20', 'signature');
    if (!s.delegator) throw new LedgerInputError('signature: delegated signature without delegator', 'signature');
    delegators.unshift(s.delegator.toString());
    s = s.signature;
  }
  if (!(s instanceof core.ED25519Signature)) {
    throw new LedgerInputError(
      `signature: unsupported signature type ${s ? String((s as { type?: unknown }).type) : 'none'} (only ed25519 and delegated)`,
      'signature',
    );
  }
  return { key: s, delegators };
}

/** A copy of the signature with the inner `signature` and `transactionHash` removed. */
export function stripSignature<T extends core.Signature>(sig: T): T {
  const copy = (sig as unknown as { copy(): T }).copy();
  const { key } = unwrapSignature(copy);
  delete key.signature;
  delete key.transactionHash;
  return copy;
}

/** SHA-256 of the binary signature metadata (accumulate.js encode). */
export function metadataHash(sig: core.Signature): Uint8Array {
  return sha256(encode(stripSignature(sig)));
}

/** SHA-256(metadataHash || txHash): the 32 bytes an Ed25519 key signs. */
export function hashToSign(mdHash: Uint8Array, txHash: Uint8Array): Uint8Array {
  return sha256(Buffer.concat([mdHash, txHash]));
}

export interface PreparedSigning {
  transaction: core.Transaction;
  metadata: core.ED25519Signature | core.DelegatedSignature;
  metadataHash: Uint8Array;
  txHash: Uint8Array;
  hashToSign: Uint8Array;
  initiator: boolean;
}

/**
 * Set the initiator (when `initiate` and the header has none) and compute txHash and hashToSign.
 * The initiator is written before anything is hashed.
 */
export function prepareSigning(txn: core.Transaction, metadata: core.ED25519Signature | core.DelegatedSignature, initiate: boolean): PreparedSigning {
  const md = metadataHash(metadata);
  let initiator = false;
  if (initiate) {
    if (!txn.header) throw new LedgerInputError('transaction: missing header', 'transaction');
    if (!txn.header.initiator) {
      if (!unwrapSignature(metadata).key.timestamp) throw new LedgerInputError('timestamp: the initiating signature needs a timestamp', 'timestamp');
      txn.header.initiator = md;
    }
    initiator = Buffer.from(txn.header.initiator).equals(Buffer.from(md));
  }
  const txHash = transactionHash(txn);
  return { transaction: txn, metadata, metadataHash: md, txHash, hashToSign: hashToSign(md, txHash), initiator };
}

/** Put a raw 64-byte signature and the tx hash into a copy of the metadata. */
export function attachSignature(
  metadata: core.ED25519Signature | core.DelegatedSignature,
  signature: Uint8Array | string,
  txHash: Uint8Array,
): core.ED25519Signature | core.DelegatedSignature {
  const raw = bytesArg(signature, 'signature', 64);
  const copy = metadata.copy();
  const { key } = unwrapSignature(copy);
  key.signature = raw;
  key.transactionHash = txHash;
  return copy;
}

export function ed25519Verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  return ed25519VerifyRaw(signature, message, publicKey);
}

export type VerifyResult =
  | { ok: true; metadataHash: Uint8Array; hashToSign: Uint8Array }
  | { ok: false; reason: string; code: 'badRequest' | 'unauthenticated' };

/**
 * Verify an Ed25519 signature from an envelope against a transaction hash.
 * Recomputes the metadata hash with accumulate.js; a signature over the ASCII of the hex fails.
 */
export function verifySignature(sig: core.Signature, txHash: Uint8Array): VerifyResult {
  let key: core.ED25519Signature;
  try {
    key = unwrapSignature(sig).key;
  } catch (e) {
    return { ok: false, reason: (e as Error).message, code: 'badRequest' };
  }
  if (key.publicKey?.length !== 32) return { ok: false, reason: `publicKey: expected 32 bytes, got ${key.publicKey?.length ?? 0}`, code: 'badRequest' };
  if (key.signature?.length !== 64) return { ok: false, reason: `signature: expected 64 bytes, got ${key.signature?.length ?? 0}`, code: 'badRequest' };
  if (key.transactionHash && !Buffer.from(key.transactionHash).equals(Buffer.from(txHash))) {
    return { ok: false, reason: 'signature: transactionHash does not match the transaction', code: 'badRequest' };
  }
  const md = metadataHash(sig);
  const h = hashToSign(md, txHash);
  return ed25519Verify(key.signature, h, key.publicKey) ? { ok: true, metadataHash: md, hashToSign: h } : refusal(key.signature, h, key.publicKey);
}

/** Why a signature over `hash` fails: naming the common mistake of signing the hex text instead of the bytes. */
function refusal(signature: Uint8Array, hash: Uint8Array, publicKey: Uint8Array): VerifyResult {
  const overHex = ed25519Verify(signature, new TextEncoder().encode(toHex(hash)), publicKey);
  return {
    ok: false,
    code: 'unauthenticated',
    reason: overHex
      ? 'invalid signature: it signs the ASCII of the hex string; sign the raw 32 bytes of hash_to_sign'
      : 'invalid signature: Ed25519 verification failed',
  };
}

/** Verify a raw external signature over hash_to_sign (what the gateway does before submitting). */
export function verifyExternalSignature(args: {
  hashToSign: Uint8Array | string;
  signature: Uint8Array | string;
  publicKey: Uint8Array | string;
}): VerifyResult {
  const h = bytesArg(args.hashToSign, 'hashToSign', 32);
  const s = bytesArg(args.signature, 'signature', 64);
  const pk = bytesArg(args.publicKey, 'publicKey', 32);
  return ed25519Verify(s, h, pk) ? { ok: true, metadataHash: new Uint8Array(), hashToSign: h } : refusal(s, h, pk);
}

/** Ed25519 key from a 32-byte seed (or 64-byte secret key). */
export function keyFromSeed(seed: Uint8Array | string): ED25519Key {
  const b = typeof seed === 'string' ? fromHex(seed, 'privateKey') : seed;
  if (b.length !== 32 && b.length !== 64) throw new LedgerInputError(`privateKey: expected 32 or 64 bytes, got ${b.length}`, 'privateKey');
  // derive the public key with OpenSSL and hand accumulate.js the 64-byte secret (seed || public key)
  const sk = b.slice(0, 32);
  return ED25519Key.from(Uint8Array.from(Buffer.concat([sk, ed25519PublicKey(sk)])));
}

export function publicKeyHash(publicKey: Uint8Array): Uint8Array {
  return sha256(publicKey);
}

/** Sign hashToSign with a held key (raw 32 bytes). */
export function signHash(key: ED25519Key, h: Uint8Array): Uint8Array {
  return ed25519Sign(h, key.address.privateKey.slice(0, 32));
}

export { normUrl };
