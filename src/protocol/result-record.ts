/**
 * The proof_result record, version 2: one double-hash data entry on the protocol ADI's execution-results account,
 * each part an ASCII `key=value` line in the fixed order of PROOF_RESULT_FIELDS. The record carries everything needed to recompute the result hash
 * (formulas.resultHash) and the signed result message, and to check the aggregate BLS signature.
 */
import { encodeAbiParameters, keccak256, type Address, type Hex } from 'viem';
import { resultHash, resultMessage, type ExecutionResult } from '../chain/formulas.js';

export const PROOF_RESULT_ENTRY_TYPE = 'pgw:proof_result:v2';
export const PROOF_RESULT_MEMO = 'PGW_PROOF_RESULT';
export const PROOF_RESULT_VERSION = '2.0';
export const PROOF_RESULT_FORMAT = 'pgw_proof_v2';

export const PROOF_RESULT_FIELDS = [
  'entry_type',
  'version',
  'format',
  'result_id',
  'intent_id',
  'intent_tx_id',
  'intent_tx_hash',
  'operation_id',
  'anchor_contract',
  'anchor_id',
  'leaf_index',
  'leg_id',
  'execution_commitment',
  'chain_name',
  'chain_id',
  'tx_hash',
  'block_number',
  'block_hash',
  'block_timestamp',
  'tx_index',
  'success',
  'gas_used',
  'events_hash',
  'event_count',
  'expected_events_verified',
  'expected_state_verified',
  'transactions_root',
  'receipts_root',
  'state_root',
  'confirmation_blocks',
  'result_hash',
  'attestation_hash',
  'attestation_message_hash',
  'validator_set_root',
  'validator_bitfield',
  'validator_count',
  'signed_power',
  'total_power',
  'threshold_numerator',
  'threshold_denominator',
  'threshold_met',
  'aggregate_signature',
  'written_by',
] as const;

export type ProofResultField = (typeof PROOF_RESULT_FIELDS)[number];
export type ProofResultRecord = Record<ProofResultField, string>;

export function encodeProofResult(r: ProofResultRecord): string[] {
  return PROOF_RESULT_FIELDS.map((k) => {
    const v = r[k];
    if (typeof v !== 'string' || /[\n=]/.test(v) || !/^[\x20-\x7e]*$/.test(v)) throw new Error(`proof_result: bad value for ${k}`);
    return `${k}=${v}`;
  });
}

/** Parses the parts of a proof_result entry (strings or hex of the bytes); undefined if it is not one. */
export function parseProofResult(parts: readonly string[], hex = false): ProofResultRecord | undefined {
  const lines = parts.map((p) => (hex ? Buffer.from(p.replace(/^0x/, ''), 'hex').toString('utf8') : p));
  if (lines[0] !== `entry_type=${PROOF_RESULT_ENTRY_TYPE}`) return undefined;
  const out: Partial<ProofResultRecord> = {};
  for (const l of lines) {
    const i = l.indexOf('=');
    if (i < 0) return undefined;
    const k = l.slice(0, i) as ProofResultField;
    if ((PROOF_RESULT_FIELDS as readonly string[]).includes(k)) out[k] = l.slice(i + 1);
  }
  for (const k of PROOF_RESULT_FIELDS) if (out[k] === undefined) return undefined;
  return out as ProofResultRecord;
}

/** The execution result a record states, for formulas.resultHash. */
export function recordExecutionResult(r: ProofResultRecord): ExecutionResult {
  return {
    chainId: BigInt(r.chain_id),
    txHash: r.tx_hash as Hex,
    blockNumber: BigInt(r.block_number),
    blockHash: r.block_hash as Hex,
    transactionsRoot: r.transactions_root as Hex,
    receiptsRoot: r.receipts_root as Hex,
    stateRoot: r.state_root as Hex,
    status: r.success === 'true' ? 1 : 0,
    txIndex: BigInt(r.tx_index),
    gasUsed: BigInt(r.gas_used),
    eventsHash: r.events_hash as Hex,
    executionCommitment: r.execution_commitment as Hex,
  };
}

/** Recomputes result hash and signed message from a record's own fields. */
export function recomputeProofResult(r: ProofResultRecord): { resultHash: Hex; message: Hex } {
  const rh = resultHash(recordExecutionResult(r));
  return {
    resultHash: rh,
    message: resultMessage({
      chainId: BigInt(r.chain_id),
      anchor: r.anchor_contract as Address,
      anchorId: r.anchor_id as Hex,
      leafIndex: BigInt(r.leaf_index),
      resultHash: rh,
      validatorSetRoot: r.validator_set_root as Hex,
    }),
  };
}

/** Identity of one result record: one per (anchor, leaf). */
export function resultIdOf(anchorId: Hex | string, leafIndex: string | number | bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [anchorId as Hex, BigInt(leafIndex)]));
}
