/**
 * Identity naming and key-material rules, shared by the API, the activities and the tests:
 *   public_key      Ed25519 raw 32-byte public key, 64 hex, a valid curve point of full order
 *   public_key_hash SHA-256 over the raw 32 key bytes (not the hex text, not SPKI DER), 64 hex
 *   name            the ADI label: acc://<name>.<suffix>
 */
import { createHash } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';

const HEX64 = /^[0-9a-fA-F]{64}$/;

/** null when `hex` is a usable Ed25519 public key, else the reason. */
export function ed25519PublicKeyProblem(hex: string): string | null {
  if (!HEX64.test(hex)) return 'must be 64 hex characters (the raw 32-byte Ed25519 public key)';
  let point: ReturnType<typeof ed25519.Point.fromHex>;
  try {
    point = ed25519.Point.fromHex(hex.toLowerCase());
  } catch {
    return 'is not a valid Ed25519 public key (not a point on the curve)';
  }
  if (point.isSmallOrder()) return 'is not a valid Ed25519 public key (a small-order point)';
  return null;
}

/** SHA-256 over the raw key bytes, lower-case hex. */
export function publicKeyHashHex(publicKeyHex: string): string {
  return createHash('sha256').update(Buffer.from(publicKeyHex, 'hex')).digest('hex');
}

/**
 * ADI label rules (the ledger's, narrowed to what is safe everywhere): 3 to 63 characters of lower-case
 * letters, digits and dashes, starting and ending with a letter or digit, not only digits, not a name the ledger
 * reserves for its partitions.
 */
export function adiNameProblem(name: string): string | null {
  if (name.length < 3 || name.length > 63) return 'must be 3 to 63 characters';
  if (!/^[a-z0-9-]+$/.test(name)) return 'may contain only lower-case letters, digits and dashes';
  if (name.startsWith('-') || name.endsWith('-')) return 'must start and end with a letter or digit';
  if (/^[0-9]+$/.test(name)) return 'must not be only digits';
  // the ledger's own partitions: acc://dn.acme, acc://bvn-<id>.acme (and acc://unknown)
  if (name === 'dn' || name === 'unknown' || name.startsWith('bvn-')) return `"${name}" is reserved by the ledger (dn, bvn-*, unknown)`;
  return null;
}

/** The ledger's base CreateIdentity fee, in units (100 per credit): 500 credits. */
export const BASE_IDENTITY_FEE_UNITS = 50_000;

/**
 * The ledger's registration fee for an ADI label when it is above the base fee (units), else undefined. The
 * network's `feeSchedule.createIdentitySliding[i]` is the fee for a label of i + 1 bytes (without the suffix);
 * longer labels pay the base fee. The genesis default makes labels of up to 12 bytes cost 1,000 to 2,048,000 credits.
 */
export function slidingIdentityFee(name: string, sliding: readonly number[]): number | undefined {
  const fee = sliding[Buffer.byteLength(name) - 1];
  return fee !== undefined && fee > BASE_IDENTITY_FEE_UNITS ? fee : undefined;
}

export interface IdentityUrls {
  adiUrl: string;
  bookUrl: string;
  keyPageUrl: string;
  dataAccountUrl: string;
}

/** The ledger URLs of an identity named `name` (key page 1 of the book). */
export function identityUrls(name: string, suffix: string): IdentityUrls {
  const adiUrl = `acc://${name}.${suffix}`;
  return { adiUrl, bookUrl: `${adiUrl}/book`, keyPageUrl: `${adiUrl}/book/1`, dataAccountUrl: `${adiUrl}/data` };
}
