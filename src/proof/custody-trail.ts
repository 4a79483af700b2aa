/**
 * The custody chain of an intent's proof, built from what the cycle recorded: created (prepare), then per chain
 * attested, anchored, executed, observed, recorded, in time order. Each event's data names the artifacts of its
 * step (operation id, anchor, transactions, result hashes, result records), so the chain binds them in order.
 * Its data follows docs/api-conventions.md (the ledger transaction hash is `tx_hash`, bare hex; validator indexes
 * are numbers); events stored before keep the data they were hashed with.
 * `retrieved` events are appended when the bundle is served (src/api/routes/proof.ts).
 */
import type { CustodyEvent, CustodyEventType } from './custody.js';
import { custodyEvent } from './custody.js';
import type { ChainCycleRecord } from '../protocol/cycle-record.js';

export interface CustodyInput {
  intentId: string;
  operationId: string;
  createdAt: string;
  ledgerTxHash?: string;
  chains: { chain: string; record: ChainCycleRecord; stepTimes: Record<string, string> }[];
  bundleHash: string;
}

export function custodyTrail(i: CustodyInput): CustodyEvent[] {
  const steps: { type: CustodyEventType; at: string; data: unknown }[] = [
    // the ledger transaction's hash as the API writes it (docs/api-conventions.md): tx_hash, bare lowercase hex
    {
      type: 'created',
      at: i.createdAt,
      data: { intent_id: i.intentId, operation_id: i.operationId, tx_hash: i.ledgerTxHash?.replace(/^0x/i, '').toLowerCase() ?? null },
    },
  ];
  for (const c of i.chains) {
    const r = c.record;
    const t = (k: string) => c.stepTimes[k];
    const legs = r.legs.filter((l) => l.result);
    const add = (type: CustodyEventType, at: string | undefined, data: unknown) => at && steps.push({ type, at, data });
    // a batched intent's anchor is its batch's: the custody names the batch
    const batch = r.batch?.anchorId ? { batch_id: r.batch.id } : {};
    add('attested', t('attested'), { chain: c.chain, anchor_id: r.anchorId, ...batch, message: r.attestation?.message, signers: r.attestation?.signers });
    add('anchored', t('anchored'), { chain: c.chain, anchor_id: r.anchorId, ...batch, create_anchor_tx: r.createAnchorTx, prove_tx: r.proveTx });
    add('executed', t('executed'), { chain: c.chain, executions: legs.map((l) => ({ leg_id: l.legId, tx_hash: l.executionTx })) });
    add('observed', t('observed'), {
      chain: c.chain,
      results: legs.map((l) => ({ leg_id: l.legId, result_hash: l.observation?.resultHash, signers: l.observation?.signers })),
    });
    add('recorded', t('recorded'), {
      chain: c.chain,
      bundle_hash: i.bundleHash,
      records: legs.map((l) => ({ leg_id: l.legId, result_id: l.result?.resultId, tx_id: l.result?.txId })),
    });
  }
  // stable time order (a multi-chain intent interleaves its chains' steps); created stays first
  const [first, ...rest] = steps;
  rest.sort((a, b) => a.at.localeCompare(b.at));
  const out: CustodyEvent[] = [];
  for (const s of [first!, ...rest]) out.push(custodyEvent(out[out.length - 1], s));
  return out;
}

/** Appends one event (e.g. retrieved) to a stored chain. */
export function appendCustody(events: CustodyEvent[], e: { type: CustodyEventType; at: string; data: unknown }): CustodyEvent[] {
  return [...events, custodyEvent(events[events.length - 1], e)];
}
