/** The result-hash section of src/chain/formulas.ts against an independent word-by-word encoding, and the record. */
import { describe, expect, it } from 'vitest';
import { concatHex, keccak256, numberToHex, stringToHex, type Hex } from 'viem';
import { RESULT_DOMAIN, eventsHash, resultHash, resultMessage, type ExecutionResult } from '../../src/chain/formulas.js';
import { PROOF_RESULT_FIELDS, encodeProofResult, parseProofResult, recomputeProofResult, type ProofResultRecord } from '../../src/protocol/result-record.js';

const h = (s: string) => keccak256(stringToHex(s));
const r: ExecutionResult = {
  chainId: 11155111n,
  txHash: h('tx'),
  blockNumber: 1234n,
  blockHash: h('block'),
  transactionsRoot: h('txroot'),
  receiptsRoot: h('rroot'),
  stateRoot: h('sroot'),
  status: 1,
  txIndex: 3n,
  gasUsed: 51234n,
  eventsHash: h('events'),
  executionCommitment: h('ec'),
};

describe('result hash formulas', () => {
  it('resultHash = keccak256 of the 13 static ABI words', () => {
    const w = (x: bigint | number) => numberToHex(x, { size: 32 });
    const words: Hex[] = [
      RESULT_DOMAIN.result,
      w(r.chainId),
      r.txHash,
      w(r.blockNumber),
      r.blockHash,
      r.transactionsRoot,
      r.receiptsRoot,
      r.stateRoot,
      w(r.status),
      w(r.txIndex),
      w(r.gasUsed),
      r.eventsHash,
      r.executionCommitment,
    ];
    expect(resultHash(r)).toBe(keccak256(concatHex(words)));
    expect(RESULT_DOMAIN.result).toBe(stringToHex('pgw:result:v1', { size: 32 }));
    expect(resultHash({ ...r, status: 0 })).not.toBe(resultHash(r));
  });

  it('eventsHash binds every log field and the order', () => {
    const a = { address: '0x1111111111111111111111111111111111111111' as const, topics: [h('t0'), h('t1')], data: '0x1234' as Hex };
    const b = { address: '0x2222222222222222222222222222222222222222' as const, topics: [], data: '0x' as Hex };
    const base = eventsHash([a, b]);
    expect(eventsHash([b, a])).not.toBe(base);
    expect(eventsHash([{ ...a, data: '0x1235' }, b])).not.toBe(base);
    expect(eventsHash([{ ...a, topics: [h('t0')] }, b])).not.toBe(base);
    expect(eventsHash([])).toBe(keccak256(concatHex([RESULT_DOMAIN.events, numberToHex(64, { size: 32 }), numberToHex(0, { size: 32 })])));
  });

  it('proof_result v2 record: encode, parse, recompute', () => {
    const rec = Object.fromEntries(PROOF_RESULT_FIELDS.map((k) => [k, '0'])) as ProofResultRecord;
    Object.assign(rec, {
      entry_type: 'pgw:proof_result:v2',
      chain_id: r.chainId.toString(),
      tx_hash: r.txHash,
      block_number: '1234',
      block_hash: r.blockHash,
      transactions_root: r.transactionsRoot,
      receipts_root: r.receiptsRoot,
      state_root: r.stateRoot,
      success: 'true',
      tx_index: '3',
      gas_used: '51234',
      events_hash: r.eventsHash,
      execution_commitment: r.executionCommitment,
      anchor_contract: '0x4444444444444444444444444444444444444444',
      anchor_id: h('anchor'),
      leaf_index: '1',
      validator_set_root: h('set'),
    });
    const parts = encodeProofResult(rec);
    expect(parts[0]).toBe('entry_type=pgw:proof_result:v2');
    const back = parseProofResult(
      parts.map((p) => Buffer.from(p).toString('hex')),
      true,
    )!;
    expect(back).toEqual(rec);
    const { resultHash: rh, message } = recomputeProofResult(back);
    expect(rh).toBe(resultHash(r));
    expect(message).toBe(
      resultMessage({
        chainId: r.chainId,
        anchor: rec.anchor_contract as Hex,
        anchorId: rec.anchor_id as Hex,
        leafIndex: 1n,
        resultHash: rh,
        validatorSetRoot: rec.validator_set_root as Hex,
      }),
    );
    expect(parseProofResult(['entry_type=other'])).toBeUndefined();
    expect(() => encodeProofResult({ ...rec, intent_id: 'a\nb' })).toThrow(/intent_id/);
  });
});
