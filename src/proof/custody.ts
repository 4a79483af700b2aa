/**
 * Chain of custody of a proof: hash-linked events (created, attested, anchored, executed, observed, recorded,
 * retrieved). Pure functions, no I/O.
 *
 *   data_hash = SHA-256(canonicalJson(data))
 *   hash      = SHA-256(canonicalJson({ seq, type, at, data_hash, prev_hash }))
 *   prev_hash = hash of the previous event; 32 zero bytes for the first (seq 0)
 */
import { sha256, stringToBytes, type Hex } from 'viem';
import { canonicalJson } from '../chain/formulas.js';

export const CUSTODY_EVENT_TYPES = ['created', 'attested', 'anchored', 'executed', 'observed', 'recorded', 'retrieved'] as const;
export type CustodyEventType = (typeof CUSTODY_EVENT_TYPES)[number];

export const CUSTODY_GENESIS: Hex = `0x${'00'.repeat(32)}`;

export interface CustodyEvent {
  seq: number;
  type: CustodyEventType;
  /** ISO 8601 timestamp */
  at: string;
  data: unknown;
  data_hash: Hex;
  prev_hash: Hex;
  hash: Hex;
}

export interface CustodyVerification {
  chain_valid: boolean;
  /** index of the first event that does not hold */
  broken_at?: number;
  reason?: string;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const sha = (s: string): Hex => sha256(stringToBytes(s));

export function custodyDataHash(data: unknown): Hex {
  return sha(canonicalJson(data));
}

export function custodyEventHash(e: Pick<CustodyEvent, 'seq' | 'type' | 'at' | 'data_hash' | 'prev_hash'>): Hex {
  return sha(canonicalJson({ seq: e.seq, type: e.type, at: e.at, data_hash: e.data_hash, prev_hash: e.prev_hash }));
}

/** The next event after `prev` (undefined for the first). Throws on an unknown type or a non-ISO time. */
export function custodyEvent(prev: CustodyEvent | undefined, e: { type: CustodyEventType; at: string; data: unknown }): CustodyEvent {
  if (!(CUSTODY_EVENT_TYPES as readonly string[]).includes(e.type)) throw new Error(`custody: unknown event type ${JSON.stringify(e.type)}`);
  if (typeof e.at !== 'string' || !ISO.test(e.at) || Number.isNaN(Date.parse(e.at)))
    throw new Error(`custody: at must be an ISO 8601 time, got ${JSON.stringify(e.at)}`);
  const seq = prev ? prev.seq + 1 : 0;
  const prev_hash = prev ? prev.hash : CUSTODY_GENESIS;
  const data_hash = custodyDataHash(e.data);
  return { seq, type: e.type, at: e.at, data: e.data, data_hash, prev_hash, hash: custodyEventHash({ seq, type: e.type, at: e.at, data_hash, prev_hash }) };
}

/** Recomputes every link; reports the first event that does not hold and why. */
export function verifyCustody(events: readonly CustodyEvent[]): CustodyVerification {
  if (!Array.isArray(events) || events.length === 0) return { chain_valid: false, broken_at: 0, reason: 'no custody events' };
  const broken = (i: number, reason: string): CustodyVerification => ({ chain_valid: false, broken_at: i, reason: `event ${i}: ${reason}` });
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    if (typeof e !== 'object' || e === null) return broken(i, 'not an object');
    if (e.seq !== i) return broken(i, `seq is ${String(e.seq)}, expected ${i} (events removed, added or reordered)`);
    if (!(CUSTODY_EVENT_TYPES as readonly string[]).includes(e.type)) return broken(i, `unknown type ${JSON.stringify(e.type)}`);
    if (typeof e.at !== 'string' || !ISO.test(e.at) || Number.isNaN(Date.parse(e.at))) return broken(i, `at is not an ISO 8601 time`);
    const expectPrev = i === 0 ? CUSTODY_GENESIS : events[i - 1]!.hash;
    if (e.prev_hash !== expectPrev) return broken(i, `prev_hash ${String(e.prev_hash)} is not the previous event's hash ${expectPrev}`);
    let dh: Hex;
    try {
      dh = custodyDataHash(e.data);
    } catch (x) {
      return broken(i, `data is not canonical-JSON encodable: ${(x as Error).message}`);
    }
    if (e.data_hash !== dh) return broken(i, `data_hash ${String(e.data_hash)} does not match the data (recomputed ${dh})`);
    const h = custodyEventHash(e);
    if (e.hash !== h) return broken(i, `hash ${String(e.hash)} does not recompute (got ${h})`);
  }
  return { chain_valid: true };
}
