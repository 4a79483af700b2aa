/**
 * The proof bundle of one intent: everything needed to check its proof cycle offline, read from the ledger and
 * the chains by reference (the CycleRecord's identifiers), never from the record's own claims alone.
 * Verified by ./verify.ts.
 *
 * Encoding: canonical JSON (formulas.canonicalJson). Integers of the bundle are decimal strings, bytes 0x-hex.
 * Two kinds of objects are embedded verbatim because their hashes depend on them as the ledger returned them:
 * the Accumulate transaction JSON (`ledger.transaction`, `…result.transaction`) and the Accumulate signature
 * JSON (`ledger.signatures`); accumulate.js re-hashes them as they are.
 *
 *   bundle_hash = 0x SHA-256(canonicalJson(bundle without bundle_hash))
 *
 * Every EVM transaction in the bundle (createAnchor, executeComprehensiveProof, each leg's execution) is a
 * ProvenEvmTx: block header (re-hashes to the block hash), raw transaction + transactions-trie proof, receipt
 * (consensus encoding) + receipts-trie proof, and the previous receipt when the index is > 0 (gas used).
 * A leg's expected state is proven with eth_getProof at the execution block (the RPC must still serve that block's
 * state: assemble soon after execution, or against an archive node).
 *
 * Top level: { version, intent, ledger, chains[], bundle_hash }; see ProofBundle.
 */
import { hexToBigInt, sha256, stringToBytes, type Address, type Hex } from 'viem';
import { readValidatorSet } from '../chain/anchor.js';
import type { ChainClients } from '../chain/clients.js';
import { canonicalJson } from '../chain/formulas.js';
import type { LedgerClient, ReceiptInfo } from '../ledger/index.js';
import { createBlockTrieCache, fetchStorageProof, fetchVerifiedBlock, proveReceipt, proveTransaction, verifyStorageProof, type RawBlock } from '../validator/evm-proofs.js';
import { rlpIndexKey, verifyMptProof } from '../validator/mpt.js';
import { parseIntentEntries, planIntentAnchor, type ExpectedState } from './intent.js';
import type { ChainCycleRecord, CycleRecord, LegCycleRecord, QuorumRecord } from './cycle-record.js';

export const BUNDLE_VERSION = 'pgw-proof-bundle/1';

export class BundleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BundleError';
  }
}

export interface BundleDeps {
  ledger: LedgerClient;
  chain(name: string): ChainClients;
}

/** Block header with integer fields as decimal strings (RawBlock without the transaction list). */
export interface BundleBlockHeader {
  hash: Hex;
  parentHash: Hex;
  sha3Uncles: Hex;
  miner: Hex;
  stateRoot: Hex;
  transactionsRoot: Hex;
  receiptsRoot: Hex;
  logsBloom: Hex;
  difficulty: string;
  number: string;
  gasLimit: string;
  gasUsed: string;
  timestamp: string;
  extraData: Hex;
  mixHash: Hex;
  nonce: Hex;
  baseFeePerGas?: string;
  withdrawalsRoot?: Hex;
  blobGasUsed?: string;
  excessBlobGas?: string;
  parentBeaconBlockRoot?: Hex;
  requestsHash?: Hex;
}

/** Header fields that are integers (decimal strings in the bundle, hex quantities over JSON-RPC). */
export const HEADER_INT_FIELDS = ['difficulty', 'number', 'gasLimit', 'gasUsed', 'timestamp', 'baseFeePerGas', 'blobGasUsed', 'excessBlobGas'] as const;
const HEADER_FIELDS = [
  'hash',
  'parentHash',
  'sha3Uncles',
  'miner',
  'stateRoot',
  'transactionsRoot',
  'receiptsRoot',
  'logsBloom',
  'difficulty',
  'number',
  'gasLimit',
  'gasUsed',
  'timestamp',
  'extraData',
  'mixHash',
  'nonce',
  'baseFeePerGas',
  'withdrawalsRoot',
  'blobGasUsed',
  'excessBlobGas',
  'parentBeaconBlockRoot',
  'requestsHash',
] as const;

