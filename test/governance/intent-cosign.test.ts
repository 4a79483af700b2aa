/**
 * Co-signing completes a pending intent on the proof-cycle devnet: the identity's page becomes
 * 2-of-3 through governance; an intent signed by its initiator waits on the ledger, in /v1/pending within 1 s of the
 * signature's answer (no scan), until a second seat approves through POST /v1/sign (the initiator's key signing it
 * again is a 409 ALREADY_SIGNED; the approval counts 2 signatures and the action leaves the inbox within 1 s), then
 * the proof cycle runs to completed; reject votes defeat another intent, whose workflow ends failed with the
 * ledger's reason. While co-signatures are outstanding the intent's workflow looks at the ledger between durable
 * timers, running no activity in between; a co-signature through /v1/sign ends the pause at once, and one made on
 * the ledger outside the gateway at the next pending scan. A read following the intent (Prefer: wait) answers as soon
 * as a co-signature is submitted through /v1/sign.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from '@temporalio/worker';
import { getIntent } from '../../src/db/intents.js';
import { INTENT_MEMO } from '../../src/protocol/intent/model.js';
import { intentWorkflowId } from '../../src/temporal/intents.js';
import { workflowBundle } from '../../src/temporal/worker.js';
import { newClientKey } from '../identity/devnet.js';
import {
  api,
  arg,
  prepare,
  recordLeg,
  SEPOLIA,
  sign,
  startCycleBench,
  submit,
  submitToLedgerOnly,
  waitIntent,
  type CycleBench,
} from '../transaction/support.js';
import { cosign as cosignWith, makePanel } from './panel.js';

let b: CycleBench;
const seat2 = newClientKey();
const seat3 = newClientKey();

beforeAll(async () => {
  b = await startCycleBench();
}, 240_000);

afterAll(async () => {
  await b?.stop();
});

const cosign = (txHash: string, k: ReturnType<typeof newClientKey>, vote: string) => cosignWith(b, txHash, k, vote);

/** Polls the identity's inbox until the action of `txHash` is there (or gone); the milliseconds since `from`. */
async function inboxUntil(txHash: string, present: boolean, from: number) {
  for (;;) {
    const r = await api(b, 'GET', `/v1/pending?identity=${encodeURIComponent(b.identity.adiUrl)}&category=transactions`);
    expect(r.status).toBe(200);
    const action = r.body.actions.find((x: any) => x.tx_hash === txHash);
    const ms = Date.now() - from;
    if (Boolean(action) === present) return { action, ms };
    if (ms > 10_000) throw new Error(`${txHash} ${present ? 'never appeared in' : 'never left'} the inbox`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const intentHandle = (intentId: string) => b.app.deps.temporal.workflow.getHandle(intentWorkflowId(intentId));
type HistoryEvent = NonNullable<Awaited<ReturnType<ReturnType<typeof intentHandle>['fetchHistory']>>['events']>[number];
const pauseOf = (e: HistoryEvent) => Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0);

/** Waits until the intent's workflow begins a pause of 8 s or more (its first follow, then looks after 1, 2 and 4 s). */
async function untilLongPause(intentId: string) {
  const handle = intentHandle(intentId);
  const deadline = Date.now() + 60_000;
  while (!((await handle.fetchHistory()).events ?? []).some((e) => pauseOf(e) >= 8)) {
    if (Date.now() > deadline) throw new Error('no pause of 8 s began within 60 s');
    await sleep(200);
  }
  return handle;
}

/**
 * The intent completed, and the Signal `ledgerChanged` ended its long pause: the next look was scheduled before any
 * timer fired, and the long pause never did. The history replays against the workflow code.
 */
async function expectWokenAndCompleted(intentId: string) {
  const done = await waitIntent(b, intentId);
  expect(done.error_message).toBeNull();
  expect(done.status).toBe('completed');
  const handle = intentHandle(intentId);
  const history = await handle.fetchHistory();
  const all = history.events ?? [];
  const signaled = all.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'ledgerChanged');
  expect(signaled).toBeGreaterThan(0);
  const next = all.slice(signaled).find((e) => e.activityTaskScheduledEventAttributes || e.timerFiredEventAttributes);
  expect(next?.activityTaskScheduledEventAttributes?.activityType?.name).toBe('followIntentTransaction');
  const longPause = all.find((e) => pauseOf(e) >= 8)!;
  expect(all.some((e) => String(e.timerFiredEventAttributes?.startedEventId) === String(longPause.eventId))).toBe(false);
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, handle.workflowId);
}

