/**
 * Assembles the proof bundle of one intent (./bundle.ts) from its CycleRecord: everything is read from the ledger
 * and the chains by reference (the record's identifiers), never from the record's own claims alone, and the result
 * is checked against the bundle schema before it is returned.
 */
import { getAddress, hexToBigInt, type Address, type Hex } from 'viem';
import { readValidatorSet } from '../chain/anchor.js';
import type { ChainClients } from '../chain/clients.js';
import {
  createBlockTrieCache,
  fetchStorageProof,
  fetchVerifiedBlock,
  proveReceipt,
  proveTransaction,
  verifyStorageProof,
  type RawBlock,
} from '../chain/effects/evm-proofs.js';
import { rlpIndexKey, verifyMptProof } from '../chain/effects/mpt.js';
import { canonicalJson, compareCodePoints } from '../chain/formulas.js';
import type { LedgerClient, ReceiptInfo } from '../ledger/index.js';
import type { ChainCycleRecord, CycleRecord, LegCycleRecord, QuorumRecord } from '../protocol/cycle-record.js';
import { type IntentAnchorPlan, parseIntentEntries, planIntentAnchor, type ExpectedState } from '../protocol/intent/index.js';
import {
  accumulateSignatureJson,
  accumulateTransactionJson,
  BUNDLE_VERSION,
  bundleSchemaProblems,
  HEADER_FIELDS,
  HEADER_INT_FIELDS,
  HEADER_NUMBER_FIELDS,
  sealBundle,
  type BundleBlockHeader,
  type BundleChain,
  type BundleLedgerReceipt,
  type BundleLeg,
  type BundleQuorum,
  type BundleStateProof,
  type ProofBundle,
  type ProvenEvmTx,
} from './bundle.js';

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

const hex0x = (h: string): Hex => (h.startsWith('0x') ? h : `0x${h}`).toLowerCase() as Hex;
/** An Accumulate URL of the bundle's own fields, in its one form (lowercase: the ledger may return another case). */
const url = (u: string): string => u.toLowerCase();
/** The items in ascending code-point order of `key`, each once (the order of the bundle's sorted lists). */
function sortedUnique<T>(items: readonly T[], key: (v: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const v of items) if (!byKey.has(key(v))) byKey.set(key(v), v);
  return [...byKey].sort(([a], [b]) => compareCodePoints(a, b)).map(([, v]) => v);
}
const big = (h: Hex | string | number | bigint): bigint => (typeof h === 'string' && h.startsWith('0x') ? hexToBigInt(h as Hex) : BigInt(h));
/** an integer that may exceed 2^53 (wei, uint256 contract values): a decimal string */
const dec = (h: Hex | string | number | bigint): string => big(h).toString();
/** a count, index, version, threshold, block number or gas: a JSON number, so it must be a safe integer */
function int(h: Hex | string | number | bigint, what: string): number {
  const v = big(h);
  if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw new BundleError(`cannot assemble the bundle: ${what} ${v} is not a safe integer`);
  return Number(v);
}
/** a ledger hash as the bundle writes it: 64 lowercase hex without 0x */
const ledgerHash = (h: string): string => h.replace(/^0x/i, '').toLowerCase();

export function headerToBundle(b: RawBlock): BundleBlockHeader {
  const out: Record<string, string | number> = {};
  for (const k of HEADER_FIELDS) {
    const v = b[k as keyof RawBlock] as string | undefined | null;
    if (v === undefined || v === null) continue;
    if ((HEADER_NUMBER_FIELDS as readonly string[]).includes(k)) out[k] = int(v, `block ${k}`);
    else out[k] = (HEADER_INT_FIELDS as readonly string[]).includes(k) ? dec(v) : v.toLowerCase();
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
    signers: q.signers.map((i) => int(i, 'signer index')),
  };
}

function ledgerReceipt(r: ReceiptInfo): BundleLedgerReceipt {
  const out: BundleLedgerReceipt = {
    account: url(r.account),
    start: ledgerHash(r.receipt.start),
    anchor: ledgerHash(r.receipt.anchor),
    entries: r.receipt.entries.map((e) => ({ hash: ledgerHash(e.hash), right: !!e.right })),
  };
  if (r.receipt.localBlock !== undefined) out.local_block = int(r.receipt.localBlock, 'receipt local block');
  if (r.receipt.localBlockTime !== undefined) out.local_block_time = String(r.receipt.localBlockTime);
  if (r.simulated) out.simulated = r.simulated;
  return out;
}