export interface ProvenEvmTx {
  tx_hash: Hex;
  block: BundleBlockHeader;
  tx_index: string;
  /** EIP-2718 encoding; keccak256(raw) = tx_hash */
  raw: Hex;
  /** transactions-trie nodes from transactionsRoot to the transaction */
  tx_proof: Hex[];
  /** consensus encoding of the receipt (the receipts-trie value) */
  receipt: Hex;
  receipt_proof: Hex[];
  /** the receipt at tx_index - 1 (its cumulative gas gives this transaction's gas used); absent at index 0 */
  prev_receipt?: { receipt: Hex; proof: Hex[] };
}

export interface BundleStateProof {
  account: Address;
  account_proof: Hex[];
  slots: { slot: Hex; value: Hex; proof: Hex[] }[];
}

export interface BundleQuorum {
  message: Hex;
  aggregate_signature: Hex;
  signer_bitmap: string;
  signers: string[];
}

export interface BundleLedgerReceipt {
  account: string;
  start: Hex;
  anchor: Hex;
  entries: { hash: Hex; right: boolean }[];
  local_block?: string;
  local_block_time?: string;
  /** set by ledger-sim: the receipt is not anchored to a real network */
  simulated?: string;
}

export interface BundleLeg {
  leg_id: string;
  leaf_index: string;
  merkle_proof: Hex[];
  execution: ProvenEvmTx;
  /**
   * The leg's expected state after execution, proven (eth_getProof) against the execution block's stateRoot:
   * per account its account proof and per slot the value and its storage proof. Empty for a leg without
   * expectedState. (The events are in the proven receipt.)
   */
  effects: { state: BundleStateProof[] };
  /** the post-execution quorum (observation) */
  observation: BundleQuorum & {
    result_hash: Hex;
    confirmations: string;
    checks: { call_binding: string; expected_events: string; expected_state: string };
  };
  /** the proof_result v2 record as written to the results account */
  result: {
    result_id: Hex;
    results_account: string;
    tx_id: string;
    tx_hash: Hex;
    /** Accumulate transaction JSON, verbatim */
    transaction: unknown;
    /** the record's `key=value` parts as stored */
    parts: string[];
    written_by: string;
    receipt: BundleLedgerReceipt;
  };
}

export interface BundleChain {
  chain: string;
  chain_id: string;
  proof_anchor: Address;
  validator_set: {
    root: Hex;
    public_keys: Hex[];
    powers: string[];
    threshold_numerator: string;
    threshold_denominator: string;
  };
  anchor: {
    anchor_id: Hex;
    commitment_root: Hex;
    operation_id: Hex;
    ledger_tx_hash: Hex;
    leaf_count: string;
  };
  attestation: BundleQuorum;
  create_anchor: ProvenEvmTx;
  prove: ProvenEvmTx;
  legs: BundleLeg[];
}

export interface ProofBundle {
  version: string;
  intent: {
    intent_id: string;
    operation_id: Hex;
    adi_url: string;
    data_account: string;
    /** the four WriteData parts (canonical JSON text) as stored */
    parts: string[];
  };
  ledger: {
    tx_id: string;
    tx_hash: Hex;
    /** Accumulate transaction JSON, verbatim */
    transaction: unknown;
    /** Accumulate signature JSON (with the signature bytes), verbatim */
    signatures: unknown[];
    receipt: BundleLedgerReceipt;
    authority: {
      key_book: string;
      key_page: string;
      key_page_version: string;
      threshold: string;
      signatures: string;
      delegated: string;
    };
    /** the key page as read from the ledger when the bundle was assembled (its keys, for signer membership) */
    key_page: {
      url: string;
      version: string;
      accept_threshold: string;
      key_hashes: Hex[];
      delegates: string[];
    };
  };
  chains: BundleChain[];
  /** legs of the intent that did not complete: empty for a complete proof; a partial one proves the other legs */
  failed_legs: { leg_id: string; chain: string; reason: string }[];
  bundle_hash: Hex;
}

export type UnsealedBundle = Omit<ProofBundle, 'bundle_hash'>;

// ------------------------------------------------------------------------------------------------ hashing

/** 0x SHA-256 of the canonical JSON of the bundle without its bundle_hash. */
export function bundleHash(bundle: UnsealedBundle | ProofBundle): Hex {
  const { bundle_hash: _drop, ...body } = bundle as ProofBundle;
  return sha256(stringToBytes(canonicalJson(body)));
}

