/**
 * The canonical intent: what an identity signs on the ledger, what the gateway anchors and what every validator
 * re-derives on its own. The gateway, the validators, the offline verifier and the tests all import this module.
 *
 * Shape (the 4-blob model): an intent is four JSON blobs, each stored as one part of a double-hash WriteData entry on
 * the identity's data account (`acc://<adi>/data`), header memo INTENT_MEMO:
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
 *
 * This file holds the intent's constants and types; build.ts builds it, parse.ts parses the stored parts,
 * anchor.ts plans its anchor per chain, request.ts maps the API's request shapes onto its input.
 */
import type { Address, Hex } from 'viem';
import type { ExpectedLog } from '../../chain/effects/events.js';

export const INTENT_MEMO = 'PGW_INTENT';
export const INTENT_KIND = 'PGW_INTENT';
export const INTENT_VERSION = '1';
export const INTENT_PROTOCOL = 'PGW';
/** Largest accepted part (bytes) when parsing. */
export const MAX_INTENT_PART_BYTES = 64 * 1024;

export class IntentError extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
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

/** An expected event in the intent's canonical form (the shape the effect checks take). */
export type ExpectedEvent = ExpectedLog;
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