/** Tries of recently proven blocks, by block hash: a leg's three transactions, and concurrent intents, share blocks. */
const blockTries = createBlockTrieCache(256);

/** Reads a mined transaction and proves it: header hash, transactions trie, receipts trie (+ the previous receipt). */
export async function proveEvmTx(c: ChainClients, txHash: Hex, what: string): Promise<ProvenEvmTx> {
  const pub = c.public;
  let receipt: Awaited<ReturnType<typeof pub.getTransactionReceipt>>;
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
    tx_index: t.txIndex,
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
      account: getAddress(account),
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
    results_account: url(r.resultsAccount),
    tx_id: url(st.txId),
    tx_hash: ledgerHash(st.txHash),
    transaction: accumulateTransactionJson(st.transaction),
    parts,
    written_by: int(r.writtenBy, 'written_by'),
    receipt: ledgerReceipt(receipt),
  };
}

/**
 * A batched intent's view of its batch anchor as its cycle recorded it: the batch's anchor fields, and each leg at
 * its leaf of the batch with the Merkle path the batch gave it (the verifier checks both against the root).
 */
function batchedView(own: IntentAnchorPlan, c: ChainCycleRecord, where: string): IntentAnchorPlan {
  const b = c.batch!;
  return {
    ...own,
    anchorId: need(c.anchorId, `${where}.anchorId`),
    commitmentRoot: need(c.commitmentRoot, `${where}.commitmentRoot`),
    operationId: need(b.operationId, `${where}.batch.operationId`),
    ledgerTxHash: need(b.ledgerTxHash, `${where}.batch.ledgerTxHash`),
    leafCount: BigInt(need(c.leafCount, `${where}.leafCount`)),
    proofs: own.legs.map((leg, k) => {
      const l = c.legs.find((x) => x.legId === leg.legId);
      return { ...own.proofs[k]!, leafIndex: BigInt(l?.leafIndex ?? -1), merkleProof: l?.merkleProof ?? [] };
    }),
  };
}