/** The bundle with its bundle_hash (re)computed. */
export function sealBundle(bundle: UnsealedBundle | ProofBundle): ProofBundle {
  const { bundle_hash: _drop, ...body } = bundle as ProofBundle;
  return { ...body, bundle_hash: bundleHash(body) };
}

/** The canonical serialization (what verifyBundle checks byte for byte). */
export function serializeBundle(bundle: ProofBundle): string {
  return canonicalJson(bundle);
}

// ------------------------------------------------------------------------------------------------ helpers

const hex0x = (h: string): Hex => (h.startsWith('0x') ? h : `0x${h}`).toLowerCase() as Hex;
const dec = (h: Hex | string | number | bigint): string => (typeof h === 'string' && h.startsWith('0x') ? hexToBigInt(h as Hex) : BigInt(h)).toString();

export function headerToBundle(b: RawBlock): BundleBlockHeader {
  const out: Record<string, string> = {};
  for (const k of HEADER_FIELDS) {
    const v = b[k as keyof RawBlock] as string | undefined | null;
    if (v === undefined || v === null) continue;
    out[k] = (HEADER_INT_FIELDS as readonly string[]).includes(k) ? dec(v) : v.toLowerCase();
  }
  return out as unknown as BundleBlockHeader;
}

function need<T>(v: T | undefined | null, what: string): T {
  if (v === undefined || v === null) throw new BundleError(`cannot assemble the bundle: ${what} is missing from the cycle record`);
  return v;
}

function quorum(q: QuorumRecord): BundleQuorum {
  return {
    message: hex0x(q.message),
    aggregate_signature: hex0x(q.aggregateSignature),
    signer_bitmap: dec(q.signerBitmap),
    signers: q.signers.map((i) => String(i)),
  };
}

function ledgerReceipt(r: ReceiptInfo): BundleLedgerReceipt {
  const out: BundleLedgerReceipt = {
    account: r.account,
    start: hex0x(r.receipt.start),
    anchor: hex0x(r.receipt.anchor),
    entries: r.receipt.entries.map((e) => ({ hash: hex0x(e.hash), right: !!e.right })),
  };
  if (r.receipt.localBlock !== undefined) out.local_block = String(r.receipt.localBlock);
  if (r.receipt.localBlockTime !== undefined) out.local_block_time = String(r.receipt.localBlockTime);
  if (r.simulated) out.simulated = r.simulated;
  return out;
}

/** Tries of recently proven blocks, by block hash: a leg's three transactions, and concurrent intents, share blocks. */
const blockTries = createBlockTrieCache(256);

/** Reads a mined transaction and proves it: header hash, transactions trie, receipts trie (+ the previous receipt). */
export async function proveEvmTx(c: ChainClients, txHash: Hex, what: string): Promise<ProvenEvmTx> {
  const pub = c.public;
  let receipt;
  try {
    receipt = await pub.getTransactionReceipt({ hash: txHash });
  } catch (e) {
    throw new BundleError(`${what}: no receipt for ${txHash} on chain ${c.chain.id}: ${(e as Error).message.split('\n')[0]}`);
  }
  const block = await fetchVerifiedBlock(pub, { hash: receipt.blockHash });
  const t = await proveTransaction(pub, block, txHash, blockTries);
  const r = await proveReceipt(pub, block, t.txIndex, blockTries);
  const value = verifyMptProof(block.receiptsRoot, rlpIndexKey(t.txIndex), r.proof);
  if (!value) throw new BundleError(`${what}: receipt of ${txHash} is not in the receipts trie`);
  const out: ProvenEvmTx = {
    tx_hash: hex0x(txHash),
    block: headerToBundle(block),
    tx_index: String(t.txIndex),
    raw: hex0x(t.raw),
    tx_proof: t.proof.map(hex0x),
    receipt: hex0x(value),
    receipt_proof: r.proof.map(hex0x),
  };
  if (t.txIndex > 0) {
    const p = await proveReceipt(pub, block, t.txIndex - 1, blockTries);
    const pv = verifyMptProof(block.receiptsRoot, rlpIndexKey(t.txIndex - 1), p.proof);
    if (!pv) throw new BundleError(`${what}: previous receipt of ${txHash} is not in the receipts trie`);
    out.prev_receipt = { receipt: hex0x(pv), proof: p.proof.map(hex0x) };
  }
  return out;
}

