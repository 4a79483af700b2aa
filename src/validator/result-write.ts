/**
 * The result record: on a post-execution quorum (its aggregate checked here against this node's own observation),
 * the proof_result v2 record goes to the protocol ADI's execution-results data account, once per (anchor, leaf),
 * unless this node or another already wrote a record of this very result.
 */
import { bytesToHex, type Hex } from 'viem';
import { blsAggregatePublicKeys, blsVerify } from '../chain/bls.js';
import { fetchVerifiedBlock } from '../chain/effects/evm-proofs.js';
import { anchorMessage, meetsThreshold } from '../chain/formulas.js';
import type { ChainEntry } from '../chain/registry.js';
import { dataEntryHash, signatureMessageId, tx as ledgerTx } from '../ledger/index.js';
import type { IntentAnchorPlan } from '../protocol/intent/index.js';
import {
  PROOF_RESULT_ENTRY_TYPE,
  PROOF_RESULT_FIELDS,
  PROOF_RESULT_FORMAT,
  PROOF_RESULT_MEMO,
  PROOF_RESULT_VERSION,
  encodeProofResult,
  resultIdOf,
  type ProofResultRecord,
} from '../protocol/result-record.js';
import type { ObserveResponse, WriteResultRequest, WriteResultResponse } from '../protocol/validator-wire.js';
import type { LoadedIntent, NodeContext, ValidatorSetView } from './context.js';
import type { BatchPlanning } from './batch.js';
import type { Observation } from './observe.js';
import { proofStep, refuse } from './refusal.js';
import { createResultsIndex } from './results-index.js';

/** The fields of a result record that depend on which quorum signed it and who wrote it; all others are the result. */
const QUORUM_FIELDS = new Set<string>(['aggregate_signature', 'validator_bitfield', 'validator_count', 'signed_power', 'written_by']);

/** The quorum a bitmap names, if it meets the threshold and the aggregate verifies over `message`. */
function quorumOf(
  set: ValidatorSetView,
  bitmapText: string,
  aggregateSignature: Hex,
  message: Hex,
): { bitmap: bigint; count: number; power: bigint } | undefined {
  let bitmap: bigint;
  try {
    bitmap = BigInt(bitmapText);
  } catch {
    return undefined;
  }
  if (bitmap < 0n || !meetsThreshold(set, bitmap)) return undefined;
  const idx = set.publicKeys.map((_, i) => i).filter((i) => (bitmap >> BigInt(i)) & 1n);
  try {
    if (!blsVerify(aggregateSignature, message, blsAggregatePublicKeys(idx.map((i) => set.publicKeys[i]!)))) return undefined;
  } catch {
    return undefined;
  }
  return { bitmap, count: idx.length, power: idx.reduce((a, i) => a + set.powers[i]!, 0n) };
}

/** The record of an observed result under a verified quorum, written by validator `writtenBy`. */
function proofResultRecord(p: {
  resultId: Hex;
  obs: ObserveResponse;
  loaded: LoadedIntent;
  plan: IntentAnchorPlan;
  chain: ChainEntry;
  set: ValidatorSetView;
  quorum: { bitmap: bigint; count: number; power: bigint };
  aggregateSignature: Hex;
  writtenBy: number;
}): ProofResultRecord {
  const { resultId, obs, loaded, plan, chain, set, aggregateSignature, writtenBy } = p;
  const { bitmap, count, power: signedPower } = p.quorum;
  const totalPower = set.powers.reduce((a, w) => a + w, 0n);
  return {
    entry_type: PROOF_RESULT_ENTRY_TYPE,
    version: PROOF_RESULT_VERSION,
    format: PROOF_RESULT_FORMAT,
    result_id: resultId,
    intent_id: loaded.intent.intentId,
    intent_tx_id: loaded.status.txId,
    intent_tx_hash: loaded.txHash,
    // the intent's own operation (a batch anchor's operation id is the batch's)
    operation_id: loaded.intent.operationId,
    anchor_contract: plan.anchor,
    anchor_id: plan.anchorId,
    leaf_index: obs.leafIndex,
    leg_id: obs.legId,
    execution_commitment: obs.result.executionCommitment,
    chain_name: chain.name,
    chain_id: obs.result.chainId,
    tx_hash: obs.result.txHash,
    block_number: obs.result.blockNumber,
    block_hash: obs.result.blockHash,
    block_timestamp: obs.result.blockTimestamp,
    tx_index: obs.result.txIndex,
    success: obs.result.status === 1 ? 'true' : 'false',
    gas_used: obs.result.gasUsed,
    events_hash: obs.result.eventsHash,
    event_count: String(obs.result.eventCount),
    expected_events_verified: String(obs.checks.expectedEvents),
    expected_state_verified: String(obs.checks.expectedState),
    transactions_root: obs.result.transactionsRoot,
    receipts_root: obs.result.receiptsRoot,
    state_root: obs.result.stateRoot,
    confirmation_blocks: String(chain.confirmations),
    result_hash: obs.resultHash,
    attestation_hash: anchorMessage({ chainId: BigInt(chain.chainId), anchor: plan.anchor, anchorId: plan.anchorId, validatorSetRoot: set.root }),
    attestation_message_hash: obs.message,
    validator_set_root: set.root,
    validator_bitfield: bitmap.toString(),
    validator_count: String(count),
    signed_power: signedPower.toString(),
    total_power: totalPower.toString(),
    threshold_numerator: set.thresholdNum.toString(),
    threshold_denominator: set.thresholdDen.toString(),
    threshold_met: 'true',
    aggregate_signature: aggregateSignature.toLowerCase(),
    written_by: String(writtenBy),
  };
}

