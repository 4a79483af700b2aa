/**
 * The evidence a bundle carries, checked on its own: an EVM transaction proven by its block header and the
 * transactions and receipts tries; an Accumulate WriteData transaction re-hashed; a ledger receipt folded.
 */
import { core } from 'accumulate.js';
import { bytesToHex, hexToBytes, keccak256, numberToHex, parseTransaction, type Hex } from 'viem';
import { decodeReceipt, headerHash, type RawBlock } from '../../chain/effects/evm-proofs.js';
import { rlpIndexKey, verifyMptProof } from '../../chain/effects/mpt.js';
import type { ResultLog } from '../../chain/formulas.js';
import { transactionHash } from '../../ledger/signing.js';
import { verifyReceipt } from '../../ledger/receipt.js';
import { HEADER_INT_FIELDS, type BundleLedgerReceipt, type ProvenEvmTx } from '../bundle.js';
import { CheckFailed, ensure, eq, EXACT, index, int, lc, ledger0x, uint } from './checks.js';

/** What a proven EVM transaction establishes. */
export interface ProvenFacts {
  tx: ReturnType<typeof parseTransaction>;
  logs: ResultLog[];
  gasUsed: bigint;
  txIndex: number;
  blockNumber: bigint;
}

function rawBlock(p: ProvenEvmTx): RawBlock {
  const h = p.block as unknown as Record<string, string | number | undefined>;
  const out: Record<string, unknown> = { transactions: [] };
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    // integers: numbers (block number, gas, time) or decimal strings (difficulty, base fee), hex quantities in the header
    if ((HEADER_INT_FIELDS as readonly string[]).includes(k))
      out[k] = numberToHex(typeof v === 'number' ? BigInt(int(v, `block.${k}`)) : uint(v, `block.${k}`));
    else out[k] = v;
  }
  return out as unknown as RawBlock;
}

/** Header hash, transactions trie, receipts trie (+ previous receipt), status 1. Throws naming what failed. */
export function checkProvenTx(p: ProvenEvmTx, what: string): ProvenFacts {
  ensure(p && typeof p === 'object' && p.block, `${what}: missing`);
  const block = rawBlock(p);
  const hh = headerHash(block);
  eq(hh, p.block.hash, `${what}: block header hash`);
  const txIndex = index(p.tx_index, `${what}.tx_index`);
  const key = rlpIndexKey(txIndex);
  const txValue = verifyMptProof(block.transactionsRoot, key, p.tx_proof, EXACT);
  ensure(txValue !== null, `${what}: transactions-trie proof shows no transaction at index ${txIndex}`);
  eq(txValue, p.raw, `${what}: transaction proven at index ${txIndex}`);
  eq(keccak256(p.raw), p.tx_hash, `${what}: keccak256(raw transaction)`);
  const rv = verifyMptProof(block.receiptsRoot, key, p.receipt_proof, EXACT);
  ensure(rv !== null, `${what}: receipts-trie proof shows no receipt at index ${txIndex}`);
  eq(rv, p.receipt, `${what}: receipt proven at index ${txIndex}`);
  const r = decodeReceipt(p.receipt);
  ensure(r.status === 1, `${what}: receipt status is ${r.status}, not 1`);
  let prevCum = 0n;
  if (txIndex > 0) {
    ensure(p.prev_receipt, `${what}: previous receipt (index ${txIndex - 1}) missing`);
    const pv = verifyMptProof(block.receiptsRoot, rlpIndexKey(txIndex - 1), p.prev_receipt.proof, EXACT);
    ensure(pv !== null, `${what}: receipts-trie proof shows no receipt at index ${txIndex - 1}`);
    eq(pv, p.prev_receipt.receipt, `${what}: previous receipt`);
    prevCum = decodeReceipt(p.prev_receipt.receipt).cumulativeGasUsed;
  } else ensure(p.prev_receipt === undefined, `${what}: previous receipt given for index 0`);
  return { tx: parseTransaction(p.raw), logs: r.logs, gasUsed: r.cumulativeGasUsed - prevCum, txIndex, blockNumber: BigInt(block.number) };
}

/** A ledger receipt folding from `txHash` (a ledger hash, bare hex as the bundle writes it). */
export function checkLedgerReceipt(r: BundleLedgerReceipt, txHash: string, account: string, what: string): string {
  ensure(r && Array.isArray(r.entries), `${what}: missing`);
  eq(r.start, txHash, `${what}: receipt start`);
  eq(r.account, account, `${what}: receipt account`);
  ensure(verifyReceipt({ start: r.start, anchor: r.anchor, entries: r.entries }), `${what}: entries do not fold from ${r.start} to anchor ${r.anchor}`);
  return `${r.entries.length} entries fold to anchor ${r.anchor}${r.simulated ? ` (simulated: ${r.simulated})` : ''}`;
}

/**
 * The Accumulate transaction re-hashed with accumulate.js to `txHash` (a ledger hash, bare hex as the bundle writes
 * it); a WriteData double-hash entry; returns its parts as text.
 */
export function ledgerWriteData(txJson: unknown, txHash: string, txId: string, what: string): { parts: string[]; memo: unknown; principal: string } {
  let h: Hex;
  try {
    h = bytesToHex(transactionHash(new core.Transaction(txJson as core.TransactionArgs)));
  } catch (e) {
    throw new CheckFailed(`${what}: accumulate.js cannot hash the transaction: ${(e as Error).message}`);
  }
  eq(h, ledger0x(txHash), `${what}: transaction hash`);
  const t = txJson as { header?: { principal?: string; memo?: unknown }; body?: { type?: string; entry?: { type?: string; data?: unknown[] } } };
  const principal = String(t.header?.principal ?? '');
  ensure(lc(txId) === `acc://${h.slice(2)}@${lc(principal).replace(/^acc:\/\//, '')}`, `${what}: tx id ${txId} is not ${txHash}@${principal}`);
  ensure(t.body?.type === 'writeData', `${what}: transaction is a ${String(t.body?.type)}, not writeData`);
  ensure(t.body.entry?.type === 'doubleHash', `${what}: data entry is ${String(t.body.entry?.type)}, not doubleHash`);
  const data = t.body.entry.data;
  ensure(Array.isArray(data), `${what}: entry has no data`);
  const parts = data.map((p, i) => {
    ensure(typeof p === 'string' && /^(0x)?([0-9a-fA-F]{2})*$/.test(p), `${what}: entry part ${i} is not hex`);
    return new TextDecoder('utf-8', { fatal: true }).decode(hexToBytes(`0x${p.replace(/^0x/, '')}`));
  });
  return { parts, memo: t.header?.memo, principal };
}
