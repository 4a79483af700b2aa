/**
 * How a gateway authenticates its requests to a validator, for both sides: the gateway's quorum client signs
 * (src/validator/quorum/post.ts), the validator's HTTP API verifies (src/validator/http.ts).
 *
 * Every POST to a validator carries four headers:
 *   x-pgw-key        the gateway's Ed25519 public key (64 hex)
 *   x-pgw-timestamp  milliseconds since the Unix epoch when it was signed (decimal)
 *   x-pgw-nonce      16 random bytes (32 hex), never used twice by one key
 *   x-pgw-signature  Ed25519 signature (128 hex) over the canonical request:
 *
 *     pgw-validator-request/v1 \n METHOD \n path \n validator index \n timestamp \n nonce \n hex(sha256(body))
 *
 * `path` is the API path as VALIDATOR_API states it (without any base path of the validator's URL), the validator
 * index is the one the request is addressed to (a request captured on its way to one validator is refused by the
 * others), and the body is hashed as the bytes sent. A validator accepts a request when the key is one it trusts,
 * the signature verifies, the timestamp is within its window (±60 s by default) and the key's nonce was not seen
 * within that window (NonceLedger: bounded memory; a timestamp outside the window is refused anyway).
 * GET /v1/health and GET /v1/info are public: they answer from memory and show public keys only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ed25519PublicKey, ed25519Sign, ed25519VerifyRaw } from './ed25519.js';

export const VALIDATOR_AUTH_HEADERS = {
  key: 'x-pgw-key',
  timestamp: 'x-pgw-timestamp',
  nonce: 'x-pgw-nonce',
  signature: 'x-pgw-signature',
} as const;

const DOMAIN = 'pgw-validator-request/v1';
/** the clock difference a validator tolerates by default, each way */
export const DEFAULT_AUTH_WINDOW_MS = 60_000;

export interface GatewayKey {
  /** 32-byte Ed25519 seed */
  seed: Uint8Array;
  /** lowercase hex, no 0x */
  publicKey: string;
}

const HEX64 = /^(0x)?[0-9a-fA-F]{64}$/;

/** The gateway's signing key from its hex seed (VALIDATOR_CLIENT_KEY). */
export function gatewayKeyFromSeed(seedHex: string): GatewayKey {
  if (!HEX64.test(seedHex)) throw new Error('a gateway key seed is 32 bytes of hex');
  const seed = Uint8Array.from(Buffer.from(seedHex.replace(/^0x/, ''), 'hex'));
  return { seed, publicKey: Buffer.from(ed25519PublicKey(seed)).toString('hex') };
}

/** A fresh gateway key: 32 random bytes as the seed (the devnet makes one; so can an operator, with any random source). */
export function newGatewayKey(): GatewayKey & { seedHex: string } {
  const seedHex = randomBytes(32).toString('hex');
  return { ...gatewayKeyFromSeed(seedHex), seedHex };
}

/** Normalises a list of trusted gateway public keys (hex, with or without 0x); throws naming a malformed entry. */
export function parseTrustedGatewayKeys(keys: readonly string[]): ReadonlySet<string> {
  const out = new Set<string>();
  for (const k of keys) {
    if (!HEX64.test(k)) throw new Error(`trusted gateway key ${JSON.stringify(k.slice(0, 80))} is not 32 bytes of hex`);
    out.add(k.replace(/^0x/, '').toLowerCase());
  }
  return out;
}

export interface SignedRequest {
  method: string;
  /** API path, e.g. /v1/observe */
  path: string;
  validatorIndex: number;
  body: Uint8Array | string;
}

/** The bytes a gateway signs and a validator verifies: the one formula both sides use. */
export function canonicalValidatorRequest(r: SignedRequest, timestamp: string, nonce: string): Uint8Array {
  const bodyHash = createHash('sha256').update(r.body).digest('hex');
  return Buffer.from([DOMAIN, r.method.toUpperCase(), r.path, String(r.validatorIndex), timestamp, nonce, bodyHash].join('\n'), 'utf8');
}

