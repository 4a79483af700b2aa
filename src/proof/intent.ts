/**
 * The canonical intent: what an identity signs on the ledger, what the gateway anchors and what every
 * validator re-derives on its own. ONE module, imported by the gateway (issue 8), the validators and the tests.
 *
 * Shape (after certen.md §2.1, the 4-blob model): an intent is four JSON blobs, each stored as one part of a
 * double-hash WriteData entry on the identity's data account (`acc://<adi>/data`), header memo INTENT_MEMO:
 *
 *   b0 intentData      {kind:"PGW_INTENT", version:"1", intent_id, adi_url, proof_class, created_at}
 *   b1 crossChainData  {protocol:"PGW", version:"1", legs:[{leg_id, chain, chain_id, from, to, amount_wei,
 *                        contract_call?{target, value, function_signature, args, expected_events, expected_state},
 *                        execution{target, value, data, data_hash, execution_commitment}}]}
 *   b2 governanceData  {adi_url, key_book}
 *   b3 replayData      {nonce, created_at, expires_at}
 *
 * Each part is the canonical JSON (formulas.canonicalJson: keys sorted, no whitespace) of its blob, UTF-8.
 * operationId = formulas.operationId([b0,b1,b2,b3]) over the blobs AS STORED; parseIntentEntries refuses
 * parts that are not in canonical form, so the id is a function of the stored bytes.
 *
 * Per leg, `execution` is derived: native transfer (no contract_call): target = to, value = amount_wei,
 * data = 0x; contract call: target = contract_call.target, value = contract_call.value, data =
 * encodeFunctionData(function_signature, args). execution_commitment = formulas.executionCommitment for the
 * leg's chain id. parseIntentEntries recomputes all of it and refuses any mismatch (a changed byte of a leg).
 *
 * Integers: chain ids, amounts and values are decimal strings; created_at/expires_at are unix seconds.
 * Strings must not contain `<`, `>`, `&`, U+2028 or U+2029 (Go's JSON canonicalization escapes them).
 */
import {
  encodeFunctionData,
  getAddress,
  isAddress,
  keccak256,
  parseAbiItem,
  toEventSelector,
  type AbiFunction,
  type AbiParameter,
  type Address,
  type Hex,
} from 'viem';
import { canonicalJson, executionCommitment, operationId as computeOperationId, planAnchor, type AnchorPlan } from '../chain/formulas.js';

export const INTENT_MEMO = 'PGW_INTENT';
export const INTENT_KIND = 'PGW_INTENT';
export const INTENT_VERSION = '1';
export const INTENT_PROTOCOL = 'PGW';
/** Largest accepted part (bytes) when parsing. */
export const MAX_INTENT_PART_BYTES = 64 * 1024;

export class IntentError extends Error {
  constructor(message: string, readonly field?: string) {
    super(message);
    this.name = 'IntentError';
  }
}

// ---------------------------------------------------------------------------------------------- inputs

export interface ExpectedEventInput {
  /** emitting contract */
  contract: Address;
  /** topic0 (32-byte hex) or an event signature such as "Called(address,uint256,bytes32)" */
  topic0?: Hex;
  event?: string;
  /** topics[1..] to match; null = any */
  topics?: (Hex | null)[];
  /** keccak256 of the log data */
  dataHash?: Hex;
}

export interface ExpectedStateInput {
  account: Address;
  /** 32-byte hex storage slot */
  slot: Hex;
  /** expected 32-byte value after execution */
  value: Hex;
}

export interface ContractCallInput {
  target: Address;
  /** wei, decimal string; default "0" */
  value?: string | bigint;
  /** "record(bytes32)" or "function record(bytes32)" */
  functionSignature: string;
  args?: unknown[];
  expectedEvents?: ExpectedEventInput[];
  expectedState?: ExpectedStateInput[];
  /**
   * Gas the account must give the call, enforced on chain (AbstractAccount: InsufficientGas otherwise); absent:
   * whatever the executing transaction leaves. Set it for a target that survives a failing inner call.
   */
  gasLimit?: number | string | bigint;
}

/** The range of contractCall.gasLimit. */
export const CALL_GAS_LIMIT = { min: 10_000, max: 30_000_000 } as const;

export interface LegInput {
  legId: string;
  /** chain name, e.g. ethereum-sepolia */
  chain: string;
  chainId: number | string | bigint;
  /** the identity's AbstractAccount (the same on every chain) */
  fromAddress: Address;
  toAddress: Address;
  /** wei, decimal string */
  amount: string | bigint;
  contractCall?: ContractCallInput;
}

