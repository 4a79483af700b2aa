/**
 * Per leg: the execution transaction proven and calling executeGovernanceProofDirect on the identity's account with
 * exactly the committed leg; the Executed event and the expected events in the proven logs; the expected state by
 * storage proofs against the execution block's stateRoot; the proof_result record recomputed, bound to the proven
 * execution, its aggregate verified, and written by its (re-hashed, receipted) ledger transaction.
 */
import { decodeFunctionData, getAddress, type Address, type Hex } from 'viem';
import { abstractAccountAbi } from '../../chain/abi/index.js';
import { proofForLeg, type AnchorProofArg } from '../../chain/account.js';
import { expectedEventEmitted, findExecutedEvent } from '../../chain/effects/events.js';
import { verifyStorageProof } from '../../chain/effects/evm-proofs.js';
import { canonicalJson, eventsHash } from '../../chain/formulas.js';
import type { CanonicalIntent, IntentAnchorPlan } from '../../protocol/intent/index.js';
import {
  encodeProofResult,
  PROOF_RESULT_ENTRY_TYPE,
  PROOF_RESULT_FORMAT,
  PROOF_RESULT_MEMO,
  PROOF_RESULT_VERSION,
  parseProofResult,
  recomputeProofResult,
  resultIdOf,
  type ProofResultRecord,
} from '../../protocol/result-record.js';
import type { BundleChain, BundleLeg, ProofBundle } from '../bundle.js';
import { ensure, eq, EXACT, index, int, lc, ledger0x, same, uint, type VerifyContext } from './checks.js';
import { checkLedgerReceipt, checkProvenTx, ledgerWriteData, type ProvenFacts } from './evidence.js';
import { quorumCheck } from './quorum.js';

