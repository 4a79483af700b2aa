/**
 * Parses an intent as stored on the ledger (what a validator and the verifier read) and recomputes it: the stored
 * parts must be the canonical intent rebuilt from them, byte for byte.
 */
import type { Address } from 'viem';
import { canonicalJson } from '../../chain/formulas.js';
import { buildIntent } from './build.js';
import { fail, FORBIDDEN } from './fields.js';
import {
  INTENT_KIND,
  INTENT_PROTOCOL,
  INTENT_VERSION,
  MAX_INTENT_PART_BYTES,
  type CanonicalIntent,
  type ContractCallInput,
  type ExpectedEventInput,
  type ExpectedStateInput,
  type LegBlob,
  type LegInput,
} from './model.js';

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
      const c = obj(
        o.contract_call,
        `${f}.contract_call`,
        ['target', 'value', 'function_signature', 'args', 'expected_events', 'expected_state'],
        ['gas_limit'],
      );
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
              if (se[k] !== l.execution[k])
                fail(
                  `legs[${j}].execution.${k}`,
                  `leg ${l.leg_id}: stored ${String(se[k]).slice(0, 80)} does not match recomputed ${l.execution[k].slice(0, 80)}`,
                );
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