export interface IntentInput {
  intentId: string;
  /** canonical ADI URL, acc://<name>.<suffix> */
  adiUrl: string;
  /** default `${adiUrl}/book` */
  keyBook?: string;
  legs: LegInput[];
  proofClass?: string;
  /** unix seconds or Date; default now */
  createdAt?: number | Date;
  /** unix seconds or Date; default createdAt + 95 minutes */
  expiresAt?: number | Date;
  /** default random */
  nonce?: string;
}

// ---------------------------------------------------------------------------------------------- canonical blobs

export interface ExpectedEvent {
  contract: Address;
  topic0: Hex;
  topics?: (Hex | null)[];
  data_hash?: Hex;
}
export interface ExpectedState {
  account: Address;
  slot: Hex;
  value: Hex;
}
export interface LegBlob {
  leg_id: string;
  chain: string;
  chain_id: string;
  from: Address;
  to: Address;
  amount_wei: string;
  contract_call?: {
    target: Address;
    value: string;
    function_signature: string;
    args: unknown[];
    expected_events: ExpectedEvent[];
    expected_state: ExpectedState[];
    /** decimal; absent = no gas limit */
    gas_limit?: string;
  };
  execution: { target: Address; value: string; data: Hex; data_hash: Hex; execution_commitment: Hex };
}
export interface IntentBlobs {
  intentData: { kind: string; version: string; intent_id: string; adi_url: string; proof_class: string; created_at: number };
  crossChainData: { protocol: string; version: string; legs: LegBlob[] };
  governanceData: { adi_url: string; key_book: string };
  replayData: { nonce: string; created_at: number; expires_at: number };
}

/** A leg with everything derived (what validators and the gateway work with). */
export interface IntentLeg {
  legId: string;
  chain: string;
  chainId: bigint;
  account: Address;
  to: Address;
  amount: bigint;
  target: Address;
  value: bigint;
  data: Hex;
  executionCommitment: Hex;
  expectedEvents: ExpectedEvent[];
  expectedState: ExpectedState[];
  /** gas the account gives the call (0n: no limit) */
  gasLimit: bigint;
  isContractCall: boolean;
}

export interface CanonicalIntent {
  blobs: IntentBlobs;
  /** the four WriteData parts (canonical JSON strings) in order */
  parts: [string, string, string, string];
  operationId: Hex;
  intentId: string;
  adiUrl: string;
  keyBook: string;
  account: Address;
  createdAt: number;
  expiresAt: number;
  nonce: string;
  legs: IntentLeg[];
}

// ---------------------------------------------------------------------------------------------- helpers

const HEX32 = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^(0|[1-9][0-9]*)$/;
const FORBIDDEN = /[<>&\u2028\u2029]/;

function fail(field: string, msg: string): never {
  throw new IntentError(`${field}: ${msg}`, field);
}

function gasLimitString(v: unknown, field: string): string {
  const n = typeof v === 'string' && UINT.test(v) && v.length < 10 ? Number(v) : typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < CALL_GAS_LIMIT.min || n > CALL_GAS_LIMIT.max) {
    fail(field, `must be an integer from ${CALL_GAS_LIMIT.min} to ${CALL_GAS_LIMIT.max} (the gas the call is given, enforced on chain)`);
  }
  return String(n);
}

function uintString(v: unknown, field: string): string {
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

function address(v: unknown, field: string): Address {
  return checkedAddress(v) ?? fail(field, ADDRESS_RULE);
}

function hex32(v: unknown, field: string): Hex {
  if (typeof v !== 'string' || !HEX32.test(v)) fail(field, 'must be 32-byte hex (0x + 64 hex digits)');
  return v.toLowerCase() as Hex;
}

function text(v: unknown, field: string, max = 256): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > max) fail(field, `must be a non-empty string of at most ${max} characters`);
  if (FORBIDDEN.test(v)) fail(field, 'must not contain <, >, &, U+2028 or U+2029');
  return v;
}

function unixSeconds(v: number | Date | undefined, dflt: number, field: string): number {
  if (v === undefined) return dflt;
  const s = v instanceof Date ? Math.floor(v.getTime() / 1000) : v;
  if (!Number.isSafeInteger(s) || s <= 0) fail(field, 'must be unix seconds');
  return s;
}