async function chainOf(deps: BundleDeps, c: ChainCycleRecord, intent: ReturnType<typeof parseIntentEntries>, ledgerTxHash: Hex): Promise<BundleChain> {
  const where = `chain ${c.chain}`;
  const clients = deps.chain(c.chain);
  if (String(clients.chain.id) !== String(c.chainId))
    throw new BundleError(`${where}: client is for chain id ${clients.chain.id}, the record says ${c.chainId}`);
  const own = planIntentAnchor(intent, { chainId: BigInt(c.chainId), proofAnchor: c.proofAnchor, ledgerTxHash });
  const plan = c.batch?.anchorId ? batchedView(own, c, where) : own;
  if (c.anchorId && c.anchorId.toLowerCase() !== plan.anchorId.toLowerCase()) {
    throw new BundleError(`${where}: recorded anchor id ${c.anchorId} is not the intent's anchor ${plan.anchorId}`);
  }
  const set = await readValidatorSet(clients, c.proofAnchor);
  const att = need(c.attestation, `${where}.attestation`);
  const legs: BundleLeg[] = [];
  for (const l of [...c.legs].sort((x, y) => x.leafIndex - y.leafIndex)) {
    const lw = `${where} leg ${l.legId}`;
    const idx = l.leafIndex;
    const k = plan.proofs.findIndex((p) => Number(p.leafIndex) === idx);
    const pl = plan.legs[k];
    if (!pl || pl.legId !== l.legId) throw new BundleError(`${lw}: leaf ${idx} of the anchor is ${pl?.legId ?? 'absent'}`);
    const obs = need(l.observation, `${lw}.observation`);
    const execution = await proveEvmTx(clients, need(l.executionTx, `${lw}.executionTx`), `${lw} execution`);
    legs.push({
      leg_id: l.legId,
      leaf_index: idx,
      merkle_proof: plan.proofs[k]!.merkleProof.map(hex0x),
      execution,
      effects: { state: await stateProofs(clients, pl.expectedState, execution.block) },
      observation: {
        ...quorum(obs),
        result_hash: hex0x(obs.resultHash),
        confirmations: int(obs.confirmations, 'confirmations'),
        checks: {
          call_binding: obs.checks.callBinding,
          expected_events: int(obs.checks.expectedEvents, 'expected_events'),
          expected_state: int(obs.checks.expectedState, 'expected_state'),
        },
      },
      result: await resultOf(deps, l, lw),
    });
  }
  return {
    chain: c.chain,
    evm_chain_id: int(c.chainId, 'evm_chain_id'),
    proof_anchor: getAddress(c.proofAnchor),
    validator_set: {
      root: hex0x(set.root),
      public_keys: set.publicKeys.map(hex0x),
      powers: set.powers.map((p) => p.toString()),
      threshold_numerator: int(set.thresholdNum, 'threshold_numerator'),
      threshold_denominator: int(set.thresholdDen, 'threshold_denominator'),
    },
    anchor: {
      anchor_id: plan.anchorId,
      commitment_root: plan.commitmentRoot,
      operation_id: plan.operationId,
      tx_hash: ledgerHash(plan.ledgerTxHash),
      leaf_count: int(plan.leafCount, 'leaf_count'),
    },
    ...(c.batch?.anchorId
      ? {
          batch: {
            id: c.batch.id,
            index: int(
              c.batch.members!.findIndex((m) => m.operationId.toLowerCase() === intent.operationId.toLowerCase()),
              'batch index',
            ),
            members: c.batch.members!.map((m) => ({ operation_id: hex0x(m.operationId), tx_hash: ledgerHash(m.ledgerTxHash) })),
          },
        }
      : {}),
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
  for (const c of sortedUnique(record.chains, (x) => x.chain)) chains.push(await chainOf(deps, c, intent, ledgerTxHash));
  if (chains.length !== record.chains.length) throw new BundleError('cannot assemble the bundle: the cycle record lists a chain twice');
  const bundle = sealBundle({
    version: BUNDLE_VERSION,
    intent: {
      intent_id: intent.intentId,
      operation_id: intent.operationId,
      adi_url: intent.adiUrl,
      data_account: url(record.dataAccountUrl),
      parts: [...intent.parts],
    },
    ledger: {
      tx_id: url(st.txId),
      tx_hash: ledgerHash(st.txHash),
      transaction: accumulateTransactionJson(st.transaction),
      signatures: sortedUnique(
        st.signatures.map((s) => accumulateSignatureJson(s.raw)),
        (s) => canonicalJson(s),
      ),
      receipt: ledgerReceipt(receipt),
      authority: {
        key_book: url(authority.keyBook),
        key_page: url(authority.keyPage),
        key_page_version: int(authority.keyPageVersion, 'key_page_version'),
        threshold: int(authority.threshold, 'threshold'),
        signatures: int(authority.signatures, 'signatures'),
        delegated: int(authority.delegated ?? 0, 'delegated'),
      },
      key_page: {
        url: url(page.url),
        version: int(page.version, 'key page version'),
        accept_threshold: int(page.acceptThreshold, 'accept_threshold'),
        key_hashes: sortedUnique(
          page.keys.filter((k) => k.publicKeyHash).map((k) => ledgerHash(k.publicKeyHash!)),
          (h) => h,
        ),
        delegates: sortedUnique(
          page.keys.filter((k) => k.delegate).map((k) => url(k.delegate!)),
          (u) => u,
        ),
      },
    },
    chains,
    failed_legs: [...(record.failedLegs ?? [])]
      .sort((x, y) => compareCodePoints(x.legId, y.legId))
      .map((l) => ({ leg_id: l.legId, chain: l.chain, reason: l.reason })),
  });
  // the verifier refuses a bundle not of this shape: a builder that drifted from it fails here, not there
  const problems = bundleSchemaProblems(bundle);
  if (problems.length) throw new BundleError(`assembled bundle is not of the bundle schema: ${problems.slice(0, 5).join('; ')}`);
  return bundle;
}