export function verifyLeg(ctx: VerifyContext, c: BundleChain, l: BundleLeg, P: string, planOf: () => IntentAnchorPlan | undefined, chainId: bigint): void {
  const { b, check, intent } = ctx;
  const L = b.ledger;
  const Q = `${P}.leg[${l.leg_id}]`;
  let facts: ProvenFacts | undefined;
  const leafIndex = (() => {
    try {
      return index(l.leaf_index, 'leaf_index');
    } catch {
      return -1;
    }
  })();
  check(`${Q}.execution_inclusion`, () => {
    facts = checkProvenTx(l.execution, 'execution');
    return `${l.execution.tx_hash} at index ${facts.txIndex} of block ${facts.blockNumber}: header hashes to ${l.execution.block.hash}; tx and receipt proofs verify; status 1`;
  });
  check(`${Q}.execution_call`, () => {
    const plan = planOf();
    ensure(plan && intent && facts, 'not checked: the anchor or the execution inclusion failed');
    const leg = plan.legs[leafIndex];
    ensure(leg, `no leaf ${l.leaf_index}`);
    const tx = facts.tx;
    ensure(tx.to && getAddress(tx.to) === getAddress(intent.account), `execution was sent to ${tx.to}, not the identity's account ${intent.account}`);
    ensure(BigInt(tx.chainId ?? -1) === chainId, `execution is for chain id ${tx.chainId}`);
    const d = decodeFunctionData({ abi: abstractAccountAbi, data: tx.data ?? '0x' });
    ensure(d.functionName === 'executeGovernanceProofDirect', `execution calls ${d.functionName}, not executeGovernanceProofDirect`);
    const [target, value, data, proof] = d.args as unknown as [Address, bigint, Hex, AnchorProofArg];
    ensure(getAddress(target) === getAddress(leg.target), `target ${target} is not the committed ${leg.target}`);
    ensure(value === leg.value, `value ${value} is not the committed ${leg.value}`);
    ensure(lc(data) === lc(leg.data), `calldata ${data.slice(0, 74)}… is not the committed calldata of leg ${leg.legId}`);
    const want = proofForLeg(plan, leafIndex);
    eq(proof.commitmentRoot, want.commitmentRoot, 'proof.commitmentRoot');
    eq(proof.operationId, want.operationId, 'proof.operationId');
    eq(proof.ledgerTxHash, want.ledgerTxHash, 'proof.ledgerTxHash');
    ensure(
      proof.leafCount === want.leafCount && proof.leafIndex === want.leafIndex,
      `proof is for leaf ${proof.leafIndex}/${proof.leafCount}, not ${want.leafIndex}/${want.leafCount}`,
    );
    ensure(proof.deadline === want.deadline, `proof.deadline ${proof.deadline} is not the intent's expires_at ${want.deadline}`);
    ensure(proof.gasLimit === want.gasLimit, `proof.gasLimit ${proof.gasLimit} is not the leg's gas limit ${want.gasLimit}`);
    ensure(
      proof.merkleProof.length === want.merkleProof.length && proof.merkleProof.every((h, i) => same(h, want.merkleProof[i])),
      'proof.merkleProof is not the anchor proof of the leaf',
    );
    ensure(
      proof.merkleProof.every((h, i) => same(h, l.merkle_proof[i])) && proof.merkleProof.length === l.merkle_proof.length,
      'bundle merkle_proof differs from the one executed',
    );
    return `executeGovernanceProofDirect(${target}, ${value}, ${data.length / 2 - 1} bytes) on ${intent.account} = committed leg ${leg.legId}`;
  });
  check(`${Q}.effects`, () => {
    const plan = planOf();
    ensure(plan && intent && facts, 'not checked: the anchor or the execution inclusion failed');
    const leg = plan.legs[leafIndex]!;
    ensure(
      findExecutedEvent(facts.logs, {
        account: intent.account,
        anchorId: plan.anchorId,
        leafIndex: BigInt(leafIndex),
        executionCommitment: leg.executionCommitment,
      }),
      `no Executed(${plan.anchorId}, ${leafIndex}, ${leg.executionCommitment}) event from ${intent.account} in the proven receipt`,
    );
    for (const ev of leg.expectedEvents) ensure(expectedEventEmitted(facts.logs, ev), `expected event ${ev.topic0} from ${ev.contract} not in the proven logs`);
    return `Executed event and ${leg.expectedEvents.length} expected event(s) in ${facts.logs.length} proven log(s); gas used ${facts.gasUsed}`;
  });
  check(`${Q}.observation_checks`, () => {
    // what the validators report having checked, as they derive it (src/validator/observe.ts): the execution is a
    // direct call of the account (execution_call), so its binding is by calldata; one count per expectation
    const plan = planOf();
    ensure(plan, 'not checked: the anchor failed');
    const leg = plan.legs[leafIndex];
    ensure(leg, `no leaf ${l.leaf_index}`);
    const got = l.observation?.checks;
    const want = { call_binding: 'calldata', expected_events: leg.expectedEvents.length, expected_state: leg.expectedState.length };
    ensure(
      got && canonicalJson(got) === canonicalJson(want),
      `observation checks ${canonicalJson(got ?? null)} are not what the leg gives ${canonicalJson(want)}`,
    );
    return `call bound by calldata; ${want.expected_events} expected event(s), ${want.expected_state} expected state item(s)`;
  });
  check(`${Q}.expected_state`, () => {
    const plan = planOf();
    ensure(plan && facts, 'not checked: the anchor or the execution inclusion failed');
    const leg = plan.legs[leafIndex]!;
    ensure(l.effects && Array.isArray(l.effects.state), 'effects.state missing');
    // one way to lay the proofs out, the builder's: per account in order of first mention, its slots in order
    const layout = new Map<string, string[]>();
    for (const e of leg.expectedState) layout.set(getAddress(e.account), [...(layout.get(getAddress(e.account)) ?? []), lc(e.slot)]);
    const want = [...layout].map(([a, slots]) => `${a}[${slots.join(',')}]`).join(' ');
    const got = l.effects.state.map((a) => `${a.account}[${Array.isArray(a.slots) ? a.slots.map((x) => x.slot).join(',') : ''}]`).join(' ');
    ensure(
      got === want,
      `effects.state is not the expected state laid out as the builder writes it (per account in order of first mention, its slots in order): ${got || '(none)'} != ${want || '(none)'}`,
    );
    const proven = new Map<string, Hex>();
    for (const a of l.effects.state) {
      const values = verifyStorageProof(
        l.execution.block.stateRoot,
        {
          account: getAddress(a.account),
          accountProof: a.account_proof,
          slots: a.slots.map((x) => ({ slot: x.slot, proof: x.proof })),
        },
        EXACT,
      );
      a.slots.forEach((x, i) => {
        eq(values[i], x.value, `state ${a.account} slot ${x.slot}: proven value`);
        proven.set(`${lc(getAddress(a.account))}|${lc(x.slot)}`, values[i]!);
      });
    }
    ensure(proven.size === leg.expectedState.length, `${proven.size} proven slot(s) for ${leg.expectedState.length} expected`);
    for (const e of leg.expectedState) {
      const v = proven.get(`${lc(getAddress(e.account))}|${lc(e.slot)}`);
      ensure(v !== undefined, `expected state ${e.account} slot ${e.slot} is not proven`);
      eq(v, e.value, `state ${e.account} slot ${e.slot} after execution (expected)`);
    }
    return `${leg.expectedState.length} expected slot(s) proven against stateRoot ${l.execution.block.stateRoot}`;
  });
  check(`${Q}.proof_result`, () => {
    const plan = planOf();
    ensure(plan && intent && facts, 'not checked: the anchor or the execution inclusion failed');
    return proofResultCheck({ c, l, L, plan, intent, facts, leafIndex, chainId });
  });
  check(`${Q}.result_signature`, () => quorumCheck(c.validator_set, l.observation, 'observation'));
  check(`${Q}.result_ledger_entry`, () => {
    const r = l.result;
    ensure(r, 'result missing');
    const w = ledgerWriteData(r.transaction, r.tx_hash, r.tx_id, 'proof_result transaction');
    ensure(w.memo === PROOF_RESULT_MEMO, `memo ${JSON.stringify(w.memo)} is not ${PROOF_RESULT_MEMO}`);
    ensure(same(w.principal, r.results_account), `written to ${w.principal}, not ${r.results_account}`);
    ensure(w.parts.length === r.parts.length && w.parts.every((p, i) => p === r.parts[i]), 'the WriteData entry is not exactly the record parts');
    return `${r.tx_hash} re-hashes; ${checkLedgerReceipt(r.receipt, r.tx_hash, r.results_account, 'result receipt')}`;
  });
}