function parseFunction(sig: string, field: string): AbiFunction {
  const s = text(sig, field, 1024).trim();
  try {
    const item = parseAbiItem(s.startsWith('function ') ? s : `function ${s}`) as AbiFunction;
    if (item.type !== 'function') throw new Error('not a function');
    return item;
  } catch (e) {
    fail(field, `not a function signature (${(e as Error).message.split('\n')[0]})`);
  }
}

/** Coerce JSON args to viem values by ABI type (integers from decimal strings); returns [viem, canonical JSON]. */
function coerceArg(p: AbiParameter, v: unknown, field: string): [unknown, unknown] {
  const t = p.type;
  const arr = /^(.*)\[(\d*)\]$/.exec(t);
  if (arr) {
    if (!Array.isArray(v)) fail(field, `expected an array for ${t}`);
    if (arr[2] && v.length !== Number(arr[2])) fail(field, `expected ${arr[2]} elements for ${t}`);
    const inner = { ...p, type: arr[1]! } as AbiParameter;
    const out = v.map((x, i) => coerceArg(inner, x, `${field}[${i}]`));
    return [out.map((o) => o[0]), out.map((o) => o[1])];
  }
  if (t === 'tuple') {
    const comps = (p as { components?: readonly AbiParameter[] }).components ?? [];
    const vals = Array.isArray(v) ? v : comps.map((c) => (v as Record<string, unknown> | null)?.[c.name ?? '']);
    if (!Array.isArray(v) && (typeof v !== 'object' || v === null)) fail(field, 'expected an array or object for a tuple');
    if (vals.length !== comps.length) fail(field, `expected ${comps.length} tuple components`);
    const out = comps.map((c, i) => coerceArg(c, vals[i], `${field}.${c.name || i}`));
    return [out.map((o) => o[0]), out.map((o) => o[1])];
  }
  const int = /^(u?)int(\d*)$/.exec(t);
  if (int) {
    const signed = !int[1];
    const bits = Number(int[2] || 256);
    let b: bigint;
    if (typeof v === 'bigint') b = v;
    else if (typeof v === 'number') {
      if (!Number.isInteger(v)) fail(field, `expected an integer for ${t}, got ${v}`);
      if (!Number.isSafeInteger(v)) fail(field, 'integers beyond 2^53 must be strings');
      b = BigInt(v);
    } else if (typeof v === 'string' && /^-?(0|[1-9][0-9]{0,77})$/.test(v)) b = BigInt(v);
    else fail(field, `expected an integer (decimal string) for ${t}`);
    const [min, max] = signed ? [-(1n << BigInt(bits - 1)), (1n << BigInt(bits - 1)) - 1n] : [0n, (1n << BigInt(bits)) - 1n];
    if (b < min || b > max) fail(field, `${b < 0n && !signed ? 'negative value' : 'out of range'} for ${t} (${min} to ${max})`);
    return [b, b.toString()];
  }
  if (t === 'bool') {
    if (typeof v !== 'boolean') fail(field, 'expected a boolean');
    return [v, v];
  }
  if (t === 'address') {
    const a = address(v, field);
    return [a, a];
  }
  if (t === 'string') {
    if (typeof v !== 'string' || FORBIDDEN.test(v)) fail(field, 'expected a string without <, >, &, U+2028, U+2029');
    return [v, v];
  }
  if (/^bytes\d*$/.test(t)) {
    if (typeof v !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(v)) fail(field, `expected hex bytes for ${t}`);
    const n = t === 'bytes' ? undefined : Number(t.slice(5));
    if (n !== undefined && v.length !== 2 + 2 * n) fail(field, `expected ${n} bytes for ${t}`);
    const h = v.toLowerCase();
    return [h, h];
  }
  fail(field, `unsupported ABI type ${t}`);
}

export function encodeCall(functionSignature: string, args: readonly unknown[], field = 'contractCall'): { data: Hex; args: unknown[] } {
  const fn = parseFunction(functionSignature, `${field}.functionSignature`);
  if (args.length !== fn.inputs.length) fail(`${field}.args`, `expected ${fn.inputs.length} arguments, got ${args.length}`);
  const out = fn.inputs.map((p, i) => coerceArg(p, args[i], `${field}.args[${i}]`));
  try {
    const data = encodeFunctionData({ abi: [fn], functionName: fn.name, args: out.map((o) => o[0]) as never });
    return { data, args: out.map((o) => o[1]) };
  } catch (e) {
    fail(`${field}.args`, (e as Error).message.split('\n')[0]!);
  }
}

