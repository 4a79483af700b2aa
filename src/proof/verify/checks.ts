/** The verifier's vocabulary: a failed check (CheckFailed), assertions that name what failed, and the check runner. */
import type { Hex } from 'viem';
import type { ProofBundle } from '../bundle.js';
import type { CanonicalIntent } from '../../protocol/intent/index.js';

export interface BundleCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export class CheckFailed extends Error {}

export function ensure(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new CheckFailed(msg);
}

const UINT = /^(0|[1-9][0-9]*)$/;
/** An integer the bundle writes as a decimal string (it may exceed 2^53: powers, bitmaps, record fields). */
export function uint(v: unknown, field: string): bigint {
  ensure(typeof v === 'string' && UINT.test(v), `${field} must be a decimal string, got ${JSON.stringify(v)}`);
  return BigInt(v);
}
/** A count, index, version, threshold, block number or gas: a JSON number, a safe non-negative integer. */
export function int(v: unknown, field: string): number {
  ensure(typeof v === 'number' && Number.isSafeInteger(v) && v >= 0, `${field} must be a whole number, got ${JSON.stringify(v)}`);
  return v;
}
export const index = int;
/** A ledger hash (bare hex in the bundle) in the 0x form the EVM side and the hashing libraries use. */
export const ledger0x = (h: unknown): Hex => `0x${String(h).replace(/^0x/, '')}` as Hex;
export const lc = (v: unknown) => String(v).toLowerCase();
export const same = (a: unknown, b: unknown) => typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
export function eq(actual: unknown, expected: unknown, what: string) {
  ensure(same(actual, expected), `${what}: ${String(actual)} != ${String(expected)}`);
}

/** Trie proofs must be exactly the nodes of their path, in path order (no node that proves nothing). */
export const EXACT = { exact: true } as const;

/** Runs named checks, each recorded with its outcome: a failing check never stops the others. */
export interface Checker {
  readonly checks: BundleCheck[];
  /** Runs `fn` (its answer is the check's detail); false when it threw. */
  check(name: string, fn: () => string): boolean;
  asyncCheck(name: string, fn: () => Promise<string>): Promise<void>;
}

export function createChecker(): Checker {
  const checks: BundleCheck[] = [];
  const check = (name: string, fn: () => string): boolean => {
    try {
      checks.push({ name, ok: true, detail: fn() });
      return true;
    } catch (e) {
      checks.push({
        name,
        ok: false,
        detail: e instanceof CheckFailed ? e.message : `${(e as Error)?.name ?? 'Error'}: ${(e as Error)?.message ?? String(e)}`,
      });
      return false;
    }
  };
  async function asyncCheck(name: string, fn: () => Promise<string>) {
    try {
      checks.push({ name, ok: true, detail: await fn() });
    } catch (e) {
      checks.push({ name, ok: false, detail: e instanceof CheckFailed ? e.message : `${(e as Error).message.split('\n')[0]}` });
    }
  }
  return { checks, check, asyncCheck };
}

/** chain name -> what the verifier trusts there: the ProofAnchor address, and optionally the validator set root. */
export type TrustedAnchors = Record<string, { proofAnchor: string; validatorSetRoot?: string }>;

/** What the checks of one bundle share: the runner, the bundle, and the intent once it parsed. */
export interface VerifyContext extends Checker {
  readonly b: ProofBundle;
  intent?: CanonicalIntent;
}