/** The expected state of a leg proven at the execution block, one entry per account. */
async function stateProofs(c: ChainClients, expected: readonly ExpectedState[], block: BundleBlockHeader): Promise<BundleStateProof[]> {
  const byAccount = new Map<Address, Hex[]>();
  for (const e of expected) byAccount.set(e.account, [...(byAccount.get(e.account) ?? []), e.slot]);
  const out: BundleStateProof[] = [];
  for (const [account, slots] of byAccount) {
    const p = await fetchStorageProof(c.public, { account, slots, blockNumber: BigInt(block.number) });
    const values = verifyStorageProof(block.stateRoot, p);
    out.push({
      account,
      account_proof: p.accountProof.map(hex0x),
      slots: p.slots.map((x, i) => ({ slot: hex0x(x.slot), value: hex0x(values[i]!), proof: x.proof.map(hex0x) })),
    });
  }
  return out;
}

async function resultOf(deps: BundleDeps, leg: LegCycleRecord, where: string): Promise<BundleLeg['result']> {
  const r = need(leg.result, `${where}.result`);
  const st = await deps.ledger.getTransaction(r.txId);
  if (!st.delivered) throw new BundleError(`${where}: proof_result transaction ${r.txId} is ${st.status}, not delivered`);
  const parts: string[] = (st.transaction?.body?.entry?.data ?? []).map((p: string) => Buffer.from(String(p).replace(/^0x/, ''), 'hex').toString('utf8'));
  const receipt = await deps.ledger.getReceipt(r.resultsAccount, st.txHash);
  return {
    result_id: hex0x(r.resultId),
    results_account: r.resultsAccount,
    tx_id: st.txId,
    tx_hash: hex0x(st.txHash),
    transaction: st.transaction,
    parts,
    written_by: String(r.writtenBy),
    receipt: ledgerReceipt(receipt),
  };
}

async function chainOf(deps: BundleDeps, c: ChainCycleRecord, intent: ReturnType<typeof parseIntentEntries>, ledgerTxHash: Hex): Promise<BundleChain> {
  const where = `chain ${c.chain}`;
  const clients = deps.chain(c.chain);
  if (String(clients.chain.id) !== String(c.chainId)) throw new BundleError(`${where}: client is for chain id ${clients.chain.id}, the record says ${c.chainId}`);
  const plan = planIntentAnchor(intent, { chainId: BigInt(c.chainId), proofAnchor: c.proofAnchor, ledgerTxHash });
  if (c.anchorId && c.anchorId.toLowerCase() !== plan.anchorId.toLowerCase()) {
    throw new BundleError(`${where}: recorded anchor id ${c.anchorId} is not the intent's anchor ${plan.anchorId}`);
  }
  const set = await readValidatorSet(clients, c.proofAnchor);
  const att = need(c.attestation, `${where}.attestation`);
  const legs: BundleLeg[] = [];
  for (const l of c.legs) {
    const lw = `${where} leg ${l.legId}`;
    const idx = l.leafIndex;
    const pl = plan.legs[idx];
    if (!pl || pl.legId !== l.legId) throw new BundleError(`${lw}: leaf ${idx} of the anchor is ${pl?.legId ?? 'absent'}`);
    const obs = need(l.observation, `${lw}.observation`);
    const execution = await proveEvmTx(clients, need(l.executionTx, `${lw}.executionTx`), `${lw} execution`);
    legs.push({
      leg_id: l.legId,
      leaf_index: String(idx),
      merkle_proof: plan.proofs[idx]!.merkleProof.map(hex0x),
      execution,
      effects: { state: await stateProofs(clients, pl.expectedState, execution.block) },
      observation: {
        ...quorum(obs),
        result_hash: hex0x(obs.resultHash),
        confirmations: String(obs.confirmations),
        checks: {
          call_binding: obs.checks.callBinding,
          expected_events: String(obs.checks.expectedEvents),
          expected_state: String(obs.checks.expectedState),
        },
      },
      result: await resultOf(deps, l, lw),
    });
  }
  return {
    chain: c.chain,
    chain_id: dec(c.chainId),
    proof_anchor: c.proofAnchor,
    validator_set: {
      root: hex0x(set.root),
      public_keys: set.publicKeys.map(hex0x),
      powers: set.powers.map((p) => p.toString()),
      threshold_numerator: set.thresholdNum.toString(),
      threshold_denominator: set.thresholdDen.toString(),
    },
    anchor: {
      anchor_id: plan.anchorId,
      commitment_root: plan.commitmentRoot,
      operation_id: plan.operationId,
      ledger_tx_hash: plan.ledgerTxHash,
      leaf_count: plan.leafCount.toString(),
    },
    attestation: quorum(att),
    create_anchor: await proveEvmTx(clients, need(c.createAnchorTx, `${where}.createAnchorTx`), `${where} createAnchor`),
    prove: await proveEvmTx(clients, need(c.proveTx, `${where}.proveTx`), `${where} executeComprehensiveProof`),
    legs,
  };
}