function deriveExecution(leg: Omit<LegBlob, 'execution'>, field: string): LegBlob['execution'] {
  const chainId = BigInt(leg.chain_id);
  let target: Address;
  let value: string;
  let data: Hex;
  if (leg.contract_call) {
    target = leg.contract_call.target;
    value = leg.contract_call.value;
    data = encodeCall(leg.contract_call.function_signature, leg.contract_call.args, `${field}.contract_call`).data;
  } else {
    target = leg.to;
    value = leg.amount_wei;
    data = '0x';
  }
  return {
    target,
    value,
    data,
    data_hash: keccak256(data),
    execution_commitment: executionCommitment({ chainId, target, value: BigInt(value), data }),
  };
}

function normEvent(e: ExpectedEventInput, field: string): ExpectedEvent {
  const contract = address(e?.contract, `${field}.contract`);
  let topic0: Hex;
  if (e.topic0 !== undefined) topic0 = hex32(e.topic0, `${field}.topic0`);
  else if (e.event !== undefined) {
    try {
      topic0 = toEventSelector(text(e.event, `${field}.event`, 1024));
    } catch {
      fail(`${field}.event`, 'not an event signature');
    }
  } else fail(field, 'needs topic0 or event');
  const out: ExpectedEvent = { contract, topic0 };
  if (e.topics !== undefined) {
    if (!Array.isArray(e.topics) || e.topics.length > 3) fail(`${field}.topics`, 'at most 3 indexed topics after topic0');
    out.topics = e.topics.map((t, i) => (t === null ? null : hex32(t, `${field}.topics[${i}]`)));
  }
  if (e.dataHash !== undefined) out.data_hash = hex32(e.dataHash, `${field}.dataHash`);
  return out;
}

function normState(s: ExpectedStateInput, field: string): ExpectedState {
  return { account: address(s?.account, `${field}.account`), slot: hex32(s.slot, `${field}.slot`), value: hex32(s.value, `${field}.value`) };
}

// ---------------------------------------------------------------------------------------------- build

function randomNonce(): string {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return `pgw_${Date.now()}_${Buffer.from(b).toString('hex')}`;
}

