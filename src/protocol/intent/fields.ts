/** Field checks of the canonical intent: each normalizes one value or throws IntentError naming the field. */
import { getAddress, isAddress, type Address, type Hex } from 'viem';
import { CALL_GAS_LIMIT, IntentError } from './model.js';

export const HEX32 = /^0x[0-9a-fA-F]{64}$/;
export const UINT = /^(0|[1-9][0-9]*)$/;
export const FORBIDDEN = /[<>&\u2028\u2029]/;

export function fail(field: string, msg: string): never {
  throw new IntentError(`${field}: ${msg}`, field);
}

export function gasLimitString(v: unknown, field: string): string {
  const n = typeof v === 'string' && UINT.test(v) && v.length < 10 ? Number(v) : typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < CALL_GAS_LIMIT.min || n > CALL_GAS_LIMIT.max) {
    fail(field, `must be an integer from ${CALL_GAS_LIMIT.min} to ${CALL_GAS_LIMIT.max} (the gas the call is given, enforced on chain)`);
  }
  return String(n);
}

export function uintString(v: unknown, field: string): string {
  if (typeof v === 'bigint') {
    if (v < 0n) fail(field, 'must not be negative');
    return v.toString();
  }
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) fail(field, 'must be a non-negative integer (use a decimal string beyond 2^53)');
    return String(v);
  }
  if (typeof v !== 'string' || !UINT.test(v)) fail(field, 'must be a non-negative integer as a decimal string');
  if (v.length > 78 || BigInt(v) >= 1n << 256n) fail(field, 'does not fit in uint256');
  return v;
}

/**
 * A 20-byte 0x address, checksummed. All-lowercase or all-uppercase hex carries no checksum; mixed case must be
 * the EIP-55 checksum, since a wrong one means a mistyped address. Undefined when it is not one.
 */
export function checkedAddress(v: unknown): Address | undefined {
  if (typeof v !== 'string' || !isAddress(v, { strict: false })) return undefined;
  const hex = v.slice(2);
  const a = getAddress(v);
  return hex === hex.toLowerCase() || hex === hex.toUpperCase() || a === v ? a : undefined;
}

export const ADDRESS_RULE = 'must be a 20-byte 0x address (mixed case must be its EIP-55 checksum)';

export function address(v: unknown, field: string): Address {
  return checkedAddress(v) ?? fail(field, ADDRESS_RULE);
}

export function hex32(v: unknown, field: string): Hex {
  if (typeof v !== 'string' || !HEX32.test(v)) fail(field, 'must be 32-byte hex (0x + 64 hex digits)');
  return v.toLowerCase() as Hex;
}

export function text(v: unknown, field: string, max = 256): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > max) fail(field, `must be a non-empty string of at most ${max} characters`);
  if (FORBIDDEN.test(v)) fail(field, 'must not contain <, >, &, U+2028 or U+2029');
  return v;
}

export function unixSeconds(v: number | Date | undefined, dflt: number, field: string): number {
  if (v === undefined) return dflt;
  const s = v instanceof Date ? Math.floor(v.getTime() / 1000) : v;
  if (!Number.isSafeInteger(s) || s <= 0) fail(field, 'must be unix seconds');
  return s;
}