export function createResultWriter(
  ctx: NodeContext,
  observation: Observation,
  batches: BatchPlanning,
): (req: WriteResultRequest) => Promise<WriteResultResponse> {
  const { opts, index, ledger, store, held, chainCtx, validatorSet, loadIntent } = ctx;
  const resultsAccount = opts.protocol.resultsAccount;
  const results = createResultsIndex(ledger, resultsAccount);
  const writeLocks = new Map<string, Promise<WriteResultResponse>>();

  async function doWriteResult(req: WriteResultRequest, resultId: Hex): Promise<WriteResultResponse> {
    const obs = await observation.observe(req);
    const c = chainCtx(req.chain);
    // the observation may be from the cache: the record is written only while its block is still the chain's
    const now = await proofStep('block header', () => fetchVerifiedBlock(c.clients.public, { number: BigInt(obs.result.blockNumber) }));
    if (now.hash.toLowerCase() !== obs.result.blockHash.toLowerCase()) {
      observation.forget(req);
      refuse('REORG', `block ${obs.result.blockNumber} is now ${now.hash}, observed ${obs.result.blockHash}: the execution must be observed again`);
    }
    const set = await validatorSet(c);
    let requested: bigint;
    try {
      requested = BigInt(req.signerBitmap);
    } catch {
      refuse('BAD_REQUEST', 'signerBitmap must be an integer');
    }
    if (!meetsThreshold(set, requested!))
      refuse('NO_QUORUM', `signer bitmap ${requested!} does not meet the threshold ${set.thresholdNum}/${set.thresholdDen}`);
    if (typeof req.aggregateSignature !== 'string') refuse('BAD_REQUEST', 'aggregateSignature is required');
    const quorum = quorumOf(set, requested!.toString(), req.aggregateSignature, obs.message);
    if (!quorum) refuse('BAD_AGGREGATE', "aggregate signature does not verify over this validator's own result message");
    const loaded = await loadIntent(req.intentTxId);
    const plan = await batches.memberPlanFor(loaded, c, req.batch, req.intentTxId);
    if (plan.anchorId.toLowerCase() !== obs.anchorId.toLowerCase())
      refuse('ANCHOR_MISMATCH', `anchorId ${obs.anchorId} is not the intent's anchor ${plan.anchorId}`);
    const record = proofResultRecord({
      resultId,
      obs,
      loaded,
      plan,
      chain: c.entry,
      set,
      quorum: quorum!,
      aggregateSignature: req.aggregateSignature,
      writtenBy: index,
    });
    // Already written: by this node (its store names the entry), or by another as a record of this very result with a
    // quorum of its own. An entry that is neither (junk, or a record of something else under this id) does not count.
    const mine = store.writtenResult(resultId);
    const bare = (h: string | null | undefined) => h?.replace(/^0x/, '').toLowerCase();
    const ofThisResult = (r: ProofResultRecord) => {
      if (!PROOF_RESULT_FIELDS.every((k) => QUORUM_FIELDS.has(k) || r[k] === record[k])) return false;
      const q = quorumOf(set, r.validator_bitfield, r.aggregate_signature as Hex, obs.message);
      return !!q && String(q.count) === r.validator_count && q.power.toString() === r.signed_power;
    };
    const existing = await results.find(resultId, (r, entryHash) => (mine?.entryHash ? bare(entryHash) === bare(mine.entryHash) : ofThisResult(r)));
    if (mine && !existing) throw new Error(`result ${resultId}, written by this validator in ${mine.txId}, is not in ${resultsAccount} yet`);
    if (existing) {
      return {
        ok: true,
        kind: 'result-write',
        written: false,
        resultId,
        resultsAccount: opts.protocol.resultsAccount,
        txId: existing.txId,
        entryHash: existing.entryHash,
        record: existing.record,
      };
    }
    const parts = encodeProofResult(record);
    const sub = await ledger.signAndSubmit(opts.protocol.resultsAccount, ledgerTx.writeData(parts), held, { memo: PROOF_RESULT_MEMO });
    // a refused signature (another writer of this key got a later timestamp in first) ends the wait at once: the
    // gateway then asks the next signer instead of waiting out the timeout
    const st = await ledger.waitForTransaction(sub.txId, { timeoutMs: 60_000, signature: signatureMessageId(sub, sub.txHash) });
    if (!st.delivered) throw new Error(`proof_result write ${sub.txId} ended ${st.status}: ${st.error?.message ?? ''}`);
    const entryHash = bytesToHex(dataEntryHash(parts)).slice(2);
    await store.recordResult(resultId, { txId: sub.txId, entryHash });
    return { ok: true, kind: 'result-write', written: true, resultId, resultsAccount: opts.protocol.resultsAccount, txId: sub.txId, entryHash, record };
  }

  return async (req) => {
    const resultId = resultIdOf(req.anchorId, req.leafIndex);
    const running = writeLocks.get(resultId);
    if (running) return running;
    const p = doWriteResult(req, resultId).finally(() => writeLocks.delete(resultId));
    writeLocks.set(resultId, p);
    return p;
  };
}
