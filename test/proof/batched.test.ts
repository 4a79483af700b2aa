/**
 * The batched class on the devnet (7 validators, two anvil chains): intents of two identities on both chains are
 * batched into one anchor per chain (one createAnchor, one executeComprehensiveProof), each leg executes once with
 * its own Merkle proof and completes with its proof_result; one member the validators refuse is left out with its
 * reason while the others complete; the Temporal UI finds the batch of an intent and the intents of a batch; and
 * the validators never anchor a member a second time (another batch, or alone).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proofAnchorAbi } from '../../src/chain/abi/index.js';
import { getIntent, getIntentChains, type IntentDocument } from '../../src/db/intents.js';
import type { ChainCycleRecord } from '../../src/protocol/cycle-record.js';
import { parseIntentEntries, planIntentBatch } from '../../src/protocol/intent/index.js';
import { attestBatchRequestFor, attestRequestFor, type AttestBatchRequest } from '../../src/protocol/validator-wire.js';
import { BatchRefusal } from '../../src/validator/batch.js';
import { BatchIdKey } from '../../src/workflows/search-attributes.js';
import {
  AMOY,
  api,
  arg,
  createCycleIdentity,
  deployTestTarget,
  prepare,
  recordLeg,
  SEPOLIA,
  startCycleBench,
  submit,
  waitIntent,
  type CycleBench,
  type Json,
} from '../transaction/support.js';

let b: CycleBench;
let second: CycleBench['identity'];

beforeAll(async () => {
  // a window long enough for every intent of a test to join before the batch closes
  process.env.BATCH_WINDOW_MS = '4000';
  b = await startCycleBench();
  second = await createCycleIdentity(b);
}, 300_000);

afterAll(async () => {
  delete process.env.BATCH_WINDOW_MS;
  await b?.stop();
});

const as = (identity: CycleBench['identity']): CycleBench => ({ ...b, identity });

async function chainRecord(intentId: string, chain: string): Promise<ChainCycleRecord> {
  return (await getIntentChains(b.app.db, intentId)).find((c) => c.chain === chain)!.record;
}

async function anchorsCreated(chain: string, fromBlock: bigint) {
  const w = b.wallets[chain]!;
  return w.public.getContractEvents({ address: b.dn.validators!.contracts.proofAnchor, abi: proofAnchorAbi, eventName: 'AnchorCreated', fromBlock });
}

describe('batched anchoring', () => {
  const ids: Record<string, string> = {};

  it('batches intents of two identities on both chains into one anchor per chain; one refused member is left out', async () => {
    const start = {
      [SEPOLIA.name]: await b.wallets[SEPOLIA.name]!.public.getBlockNumber(),
      [AMOY.name]: await b.wallets[AMOY.name]!.public.getBlockNumber(),
    };
    const target = async (chain: string) => deployTestTarget(b.wallets[chain]!);
    const A = as(b.identity);
    const B = as(second);
    // the validators refuse this member (as they would an expired or conflicting one): it must fail alone
    const refusedTx = new Set<string>();
    for (const n of b.dn.validators!.nodes) {
      const real = n.attestBatch.bind(n);
      n.attestBatch = async (req: AttestBatchRequest) => {
        const bad = req.batch.members.filter((m) => refusedTx.has(m.toLowerCase()));
        if (bad.length) throw new BatchRefusal(bad.map((m) => ({ intentTxId: m, code: 'TEST_REFUSED', reason: 'refused by the test' })));
        return real(req);
      };
    }
    const specs: [string, CycleBench, Json[]][] = [
      ['a1', A, [recordLeg(A, SEPOLIA, arg('b-a1'), {}, '0', await target(SEPOLIA.name))]],
      ['b1', B, [recordLeg(B, SEPOLIA, arg('b-b1'), {}, '0', await target(SEPOLIA.name)), recordLeg(B, AMOY, arg('b-b1a'), {}, '0', await target(AMOY.name))]],
      ['a2', A, [recordLeg(A, AMOY, arg('b-a2'), {}, '0', await target(AMOY.name))]],
      ['x', B, [recordLeg(B, SEPOLIA, arg('b-x'), {}, '0', await target(SEPOLIA.name))]],
    ];
    // one after the other: a key's ledger signatures must carry growing timestamps
    for (const [name, who, legs] of specs) {
      const p = await prepare(who, legs, { proof_class: 'batched' });
      ids[name] = p.intent_id;
      await submit(who, p);
    }
    refusedTx.add((await getIntent(b.app.db, ids.x!))!.ledgerTxId!.toLowerCase());

    const done = await Promise.all(Object.values(ids).map((id) => waitIntent(b, id)));
    const byName = Object.fromEntries(Object.keys(ids).map((k, i) => [k, done[i]]));
    for (const k of ['a1', 'b1', 'a2']) expect(byName[k].status, `${k}: ${JSON.stringify(byName[k])}`).toBe('completed');
    expect(byName.x.status).toBe('failed');
    expect(JSON.stringify(byName.x)).toContain('TEST_REFUSED');

    // one anchor per chain, holding the legs of both identities
    const s = [await chainRecord(ids.a1!, SEPOLIA.name), await chainRecord(ids.b1!, SEPOLIA.name)];
    const a = [await chainRecord(ids.b1!, AMOY.name), await chainRecord(ids.a2!, AMOY.name)];
    for (const [recs, chain] of [
      [s, SEPOLIA.name],
      [a, AMOY.name],
    ] as const) {
      expect(recs[0]!.batch?.anchorId).toBeTruthy();
      expect(recs[1]!.batch?.id).toBe(recs[0]!.batch?.id);
      expect(recs[1]!.anchorId).toBe(recs[0]!.anchorId);
      expect(recs[1]!.createAnchorTx).toBe(recs[0]!.createAnchorTx);
      expect(recs[1]!.proveTx).toBe(recs[0]!.proveTx);
      expect(recs[0]!.leafCount).toBe('2');
      expect(new Set(recs.flatMap((r) => r.legs.map((l) => l.leafIndex)))).toEqual(new Set([0, 1]));
      const created = await anchorsCreated(chain, start[chain]!);
      expect(created.map((e) => e.args.anchorId)).toEqual([recs[0]!.anchorId]);
      // every leg executed once: its own transaction, one Executed per leaf
      const txs = recs.flatMap((r) => r.legs.map((l) => l.executionTx));
      expect(new Set(txs).size).toBe(2);
    }
    const x = await chainRecord(ids.x!, SEPOLIA.name);
    expect(x.batch?.refused).toContain('TEST_REFUSED');
    expect(x.createAnchorTx).toBeUndefined();
    expect(x.legs[0]!.executionTx).toBeUndefined();

    // the Temporal UI: the intents of a batch, the batch of an intent
    const temporal = b.app.deps.temporal;
    const batchId = s[0]!.batch!.id;
    // a1 (one chain) runs its chain cycle in its own workflow, b1 (two chains) in a child per chain
    const desc = await temporal.workflow.getHandle(`intent-${ids.a1}`).describe();
    expect(desc.typedSearchAttributes.get(BatchIdKey)).toBe(batchId);
    const child = await temporal.workflow.getHandle(`intent-${ids.b1}-${SEPOLIA.name}`).describe();
    expect(child.typedSearchAttributes.get(BatchIdKey)).toBe(batchId);
    await expect(temporal.workflow.getHandle(`intent-${ids.a1}-${SEPOLIA.name}`).describe()).rejects.toThrow();
    const batch = await temporal.workflow.getHandle(batchId).describe();
    expect(batch.type).toBe('batchWorkflow');
    expect(batch.searchAttributes.BatchIntents).toEqual([ids.a1, ids.b1]);
    // the members included hear the outcome in one workflow task (not one task per member)
    const history = await temporal.workflow.getHandle(batchId).fetchHistory();
    const told = (history.events ?? []).flatMap((e) => {
      const at = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
      return at && !String(at.workflowExecution?.workflowId).includes(ids.x!) ? [String(at.workflowTaskCompletedEventId)] : [];
    });
    expect(told).toHaveLength(2);
    expect(new Set(told).size).toBe(1);
  }, 240_000);

  it('the validators anchor a member once: not in another batch, not alone', async () => {
    const node = b.dn.validators!.nodes[0]!;
    const rows = await Promise.all([ids.b1!, ids.a1!].map((id) => getIntent(b.app.db, id)));
    const members = rows.map((r) => ({ intent: parseIntentEntries((r!.intent as IntentDocument).parts), ledgerTxHash: r!.txHash! }));
    // the same two intents in the other order: another anchor of the same members
    const plan = planIntentBatch(members, { chainId: BigInt(SEPOLIA.chainId), proofAnchor: b.dn.validators!.contracts.proofAnchor });
    const req = attestBatchRequestFor(
      rows.map((r) => r!.ledgerTxId!),
      SEPOLIA.name,
      plan.anchor,
    );
    const refusal = await node.attestBatch(req).then(
      () => undefined,
      (e: unknown) => e as BatchRefusal,
    );
    expect(refusal?.code).toBe('BATCH_MEMBER_REFUSED');
    expect(refusal?.members.map((m) => m.code)).toEqual(['CONFLICTING_ANCHOR', 'CONFLICTING_ANCHOR']);
    // a batched intent is never anchored alone
    const alone = members[1]!;
    const { planIntentAnchor } = await import('../../src/protocol/intent/index.js');
    const own = planIntentAnchor(alone.intent, {
      chainId: BigInt(SEPOLIA.chainId),
      proofAnchor: b.dn.validators!.contracts.proofAnchor,
      ledgerTxHash: alone.ledgerTxHash,
    });
    const solo = await node.attest(attestRequestFor(rows[1]!.ledgerTxId!, SEPOLIA.name, own)).then(
      () => undefined,
      (e: unknown) => e as { code: string },
    );
    expect(solo?.code).toBe('WRONG_PROOF_CLASS');
  }, 60_000);

  it('the proof of a batched intent proves its legs are leaves of the batch root; custody names the batch', async () => {
    const r = await api(b, 'GET', `/v1/transaction/${ids.b1}`);
    expect(r.body.status).toBe('completed');
    const res = await b.app.call(`/v1/proof/${r.body.proof_id}/bundle`, { key: b.app.key.key });
    expect(res.status).toBe(200);
    const text = await res.text();
    const { verifyBundle } = await import('../../src/proof/verify.js');
    const v = await verifyBundle(text);
    expect(v.valid, JSON.stringify(v.checks.filter((c) => !c.ok))).toBe(true);
    const bundle = JSON.parse(text) as Json;
    const sep = bundle.chains.find((c: Json) => c.chain === SEPOLIA.name);
    const rec = await chainRecord(ids.b1!, SEPOLIA.name);
    expect(sep.batch.id).toBe(rec.batch!.id);
    expect(sep.batch.members).toHaveLength(2);
    expect(v.checks.find((c) => c.name === `chain[${SEPOLIA.name}].anchor`)?.detail).toContain(`batch ${rec.batch!.id}`);
    // a leg's path swapped for another's, or another member named as this one: the membership does not verify
    const tampered = structuredClone(bundle);
    const t = tampered.chains.find((c: Json) => c.chain === SEPOLIA.name);
    t.batch.index = 1 - t.batch.index;
    const { sealBundle, serializeBundle } = await import('../../src/proof/bundle.js');
    expect((await verifyBundle(serializeBundle(sealBundle(tampered)))).valid).toBe(false);
    const swapped = structuredClone(bundle);
    const s2 = swapped.chains.find((c: Json) => c.chain === SEPOLIA.name);
    s2.legs[0].merkle_proof = [`0x${'11'.repeat(32)}`];
    expect((await verifyBundle(serializeBundle(sealBundle(swapped)))).valid).toBe(false);
    const custody = await api(b, 'GET', `/v1/proof/${r.body.proof_id}/custody`);
    expect(JSON.stringify(custody.body)).toContain(rec.batch!.id);
  }, 60_000);
});