/** Builds the canonical intent from API-shaped input; throws IntentError naming the leg and field. */
export function buildIntent(input: IntentInput): CanonicalIntent {
  const adiUrl = text(input.adiUrl, 'adiUrl');
  if (!/^acc:\/\/[^/\s]+$/.test(adiUrl)) fail('adiUrl', 'must be acc://<adi> without a path');
  const keyBook = text(input.keyBook ?? `${adiUrl}/book`, 'keyBook');
  const now = Math.floor(Date.now() / 1000);
  const createdAt = unixSeconds(input.createdAt, now, 'createdAt');
  const expiresAt = unixSeconds(input.expiresAt, createdAt + 95 * 60, 'expiresAt');
  if (expiresAt <= createdAt) fail('expiresAt', 'must be after createdAt');
  if (!Array.isArray(input.legs) || input.legs.length === 0) fail('legs', 'at least one leg is required');
  const seen = new Set<string>();
  const legs: LegBlob[] = input.legs.map((l, i) => {
    const f = `legs[${i}]`;
    const legId = text(l?.legId, `${f}.legId`, 128);
    if (seen.has(legId)) fail(`${f}.legId`, `duplicate leg id ${legId}`);
    seen.add(legId);
    const base: Omit<LegBlob, 'execution'> = {
      leg_id: legId,
      chain: text(l.chain, `${f}.chain`, 64),
      chain_id: uintString(typeof l.chainId === 'number' || typeof l.chainId === 'bigint' ? l.chainId : l.chainId, `${f}.chainId`),
      from: address(l.fromAddress, `${f}.fromAddress`),
      to: address(l.toAddress, `${f}.toAddress`),
      amount_wei: uintString(l.amount, `${f}.amount`),
    };
    if (base.chain_id === '0') fail(`${f}.chainId`, 'must be positive');
    if (l.contractCall) {
      const c = l.contractCall;
      const cf = `${f}.contractCall`;
      if (!c.functionSignature) fail(`${cf}.functionSignature`, 'is required');
      const enc = encodeCall(c.functionSignature, c.args ?? [], cf);
      base.contract_call = {
        target: address(c.target, `${cf}.target`),
        value: uintString(c.value ?? '0', `${cf}.value`),
        function_signature: text(c.functionSignature, `${cf}.functionSignature`, 1024).trim().replace(/^function\s+/, ''),
        args: enc.args,
        expected_events: (c.expectedEvents ?? []).map((e, j) => normEvent(e, `${cf}.expectedEvents[${j}]`)),
        expected_state: (c.expectedState ?? []).map((s, j) => normState(s, `${cf}.expectedState[${j}]`)),
      };
      if (c.gasLimit !== undefined && c.gasLimit !== null) base.contract_call.gas_limit = gasLimitString(c.gasLimit, `${cf}.gasLimit`);
      // one expectation per slot: a second one for the same slot either repeats the first or contradicts it
      const slots = new Map<string, number>();
      base.contract_call.expected_state.forEach((s, j) => {
        const k = `${s.account.toLowerCase()}:${s.slot.toLowerCase()}`;
        if (slots.has(k)) fail(`${cf}.expectedState[${j}].slot`, `duplicate of expectedState[${slots.get(k)}] (same account and slot)`);
        slots.set(k, j);
      });
    }
    return { ...base, execution: deriveExecution(base, f) };
  });
  const from = legs[0]!.from;
  legs.forEach((l, i) => {
    if (l.from !== from) fail(`legs[${i}].fromAddress`, 'all legs must come from the identity account');
  });
  const blobs: IntentBlobs = {
    intentData: {
      kind: INTENT_KIND,
      version: INTENT_VERSION,
      intent_id: text(input.intentId, 'intentId', 128),
      adi_url: adiUrl,
      proof_class: text(input.proofClass ?? 'standard', 'proofClass', 64),
      created_at: createdAt,
    },
    crossChainData: { protocol: INTENT_PROTOCOL, version: INTENT_VERSION, legs },
    governanceData: { adi_url: adiUrl, key_book: keyBook },
    replayData: { nonce: text(input.nonce ?? randomNonce(), 'nonce', 128), created_at: createdAt, expires_at: expiresAt },
  };
  const intent = fromBlobs(blobs);
  // parsing refuses a larger part, so an intent built beyond it could be written but never signed or attested
  const legsBytes = Buffer.byteLength(intent.parts[1]);
  if (legsBytes > MAX_INTENT_PART_BYTES) {
    const sizes = legs.map((l) => Buffer.byteLength(canonicalJson(l)));
    const i = sizes.indexOf(Math.max(...sizes));
    fail(
      legs[i]!.contract_call ? `legs[${i}].contractCall.args` : 'legs',
      `the legs take ${legsBytes} bytes in the intent, more than the ${MAX_INTENT_PART_BYTES} one ledger entry part holds (legs[${i}] alone ${sizes[i]})`,
    );
  }
  return intent;
}

function blobList(b: IntentBlobs): unknown[] {
  return [b.intentData, b.crossChainData, b.governanceData, b.replayData];
}

function fromBlobs(blobs: IntentBlobs): CanonicalIntent {
  const list = blobList(blobs);
  const parts = list.map(canonicalJson) as [string, string, string, string];
  const legs: IntentLeg[] = blobs.crossChainData.legs.map((l) => ({
    legId: l.leg_id,
    chain: l.chain,
    chainId: BigInt(l.chain_id),
    account: l.from,
    to: l.to,
    amount: BigInt(l.amount_wei),
    target: l.execution.target,
    value: BigInt(l.execution.value),
    data: l.execution.data,
    executionCommitment: l.execution.execution_commitment,
    expectedEvents: l.contract_call?.expected_events ?? [],
    expectedState: l.contract_call?.expected_state ?? [],
    gasLimit: BigInt(l.contract_call?.gas_limit ?? 0),
    isContractCall: !!l.contract_call,
  }));
  return {
    blobs,
    parts,
    operationId: computeOperationId(list),
    intentId: blobs.intentData.intent_id,
    adiUrl: blobs.intentData.adi_url,
    keyBook: blobs.governanceData.key_book,
    account: legs[0]!.account,
    createdAt: blobs.replayData.created_at,
    expiresAt: blobs.replayData.expires_at,
    nonce: blobs.replayData.nonce,
    legs,
  };
}

/** The WriteData parts (UTF-8 strings) to write to the identity's data account with memo INTENT_MEMO. */
export function intentEntries(intent: CanonicalIntent): string[] {
  return [...intent.parts];
}