describe('co-signing a pending intent', () => {
  it('the identity page becomes 2-of-3 through governance', async () => {
    await makePanel(b, [seat2, seat3], 2);
    const page = await b.dn.ledger.queryKeyPage(`${b.identity.adiUrl}/book/1`);
    expect(page).toMatchObject({ acceptThreshold: 2 });
    expect(page.keys).toHaveLength(3);
  });

  it('the initiator signs, the intent waits in the inbox at once; the second seat approves through /v1/sign and the proof cycle completes', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`cosign-${randomUUID()}`))]);
    const s = await submit(b, p);
    const answeredAt = Date.now();
    expect(s.status).toBe('submitted');

    // the second seat finds it in the inbox, without a scan
    const listed = await inboxUntil(s.tx_hash, true, answeredAt);
    expect(listed.ms).toBeLessThan(1000);
    expect(listed.action).toMatchObject({
      type: 'writeData',
      memo: INTENT_MEMO, // the intent's ledger transaction header's
      collected_signatures: 1,
      required_signatures: 2,
      user_has_signed: true,
      is_ready: false,
    });
    const waiting = await api(b, 'GET', `/v1/transaction/${p.intent_id}`);
    expect(waiting.body.stage).toBe('submitted');
    expect((await b.dn.ledger.getTransaction(`acc://${s.tx_hash}@${b.identity.adiUrl.slice('acc://'.length)}/data`)).pending).toBe(true);

    // the initiator's key signing it again counts nothing: 409, naming the transaction
    const again = await api(b, 'POST', '/v1/sign', { type: 'pending_tx', target_id: s.tx_hash, identity: b.identity.adiUrl });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    const dup = await api(b, 'POST', `/v1/sign/${again.body.sign_request_id}/signature`, {
      signature: sign(again.body.signing_data.data_for_signature, b.identity.key.secretKey),
      public_key: b.identity.key.publicKey,
    });
    expect(dup.status, JSON.stringify(dup.body)).toBe(409);
    expect(dup.body).toMatchObject({ code: 'ALREADY_SIGNED', details: { tx_hash: s.tx_hash } });

    const r = await cosign(s.tx_hash, seat2, 'approve');
    const cosignedAt = Date.now();
    expect(r).toMatchObject({ status: 'submitted', signature_count: 2, is_ready: true });
    expect((await inboxUntil(s.tx_hash, false, cosignedAt)).ms).toBeLessThan(1000);
    const done = await waitIntent(b, p.intent_id);
    expect(done.error_message).toBeNull();
    expect(done).toMatchObject({ status: 'completed', stage: 'completed' });
  }, 150_000);

  it('while co-signatures are outstanding no activity runs between looks; a co-signature wakes the intent at once', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`looks-${randomUUID()}`))]);
    const s = await submit(b, p);
    const handle = await untilLongPause(p.intent_id);
    expect((await handle.describe()).raw.pendingActivities ?? []).toEqual([]);
    expect((await api(b, 'GET', `/v1/transaction/${p.intent_id}`)).body.status).toBe('submitted');

    await cosign(s.tx_hash, seat2, 'approve');
    await expectWokenAndCompleted(p.intent_id);
  }, 150_000);

  it('a co-signature made on the ledger outside the gateway wakes the intent at the next pending scan', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`outside-${randomUUID()}`))]);
    await submit(b, p);
    await untilLongPause(p.intent_id);
    // the third seat signs straight on the ledger; the transaction executes with it
    const txId = (await getIntent(b.app.db, p.intent_id))!.ledgerTxId!;
    const prepared = await b.dn.ledger.prepareExternalSignature({
      pendingTx: txId,
      signerUrl: `${b.identity.adiUrl}/book/1`,
      publicKey: seat3.publicKey,
      vote: 'accept',
      delegators: [],
    });
    await b.dn.ledger.submitExternalSignature(prepared, sign(prepared.hashToSign, seat3.secretKey));
    while (!(await b.dn.ledger.getTransaction(txId)).delivered) await sleep(50);
    await b.app.deps.temporal.workflow.execute('pendingScanWorkflow', {
      workflowId: `pending-scan-test-${randomUUID()}`,
      taskQueue: b.app.config.temporal.taskQueue,
      args: [{ orgId: b.app.key.orgId }],
    });
    await expectWokenAndCompleted(p.intent_id);
  }, 150_000);

  it('a read following a waiting intent (Prefer: wait) answers as soon as a co-signature is submitted through /v1/sign', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`follow-${randomUUID()}`))]);
    const s = await submit(b, p);
    const before = await api(b, 'GET', `/v1/transaction/${p.intent_id}`);
    expect(before.body.signing_progress).toMatchObject({ collected_signatures: 1, required_signatures: 2 });
    const etag = before.headers.get('etag')!;
    const following = api(b, 'GET', `/v1/transaction/${p.intent_id}`, undefined, { 'If-None-Match': etag, Prefer: 'wait=20' });
    await sleep(500);
    // a vote against leaves the transaction pending (the initiator and the second seat can still approve it)
    await cosign(s.tx_hash, seat3, 'reject');
    const votedAt = Date.now();
    const r = await following;
    expect(r.status).toBe(200);
    expect(Date.now() - votedAt).toBeLessThan(3000);
    expect(r.body.status).toBe('submitted');
    expect(r.body.signing_progress.signers.map((x: { vote: string }) => x.vote).sort()).toEqual(['approve', 'reject']);
    await cosign(s.tx_hash, seat2, 'approve');
    expect((await waitIntent(b, p.intent_id)).status).toBe('completed');
  }, 150_000);

  it('a signature the ledger already holds (the first answer lost) is accepted when sent again; the intent waits for the co-signer', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`lost-answer-${randomUUID()}`))]);
    // a first attempt's submission reaches the ledger (which holds it for the second seat); its answer is lost
    const held = await submitToLedgerOnly(b, p);
    const s = await submit(b, p); // the ledger refuses the same signature again: its timestamp is used
    expect(s).toMatchObject({ status: 'submitted' });
    expect(s.tx_hash.replace(/^0x/, '')).toBe(held.txHash.replace(/^0x/, ''));
    await cosign(s.tx_hash, seat3, 'approve');
    const done = await waitIntent(b, p.intent_id);
    expect(done.error_message).toBeNull();
    expect(done.status).toBe('completed');
  }, 150_000);

  it('reject votes defeat an intent: its workflow ends failed with the reason', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`reject-${randomUUID()}`))]);
    const s = await submit(b, p);
    await cosign(s.tx_hash, seat2, 'reject');
    await cosign(s.tx_hash, seat3, 'reject');
    const done = await waitIntent(b, p.intent_id);
    expect(done.status).toBe('failed');
    expect(done.error_message).toMatch(/reject/);
  }, 150_000);
});
