/** Builds the canonical intent from API-shaped input: every field checked, every derived field computed. */
import { keccak256, toEventSelector, type Address, type Hex } from 'viem';
import { canonicalJson, executionCommitment, operationId as computeOperationId } from '../../chain/formulas.js';
import { encodeCall } from './call.js';
import { address, fail, gasLimitString, hex32, text, uintString, unixSeconds } from './fields.js';
import {
  INTENT_KIND,
  INTENT_PROTOCOL,
  INTENT_VERSION,
  MAX_INTENT_PART_BYTES,
  type CanonicalIntent,
  type ExpectedEvent,
  type ExpectedEventInput,
  type ExpectedState,
  type ExpectedStateInput,
  type IntentBlobs,
  type IntentInput,
  type IntentLeg,
  type LegBlob,
} from './model.js';

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
        function_signature: text(c.functionSignature, `${cf}.functionSignature`, 1024)
          .trim()
          .replace(/^function\s+/, ''),
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