/** The authentication headers of one request (a fresh nonce and the current time each call). */
export function signValidatorRequest(key: GatewayKey, r: SignedRequest, now = Date.now()): Record<string, string> {
  const timestamp = String(Math.trunc(now));
  const nonce = randomBytes(16).toString('hex');
  const signature = Buffer.from(ed25519Sign(canonicalValidatorRequest(r, timestamp, nonce), key.seed)).toString('hex');
  return {
    [VALIDATOR_AUTH_HEADERS.key]: key.publicKey,
    [VALIDATOR_AUTH_HEADERS.timestamp]: timestamp,
    [VALIDATOR_AUTH_HEADERS.nonce]: nonce,
    [VALIDATOR_AUTH_HEADERS.signature]: signature,
  };
}

/**
 * The nonces seen within the window, per key: a second request with one is a replay. Entries expire once their
 * timestamp is out of the window (a request that old is refused for its timestamp); at most `capacity` are kept,
 * and when that many are live a new request is refused as busy rather than letting memory grow.
 */
export class NonceLedger {
  private readonly seen = new Map<string, number>();
  constructor(
    private readonly windowMs = DEFAULT_AUTH_WINDOW_MS,
    private readonly capacity = 100_000,
  ) {}

  /** 'fresh' (now remembered), 'replayed', or 'full' (too many live nonces) */
  admit(key: string, nonce: string, timestampMs: number, now: number): 'fresh' | 'replayed' | 'full' {
    const id = `${key}:${nonce}`;
    const until = this.seen.get(id);
    if (until !== undefined && until >= now) return 'replayed';
    if (this.seen.size >= this.capacity) this.prune(now);
    if (this.seen.size >= this.capacity) return 'full';
    // remembered until the request's timestamp leaves the window
    this.seen.set(id, timestampMs + this.windowMs);
    return 'fresh';
  }

  get size(): number {
    return this.seen.size;
  }

  private prune(now: number) {
    for (const [id, until] of this.seen) if (until < now) this.seen.delete(id);
  }
}

export type VerifyResult = { ok: true; key: string } | { ok: false; code: 'UNAUTHENTICATED' | 'BUSY'; reason: string };

/**
 * Checks a request's authentication headers (read through `header`) against the trusted keys: signature, window,
 * nonce. Nothing is remembered unless the signature verifies, so forged requests cannot fill the nonce ledger.
 */
export function verifyValidatorRequest(p: {
  trusted: ReadonlySet<string>;
  header: (name: string) => string | undefined;
  request: SignedRequest;
  nonces: NonceLedger;
  windowMs?: number;
  now?: number;
}): VerifyResult {
  const windowMs = p.windowMs ?? DEFAULT_AUTH_WINDOW_MS;
  const now = p.now ?? Date.now();
  const refuse = (reason: string): VerifyResult => ({ ok: false, code: 'UNAUTHENTICATED', reason });
  const key = p.header(VALIDATOR_AUTH_HEADERS.key)?.toLowerCase();
  const timestamp = p.header(VALIDATOR_AUTH_HEADERS.timestamp);
  const nonce = p.header(VALIDATOR_AUTH_HEADERS.nonce)?.toLowerCase();
  const signature = p.header(VALIDATOR_AUTH_HEADERS.signature)?.toLowerCase();
  if (!key || !timestamp || !nonce || !signature) return refuse('request is not signed by a gateway key');
  if (!/^[0-9a-f]{64}$/.test(key) || !/^\d{1,16}$/.test(timestamp) || !/^[0-9a-f]{32}$/.test(nonce) || !/^[0-9a-f]{128}$/.test(signature))
    return refuse('malformed authentication headers');
  if (!p.trusted.has(key)) return refuse('gateway key is not trusted by this validator');
  const ts = Number(timestamp);
  if (Math.abs(ts - now) > windowMs) return refuse(`timestamp is more than ${windowMs / 1000} s from this validator's clock`);
  const valid = ed25519VerifyRaw(Buffer.from(signature, 'hex'), canonicalValidatorRequest(p.request, timestamp, nonce), Buffer.from(key, 'hex'));
  if (!valid) return refuse('signature does not verify');
  const seen = p.nonces.admit(key, nonce, ts, now);
  if (seen === 'replayed') return refuse('nonce already used (replayed request)');
  if (seen === 'full') return { ok: false, code: 'BUSY', reason: 'too many requests within the authentication window' };
  return { ok: true, key };
}