// ---------------------------------------------------------------------------------------------- parse (validators)

function obj(v: unknown, field: string, keys: readonly string[], optional: readonly string[] = []): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(field, 'must be an object');
  for (const k of Object.keys(v)) if (!keys.includes(k) && !optional.includes(k)) fail(`${field}.${k}`, 'unknown field');
  for (const k of keys) if (!(k in v)) fail(`${field}.${k}`, 'is required');
  return v as Record<string, unknown>;
}

function eq(a: unknown, b: unknown, field: string) {
  if (a !== b) fail(field, `stored ${JSON.stringify(a)} does not match recomputed ${JSON.stringify(b)}`);
}

function decodePart(p: Uint8Array | string, i: number): string {
  let bytes: Uint8Array;
  if (typeof p === 'string') {
    // hex (as the ledger returns data parts) or the JSON text itself (a JSON object is never valid hex)
    const h = p.startsWith('0x') ? p.slice(2) : p;
    if (/^([0-9a-fA-F]{2})*$/.test(h)) bytes = Uint8Array.from(Buffer.from(h, 'hex'));
    else bytes = new TextEncoder().encode(p);
  } else bytes = p;
  if (bytes.length > MAX_INTENT_PART_BYTES) fail(`part[${i}]`, 'too large');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    fail(`part[${i}]`, 'not UTF-8');
  }
}

/**
 * Parses the stored WriteData parts (raw bytes, hex as the ledger returns them, or the JSON text) and recomputes every
 * derived field: canonical form of each part, leg executions (calldata, data hash, commitment), operation id.
 * Throws IntentError with the offending field on any mismatch.
 */
export function parseIntentEntries(parts: readonly (Uint8Array | string)[]): CanonicalIntent {
  if (parts.length !== 4) fail('entry', `an intent has 4 parts, got ${parts.length}`);
  const texts = parts.map(decodePart);
  const json = texts.map((t, i) => {
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch {
      fail(`part[${i}]`, 'not JSON');
    }
    if (canonicalJson(v) !== t) fail(`part[${i}]`, 'not in canonical form (sorted keys, no whitespace)');
    if (FORBIDDEN.test(t)) fail(`part[${i}]`, 'contains <, >, &, U+2028 or U+2029');
    return v;
  });
  const b0 = obj(json[0], 'intentData', ['kind', 'version', 'intent_id', 'adi_url', 'proof_class', 'created_at']);
  eq(b0.kind, INTENT_KIND, 'intentData.kind');
  eq(b0.version, INTENT_VERSION, 'intentData.version');
  const b1 = obj(json[1], 'crossChainData', ['protocol', 'version', 'legs']);
  eq(b1.protocol, INTENT_PROTOCOL, 'crossChainData.protocol');
  eq(b1.version, INTENT_VERSION, 'crossChainData.version');
  const b2 = obj(json[2], 'governanceData', ['adi_url', 'key_book']);
  const b3 = obj(json[3], 'replayData', ['nonce', 'created_at', 'expires_at']);
  if (!Array.isArray(b1.legs) || b1.legs.length === 0) fail('crossChainData.legs', 'at least one leg');
  const legsIn = b1.legs.map((l, i): LegInput => {
    const f = `legs[${i}]`;
    const o = obj(l, f, ['leg_id', 'chain', 'chain_id', 'from', 'to', 'amount_wei', 'execution'], ['contract_call']);
    let contractCall: ContractCallInput | undefined;
    if (o.contract_call !== undefined) {
      const c = obj(o.contract_call, `${f}.contract_call`, ['target', 'value', 'function_signature', 'args', 'expected_events', 'expected_state'], ['gas_limit']);
      if (!Array.isArray(c.args) || !Array.isArray(c.expected_events) || !Array.isArray(c.expected_state)) {
        fail(`${f}.contract_call`, 'args, expected_events and expected_state must be arrays');
      }
      contractCall = {
        target: c.target as Address,
        value: c.value as string,
        functionSignature: c.function_signature as string,
        args: c.args,
        expectedEvents: (c.expected_events as Record<string, unknown>[]).map((e, j) => {
          const eo = obj(e, `${f}.contract_call.expected_events[${j}]`, ['contract', 'topic0'], ['topics', 'data_hash']);
          return { contract: eo.contract, topic0: eo.topic0, topics: eo.topics, dataHash: eo.data_hash } as ExpectedEventInput;
        }),
        expectedState: (c.expected_state as Record<string, unknown>[]).map((s, j) => {
          const so = obj(s, `${f}.contract_call.expected_state[${j}]`, ['account', 'slot', 'value']);
          return so as unknown as ExpectedStateInput;
        }),
        ...(c.gas_limit !== undefined ? { gasLimit: c.gas_limit as string } : {}),
      };
    }
    if (typeof o.chain_id !== 'string') fail(`${f}.chain_id`, 'must be a decimal string');
    if (typeof o.amount_wei !== 'string') fail(`${f}.amount_wei`, 'must be a decimal string');
    return {
      legId: o.leg_id as string,
      chain: o.chain as string,
      chainId: o.chain_id,
      fromAddress: o.from as Address,
      toAddress: o.to as Address,
      amount: o.amount_wei,
      contractCall,
    };
  });
  if (typeof b0.created_at !== 'number' || typeof b3.expires_at !== 'number') fail('replayData', 'times must be unix seconds');
  eq(b3.created_at, b0.created_at, 'replayData.created_at');
  eq(b2.adi_url, b0.adi_url, 'governanceData.adi_url');
  const rebuilt = buildIntent({
    intentId: b0.intent_id as string,
    adiUrl: b0.adi_url as string,
    keyBook: b2.key_book as string,
    legs: legsIn,
    proofClass: b0.proof_class as string,
    createdAt: b0.created_at,
    expiresAt: b3.expires_at as number,
    nonce: b3.nonce as string,
  });
  // every stored part must equal the rebuild byte for byte (this covers each leg's execution block)
  for (let i = 0; i < 4; i++) {
    if (rebuilt.parts[i] !== texts[i]) {
      if (i === 1) {
        const stored = (b1.legs as Record<string, unknown>[]).map((l) => canonicalJson(l));
        rebuilt.blobs.crossChainData.legs.forEach((l, j) => {
          if (canonicalJson(l) !== stored[j]) {
            const se = (b1.legs as LegBlob[])[j]!.execution ?? ({} as LegBlob['execution']);
            for (const k of ['target', 'value', 'data', 'data_hash', 'execution_commitment'] as const) {
              if (se[k] !== l.execution[k]) fail(`legs[${j}].execution.${k}`, `leg ${l.leg_id}: stored ${String(se[k]).slice(0, 80)} does not match recomputed ${l.execution[k].slice(0, 80)}`);
            }
            fail(`legs[${j}]`, `leg ${l.leg_id} is not in normalized form`);
          }
        });
      }
      fail(`part[${i}]`, 'does not match its normalized form');
    }
  }
  return rebuilt;
}