// ------------------------------------------------------------------------------------------------ assemble

/**
 * Reads the intent transaction (with its signatures), its Merkle receipt, and per chain the validator set, the
 * anchor transactions and per leg the execution (with inclusion proofs) and the proof_result record, and returns
 * the sealed bundle. Throws BundleError naming what is missing or inconsistent.
 */
export async function assembleBundle(deps: BundleDeps, record: CycleRecord): Promise<ProofBundle> {
  const txId = need(record.ledgerTxId, 'ledgerTxId');
  const st = await deps.ledger.getTransaction(txId);
  if (!st.delivered) throw new BundleError(`intent transaction ${txId} is ${st.status}, not delivered`);
  if (record.ledgerTxHash && record.ledgerTxHash.replace(/^0x/, '').toLowerCase() !== st.txHash) {
    throw new BundleError(`intent transaction ${txId} has hash ${st.txHash}, the record says ${record.ledgerTxHash}`);
  }
  const stored: string[] = st.transaction?.body?.entry?.data ?? [];
  const intent = parseIntentEntries(stored);
  if (intent.intentId !== record.intentId) throw new BundleError(`intent transaction ${txId} holds intent ${intent.intentId}, not ${record.intentId}`);
  const ledgerTxHash = hex0x(st.txHash);
  const receipt = await deps.ledger.getReceipt(record.dataAccountUrl, st.txHash);
  if (!record.chains.length) throw new BundleError('cannot assemble the bundle: the cycle record has no chains');
  const authority = need(record.chains[0]!.attestation?.authority, 'chains[0].attestation.authority');
  const page = await deps.ledger.queryKeyPage(authority.keyPage);
  const chains: BundleChain[] = [];
  for (const c of record.chains) chains.push(await chainOf(deps, c, intent, ledgerTxHash));
  return sealBundle({
    version: BUNDLE_VERSION,
    intent: {
      intent_id: intent.intentId,
      operation_id: intent.operationId,
      adi_url: intent.adiUrl,
      data_account: record.dataAccountUrl,
      parts: [...intent.parts],
    },
    ledger: {
      tx_id: st.txId,
      tx_hash: ledgerTxHash,
      transaction: st.transaction,
      signatures: st.signatures.map((s) => s.raw),
      receipt: ledgerReceipt(receipt),
      authority: {
        key_book: authority.keyBook,
        key_page: authority.keyPage,
        key_page_version: String(authority.keyPageVersion),
        threshold: String(authority.threshold),
        signatures: String(authority.signatures),
        delegated: String(authority.delegated ?? 0),
      },
      key_page: {
        url: page.url,
        version: String(page.version),
        accept_threshold: String(page.acceptThreshold),
        key_hashes: page.keys.filter((k) => k.publicKeyHash).map((k) => hex0x(k.publicKeyHash!)),
        delegates: page.keys.filter((k) => k.delegate).map((k) => k.delegate!),
      },
    },
    chains,
    failed_legs: (record.failedLegs ?? []).map((l) => ({ leg_id: l.legId, chain: l.chain, reason: l.reason })),
  });
}