/** The leg's proof_result record: exactly its encoding, recomputing to the observed result, bound to the proven execution. */
function proofResultCheck(s: {
  c: BundleChain;
  l: BundleLeg;
  L: ProofBundle['ledger'];
  plan: IntentAnchorPlan;
  intent: CanonicalIntent;
  facts: ProvenFacts;
  leafIndex: number;
  chainId: bigint;
}): string {
  const { c, l, L, plan, intent, facts, leafIndex, chainId } = s;
  const leg = plan.legs[leafIndex]!;
  const r = l.result;
  ensure(r && Array.isArray(r.parts), 'result missing');
  const record = parseProofResult(r.parts);
  ensure(record, 'result parts are not a proof_result v2 record');
  // exactly the record's encoding: no extra, repeated or reordered line
  const encoded = encodeProofResult(record);
  ensure(
    encoded.length === r.parts.length && encoded.every((p, j) => p === r.parts[j]),
    'result parts are not exactly the encoding of the record they parse to',
  );
  const re = recomputeProofResult(record);
  eq(re.resultHash, record.result_hash, 'record result_hash (recomputed)');
  eq(re.resultHash, l.observation.result_hash, 'observation result hash');
  eq(re.message, record.attestation_message_hash, 'record attestation_message_hash (recomputed)');
  eq(re.message, l.observation.message, 'observation message');
  const h = l.execution.block;
  const bind: [keyof ProofResultRecord, string][] = [
    ['result_id', resultIdOf(plan.anchorId, leafIndex)],
    ['intent_id', intent.intentId],
    ['intent_tx_id', L.tx_id],
    ['intent_tx_hash', ledger0x(L.tx_hash)],
    // the intent's own operation (a batch anchor's operation id is the batch's)
    ['operation_id', intent.operationId],
    ['anchor_contract', c.proof_anchor],
    ['anchor_id', plan.anchorId],
    ['leaf_index', String(leafIndex)],
    ['leg_id', leg.legId],
    ['execution_commitment', leg.executionCommitment],
    ['chain_name', c.chain],
    ['chain_id', chainId.toString()],
    ['tx_hash', l.execution.tx_hash],
    ['block_number', String(h.number)],
    ['block_hash', h.hash],
    ['block_timestamp', String(h.timestamp)],
    ['tx_index', String(facts.txIndex)],
    ['success', 'true'],
    ['gas_used', facts.gasUsed.toString()],
    ['events_hash', eventsHash(facts.logs)],
    ['event_count', String(facts.logs.length)],
    ['expected_events_verified', String(leg.expectedEvents.length)],
    ['expected_state_verified', String(leg.expectedState.length)],
    ['transactions_root', h.transactionsRoot],
    ['receipts_root', h.receiptsRoot],
    ['state_root', h.stateRoot],
    ['attestation_hash', c.attestation.message],
    ['validator_set_root', c.validator_set.root],
    ['validator_bitfield', l.observation.signer_bitmap],
    ['validator_count', String(l.observation.signers.length)],
    ['signed_power', String(c.validator_set.powers.reduce((a, p, j) => ((BigInt(l.observation.signer_bitmap) >> BigInt(j)) & 1n ? a + BigInt(p) : a), 0n))],
    ['total_power', String(c.validator_set.powers.reduce((a, p) => a + BigInt(p), 0n))],
    ['threshold_met', 'true'],
    ['entry_type', PROOF_RESULT_ENTRY_TYPE],
    ['version', PROOF_RESULT_VERSION],
    ['format', PROOF_RESULT_FORMAT],
    ['threshold_numerator', String(c.validator_set.threshold_numerator)],
    ['threshold_denominator', String(c.validator_set.threshold_denominator)],
    ['aggregate_signature', l.observation.aggregate_signature],
    ['result_id', r.result_id],
    ['written_by', String(r.written_by)],
  ];
  for (const [k, v] of bind) eq(record[k], v, `record ${k}`);
  // the depth the writer required (its chain setting, signed by nobody) was met by what was observed, which
  // may be deeper: a validator counts the blocks it saw
  ensure(
    uint(record.confirmation_blocks, 'record confirmation_blocks') <= BigInt(int(l.observation.confirmations, 'observation.confirmations')),
    `record confirmation_blocks ${record.confirmation_blocks} exceeds the ${l.observation.confirmations} confirmations observed`,
  );
  return `record ${record.result_id} recomputes to result hash ${re.resultHash} and binds to the proven execution`;
}