// ---------------------------------------------------------------------------------------------- per chain

/** The legs of `chainId`, in intent order (leg i of the chain = leaf i of its anchor). */
export function legsForChain(intent: CanonicalIntent, chainId: bigint): IntentLeg[] {
  return intent.legs.filter((l) => l.chainId === chainId);
}

export interface IntentAnchorPlan extends AnchorPlan {
  legs: IntentLeg[];
}

/**
 * The anchor of this intent on one chain: formulas.planAnchor over the chain's legs, bound to the
 * identity's account, ADI, operation id and the ledger transaction that stored the intent.
 */
export function planIntentAnchor(
  intent: CanonicalIntent,
  p: { chainId: bigint; proofAnchor: Address; ledgerTxHash: Hex | string },
): IntentAnchorPlan {
  const legs = legsForChain(intent, p.chainId);
  if (!legs.length) throw new IntentError(`intent has no leg on chain ${p.chainId}`, 'legs');
  const h = p.ledgerTxHash.startsWith('0x') ? p.ledgerTxHash : `0x${p.ledgerTxHash}`;
  if (!HEX32.test(h)) throw new IntentError('ledgerTxHash must be 32 bytes', 'ledgerTxHash');
  const plan = planAnchor({
    chainId: p.chainId,
    anchor: p.proofAnchor,
    account: intent.account,
    adiUrl: intent.adiUrl,
    operationId: intent.operationId,
    ledgerTxHash: h.toLowerCase() as Hex,
    // no leg may execute after the intent expires (ProofAnchor.consume checks it)
    deadline: BigInt(intent.expiresAt),
    legs: legs.map((l) => ({ target: l.target, value: l.value, data: l.data, gasLimit: l.gasLimit })),
  });
  return { ...plan, legs };
}
