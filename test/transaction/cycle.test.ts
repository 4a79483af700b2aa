/**
 * The proof cycle end to end on a devnet made here (ledger-sim, two anvils, 7 validators, Temporal, Postgres):
 * POST /v1/transaction → sign → POST .../signature → attest → createAnchor → executeComprehensiveProof →
 * executeGovernanceProofDirect → observe → proof_result → completed, checked against the chains and the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Hex } from 'viem';
import { testTargetAbi } from '../../src/chain/abi/index.js';
import { accountAbiWithAnchorErrors } from '../../src/chain/account.js';
import { revertErrorName } from '../../src/chain/anchor.js';
import { events } from '../../src/db/schema.js';
import { intentWorkflowExists } from '../../src/temporal/intents.js';
import { verifyBundle } from '../../src/proof/verify.js';
import { checkOrgEvents } from '../support/event-catalogue.js';
import { AMOY, api, arg, prepare, recordLeg, runIntent, SEPOLIA, sign, startCycleBench, submit, transferLeg, waitIntent, type CycleBench } from './support.js';

let b: CycleBench;

beforeAll(async () => {
  b = await startCycleBench();
}, 240_000);

afterAll(async () => {
  await b?.stop();
});

async function receiptsOk(chain: string, hashes: (string | null)[]) {
  const w = b.wallets[chain]!;
  for (const h of hashes) {
    expect(h).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await w.public.getTransactionReceipt({ hash: h as Hex })).status).toBe('success');
  }
}

describe('proof cycle', () => {
  it('a contract call with expectedEvents and expectedState completes; three transactions, proof, bundle verifies', async () => {
    const a = arg('cycle-one');
    const p = await prepare(b, [recordLeg(b, SEPOLIA, a)]);
    expect(p).toMatchObject({ status: 'signing_required', signing_mode: 'external', submit_url: `/v1/transaction/${p.intent_id}/signature` });
    expect(p.signing_data.hash_to_sign).toMatch(/^[0-9a-f]{64}$/);
    expect(p.signing_data.request_id).toBe(p.intent_id);
    const s = await submit(b, p);
    expect(s).toMatchObject({ intent_id: p.intent_id, status: 'submitted' });
    expect(s.tx_hash).toBe(p.signing_data.transaction_hash);
    const t0 = Date.now();
    const done = await waitIntent(b, p.intent_id);
    console.log(`cycle: ${Date.now() - t0} ms from submission to completed`);
    expect(done.error_message).toBeNull();
    expect(done).toMatchObject({ status: 'completed', stage: 'completed', tx_hash: s.tx_hash });
    expect(done.proof_id).toMatch(/^[0-9a-f-]{36}$/);
    const leg = done.legs[0];
    expect(leg).toMatchObject({ status: 'completed', chain: SEPOLIA.name, leaf_index: 0 });
    expect(leg.attested_by.length).toBeGreaterThanOrEqual(5);
    expect(leg.result_id).toMatch(/^0x[0-9a-f]{64}$/);
    // the intent includes its proof: where to fetch it, and who attested and observed
    expect(done.proof).toEqual({
      id: done.proof_id,
      status: 'complete',
      bundle_url: `/v1/proof/${done.proof_id}/bundle`,
      custody_url: `/v1/proof/${done.proof_id}/custody`,
      attestations: [
        {
          chain: SEPOLIA.name,
          anchor_id: leg.anchor_id,
          attested_by: leg.attested_by,
          legs: [{ leg_id: leg.leg_id, observed_by: leg.observed_by, result_id: leg.result_id }],
        },
      ],
    });
    await receiptsOk(SEPOLIA.name, Object.values(leg.transactions));
    // the call ran once, from the account
    const w = b.wallets[SEPOLIA.name]!;
    const target = b.targets[SEPOLIA.name]!;
    expect(await w.public.readContract({ address: target, abi: testTargetAbi, functionName: 'lastArg' })).toBe(a);
    expect(await w.public.readContract({ address: target, abi: testTargetAbi, functionName: 'lastCaller' })).toBe(b.identity.account);

    // events: submitted and completed, once each
    const evs = await b.app.db.select().from(events).where(eq(events.resourceId, p.intent_id));
    expect(evs.map((e) => e.type).sort()).toEqual(['transaction.completed', 'transaction.submitted']);
    const completed = evs.find((e) => e.type === 'transaction.completed')!.data;
    expect(completed).toMatchObject({ proof_id: done.proof_id, executions: [{ leg_id: leg.leg_id, chain: SEPOLIA.name, evm_chain_id: SEPOLIA.chainId }] });
    expect(evs.find((e) => e.type === 'transaction.submitted')!.data).toMatchObject({ tx_hash: s.tx_hash });
    // every event of the bench's organization so far (identity.active too) is of the catalogue, in its forms
    const { types, problems } = await checkOrgEvents(b.app.db, b.app.key.orgId);
    expect(problems).toEqual([]);
    expect(types).toEqual(expect.arrayContaining(['identity.active', 'transaction.completed', 'transaction.submitted']));

    // the bundle verifies offline
    const bundle = await api(b, 'GET', `/v1/proof/${done.proof_id}/bundle`);
    expect(bundle.status).toBe(200);
    const v = await verifyBundle(JSON.stringify(bundle.body));
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.valid).toBe(true);

    // replaying the used proof reverts (from anyone)
    const tx = await w.public.getTransaction({ hash: leg.transactions.execute_governance_proof_direct });
    const err = await w.public.call({ to: b.identity.account, data: tx.input, account: w.account }).then(
      () => undefined,
      (e) => e,
    );
    expect(err).toBeDefined();
    expect(revertErrorName(err) ?? String(err)).toMatch(/LeafAlreadyUsed|revert/);
    void accountAbiWithAnchorErrors;
  });

  it('a payable call and a native transfer complete (two legs, one anchor)', async () => {
    const to = '0x00000000000000000000000000000000000A11cE' as const;
    const w = b.wallets[SEPOLIA.name]!;
    const before = await w.public.getBalance({ address: to });
    const a = arg('payable');
    const done = await runIntent(b, [recordLeg(b, SEPOLIA, a, {}, '1000'), transferLeg(b, SEPOLIA, to, '777')]);
    expect(done.error_message).toBeNull();
    expect(done.status).toBe('completed');
    expect(done.legs.map((l: any) => l.status)).toEqual(['completed', 'completed']);
    expect(await w.public.getBalance({ address: to })).toBe(before + 777n);
    expect(await w.public.readContract({ address: b.targets[SEPOLIA.name]!, abi: testTargetAbi, functionName: 'lastValue' })).toBe(1000n);
    // its bundle (a call with value and a native transfer) verifies, of the bundle schema
    const bundle = await api(b, 'GET', `/v1/proof/${done.proof_id}/bundle`);
    expect((await verifyBundle(JSON.stringify(bundle.body))).checks.filter((c) => !c.ok)).toEqual([]);
  });

  it('a two-leg intent on both chains completes with one signature (the Amoy leg with a gas limit)', async () => {
    const a = arg('two-chains');
    const done = await runIntent(b, [recordLeg(b, SEPOLIA, a), recordLeg(b, AMOY, a, { gasLimit: '150000' })]);
    expect(done.error_message).toBeNull();
    expect(done.status).toBe('completed');
    expect(done.legs.map((l: any) => [l.chain, l.status])).toEqual([
      [SEPOLIA.name, 'completed'],
      [AMOY.name, 'completed'],
    ]);
    for (const l of done.legs) await receiptsOk(l.chain, Object.values(l.transactions));
    const bundle = await api(b, 'GET', `/v1/proof/${done.proof_id}/bundle`);
    expect((await verifyBundle(JSON.stringify(bundle.body))).valid).toBe(true);
    // the limit is in the signed intent (the bundle's intent parts are JSON strings)
    expect(JSON.stringify(bundle.body)).toMatch(/gas_limit\\?":\\?"150000/);
  });

  it('a chain whose legs the account cannot pay fails before anything is anchored there; the other chain completes; the partial proof says so', async () => {
    const a = arg('partial');
    const to = '0x00000000000000000000000000000000000B0B0B' as const;
    const done = await runIntent(b, [recordLeg(b, SEPOLIA, a), transferLeg(b, AMOY, to, (10n ** 30n).toString())]);
    expect(done.status).toBe('failed');
    expect(done.legs.map((l: any) => [l.chain, l.status])).toEqual([
      [SEPOLIA.name, 'completed'],
      [AMOY.name, 'failed'],
    ]);
    expect(done.legs[1].error).toMatch(/holds \d+ wei but the legs on polygon-amoy send 1000000000000000000000000000000 wei; nothing was anchored/);
    expect(done.legs[1].transactions.create_anchor).toBeNull();
    expect(done.error_message).toMatch(/failed: .*nothing was anchored; completed: /);
    const bundle = await api(b, 'GET', `/v1/proof/${done.proof_id}/bundle`);
    const v = await verifyBundle(JSON.stringify(bundle.body));
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v).toMatchObject({ valid: true, complete: false });
    expect(done.proof).toMatchObject({ id: done.proof_id, status: 'partial' });
    expect(bundle.body.failed_legs).toEqual([{ leg_id: done.legs[1].leg_id, chain: AMOY.name, reason: done.legs[1].error }]);
  });

  it('a missing expected event fails observation with the validators’ reason; nothing else is affected', async () => {
    const a = arg('no-event');
    const leg = recordLeg(b, SEPOLIA, a, { expectedEvents: [{ contract: b.targets[SEPOLIA.name], event: 'Never(uint256)' }] });
    const done = await runIntent(b, [leg]);
    expect(done.status).toBe('failed');
    expect(done.legs[0].status).toBe('failed');
    expect(done.error_message).toMatch(/EVENT_NOT_EMITTED|event/i);
    // it did execute (the effect is what failed to be proven)
    expect(done.legs[0].transactions.execute_governance_proof_direct).toMatch(/^0x/);
  });

  it('signature rules: wrong key 400, bad signature 400, second signature 409', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg('sig-rules'))]);
    const other = (await import('../identity/devnet.js')).newClientKey();
    const url = `/v1/transaction/${p.intent_id}/signature`;
    const badSig = await api(b, 'POST', url, { signature: sign('00'.repeat(32), b.identity.key.secretKey), public_key: b.identity.key.publicKey });
    expect(badSig.status).toBe(400);
    expect(badSig.body.code).toBe('INVALID_SIGNATURE');
    expect(badSig.body.details).toMatchObject({ field: 'signature' });
    // answered by the API: the intent's workflow was not started for it
    expect(await intentWorkflowExists(b.app.deps.temporal, p.intent_id)).toBe(false);
    const wrongKey = await api(b, 'POST', url, { signature: sign(p.signing_data.hash_to_sign, other.secretKey), public_key: other.publicKey });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.body.error).toMatch(/nominated key/);
    const short = await api(b, 'POST', url, { signature: 'abcd', public_key: b.identity.key.publicKey });
    expect(short.status).toBe(400);
    expect(short.body.error).toMatch(/^signature:/);
    expect((await api(b, 'GET', `/v1/transaction/${p.intent_id}`)).body.status).toBe('signing_required');
    await submit(b, p);
    const again = await api(b, 'POST', url, { signature: sign(p.signing_data.hash_to_sign, b.identity.key.secretKey), public_key: b.identity.key.publicKey });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ALREADY_SIGNED');
    await waitIntent(b, p.intent_id);
  });
});

// Last in this file: it leaves the Sepolia anvil mining a block a second instead of on each transaction.
describe('a quorum round longer than a workflow task', () => {
  it('an observation that waits 20 s for confirmations completes as one local activity, its workflow task extended meanwhile; the signature answered from the row before the cycle, and at once when sent again', {
    timeout: 180_000,
  }, async () => {
    const rpc = async (method: string, params: unknown[]) => {
      const r = await fetch(b.dn.anvils[0]!.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      const body = (await r.json()) as { error?: unknown };
      if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    };
    // a block per transaction only: the execution's confirmations never come until blocks are mined again
    await rpc('evm_setAutomine', [true]);
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg('long-observation'))]);
    let answeredAt = 0;
    try {
      const postedAt = Date.now();
      await submit(b, p);
      answeredAt = Date.now();
      expect(answeredAt - postedAt).toBeLessThan(2000);
      await waitIntent(b, p.intent_id, (x) => x.stage === 'observing', 60_000);
      // the signature sent again while the round holds the workflow task open: answered at once, from the row
      const sentAt = Date.now();
      const again = await api(b, 'POST', `/v1/transaction/${p.intent_id}/signature`, {
        signature: sign(p.signing_data.hash_to_sign, b.identity.key.secretKey),
        public_key: b.identity.key.publicKey,
      });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('ALREADY_SIGNED');
      expect(Date.now() - sentAt).toBeLessThan(1000);
      // twice the workflow task timeout (10 s); less than the validators' own bound on an observation's wait (30 s)
      await new Promise((r) => setTimeout(r, 20_000));
      expect((await api(b, 'GET', `/v1/transaction/${p.intent_id}`)).body.stage).toBe('observing');
    } finally {
      await rpc('evm_setIntervalMining', [1]);
    }
    const done = await waitIntent(b, p.intent_id);
    expect(done.error_message).toBeNull();
    expect(done.status).toBe('completed');

    const history = (await b.app.deps.temporal.workflow.getHandle(`intent-${p.intent_id}`).fetchHistory()).events ?? [];
    const local = history.flatMap((e) => {
      const m = e.markerRecordedEventAttributes;
      const data = m?.markerName === 'core_local_activity' ? m.details?.data?.payloads?.[0]?.data : undefined;
      return data ? [{ ...(JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string; attempt: number }), eventId: Number(e.eventId) }] : [];
    });
    expect(local.filter((a) => a.activity_type === 'observeChainLeg')).toEqual([expect.objectContaining({ attempt: 1 })]);
    expect(local.map((a) => a.activity_type)).toEqual(expect.arrayContaining(['submitIntentSignature', 'attestChain']));
    // a standard intent's workflow knows its class from its input: no step asks the batcher
    expect(local.map((a) => a.activity_type)).not.toContain('joinBatch');
    // no activity: the ledger transaction was followed locally, in the workflow task that ran the signature's Update
    expect(history.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [])).toEqual([]);
    expect(local.map((a) => a.activity_type)).toContain('followIntentTransaction');
    // so the Update's own answer was recorded with the attestation, at that task's first extension, seconds after the
    // row had answered the POST
    const updated = history.find((e) => e.workflowExecutionUpdateCompletedEventAttributes)!;
    const attested = local.find((a) => a.activity_type === 'attestChain')!.eventId;
    expect(history.some((e) => e.workflowTaskCompletedEventAttributes && Number(e.eventId) > Number(updated.eventId) && Number(e.eventId) < attested)).toBe(
      false,
    );
    const updatedAt = Number(updated.eventTime!.seconds) * 1000 + Math.floor((updated.eventTime!.nanos ?? 0) / 1e6);
    expect(updatedAt - answeredAt).toBeGreaterThan(3000);
    // the worker completed the open workflow task before its timeout and took the next, twice over the wait
    expect(history.filter((e) => e.workflowTaskCompletedEventAttributes).length).toBeGreaterThanOrEqual(3);
    expect(history.some((e) => e.workflowTaskTimedOutEventAttributes)).toBe(false);
  });
});
