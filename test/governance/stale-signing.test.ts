/**
 * Stale signing data on the devnet, one rule for intents and sign requests: the ledger requires each key's signature
 * timestamps to grow, so signing data prepared before the key signed something prepared later is refused. The
 * signature answers 409 SIGNING_DATA_STALE (details.cause timestamp), the intent or sign request stays open, fresh
 * signing data for the same id is fetched and signed, and it completes. And transaction.submitted carries the
 * co-signing progress of a 2-signature intent (1 of 2). An intent prepared before its key page changed is stale
 * the same way (details.cause key_page_version).
 */
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowBundle } from '../../src/temporal/worker.js';
import { newClientKey } from '../identity/devnet.js';
import {
  api,
  arg,
  prepare,
  recordLeg,
  SEPOLIA,
  sign,
  signIntent,
  startCycleBench,
  submit,
  waitIntent,
  type CycleBench,
  type Json,
} from '../transaction/support.js';
import { makePanel } from './panel.js';

let b: CycleBench;
const seat2 = newClientKey();
const seat3 = newClientKey();

beforeAll(async () => {
  b = await startCycleBench();
}, 240_000);

afterAll(async () => {
  await b?.stop();
});

describe('intents signed out of the order they were prepared', () => {
  it('A prepared before B, B signed first: A answers 409 SIGNING_DATA_STALE, fresh signing data is fetched, A completes', async () => {
    const a = await prepare(b, [recordLeg(b, SEPOLIA, arg(`stale-a-${randomUUID()}`))]);
    const bb = await prepare(b, [recordLeg(b, SEPOLIA, arg(`stale-b-${randomUUID()}`))]);
    await submit(b, bb);

    const stale = await signIntent(b, a);
    // before: 400 SIGNATURE_REJECTED "invalid timestamp" and A stayed signing_required, unsignable, until it expired
    expect(stale.status, JSON.stringify(stale.body)).toBe(409);
    expect(stale.body.code).toBe('SIGNING_DATA_STALE');
    expect(stale.body.details).toMatchObject({ cause: 'timestamp', signing_data_url: `/v1/transaction/${a.intent_id}/signing-data` });
    expect((await api(b, 'GET', `/v1/transaction/${a.intent_id}`)).body.status).toBe('signing_required');

    const fresh = await api(b, 'POST', `/v1/transaction/${a.intent_id}/signing-data`);
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    expect(fresh.body).toMatchObject({ intent_id: a.intent_id, status: 'signing_required', submit_url: `/v1/transaction/${a.intent_id}/signature` });
    expect(fresh.body.signing_data.hash_to_sign).toMatch(/^[0-9a-f]{64}$/);
    expect(fresh.body.signing_data.hash_to_sign).not.toBe(a.signing_data.hash_to_sign);
    expect(fresh.body.signing_data.public_key).toBe(a.signing_data.public_key);
    const read = (await api(b, 'GET', `/v1/transaction/${a.intent_id}`)).body;
    expect(read.status).toBe('signing_required');
    expect(read.signing_data.hash_to_sign).toBe(fresh.body.signing_data.hash_to_sign);

    // the old signature no longer covers what the intent will submit
    const old = await signIntent(b, a);
    expect(old.status).toBe(400);
    expect(old.body.code).toBe('INVALID_SIGNATURE');

    const ok = await signIntent(b, a, fresh.body.signing_data.hash_to_sign);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.tx_hash).toBe(fresh.body.signing_data.transaction_hash);
    const done = await waitIntent(b, a.intent_id);
    expect(done.error_message).toBeNull();
    expect(done.status).toBe('completed');

    // the run with the stale signature and the refreshSigningData Update replays deterministically
    const history = await b.app.deps.temporal.workflow.getHandle(`intent-${a.intent_id}`).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, `intent-${a.intent_id}`);

    // signed, B takes no new signing data; unknown ids are 404
    const closed = await api(b, 'POST', `/v1/transaction/${bb.intent_id}/signing-data`);
    expect(closed.status).toBe(409);
    expect(closed.body.code).toBe('ALREADY_SIGNED');
    expect((await api(b, 'POST', `/v1/transaction/${randomUUID()}/signing-data`)).status).toBe(404);
    expect((await api(b, 'POST', '/v1/transaction/nope/signing-data')).status).toBe(404);
  }, 240_000);
});

describe('on a 2-of-3 panel', () => {
  it('an intent prepared before its key page changed: 409 SIGNING_DATA_STALE (key_page_version), fresh signing data at the new version is taken', async () => {
    const e = await prepare(b, [recordLeg(b, SEPOLIA, arg(`stale-e-${randomUUID()}`))]);
    await makePanel(b, [seat2, seat3], 2);
    const stale = await signIntent(b, e);
    expect(stale.status, JSON.stringify(stale.body)).toBe(409);
    expect(stale.body.code).toBe('SIGNING_DATA_STALE');
    expect(stale.body.details.cause).toBe('key_page_version');
    const fresh = await api(b, 'POST', `/v1/transaction/${e.intent_id}/signing-data`);
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    expect(fresh.body.signing_data.key_page_version).toBeGreaterThan(e.signing_data.key_page_version);
    const ok = await signIntent(b, e, fresh.body.signing_data.hash_to_sign);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // on the 2-of-3 page now: submitted, waiting for a co-signer
    expect((await api(b, 'GET', `/v1/transaction/${e.intent_id}`)).body.status).toBe('submitted');
  }, 60_000);

  let c: Json;
  let d: Json;
  let cTx: string;
  let dTx: string;

  it('transaction.submitted of a 2-signature intent carries its co-signing progress: 1 of 2, the book awaited', async () => {
    c = await prepare(b, [recordLeg(b, SEPOLIA, arg(`stale-c-${randomUUID()}`))]);
    cTx = (await submit(b, c)).tx_hash;
    const ev = await api(b, 'GET', '/v1/events?type=transaction.submitted&limit=100');
    expect(ev.status, JSON.stringify(ev.body)).toBe(200);
    const mine = ev.body.events.find((e: Json) => e.data.intent_id === c.intent_id);
    expect(mine, 'the transaction.submitted event of C').toBeDefined();
    expect(mine.data.signing_progress).toEqual({
      collected_signatures: 1,
      required_signatures: 2,
      awaiting_authorities: [`${b.identity.adiUrl.toLowerCase()}/book`],
      is_ready: false,
    });
  }, 60_000);

  it('a sign request prepared before another one the seat signed first: 409 SIGNING_DATA_STALE, fresh signing data, then it counts', async () => {
    d = await prepare(b, [recordLeg(b, SEPOLIA, arg(`stale-d-${randomUUID()}`))]);
    dTx = (await submit(b, d)).tx_hash;
    const reqFor = async (tx: string) => {
      const r = await api(b, 'POST', '/v1/sign', { type: 'pending_tx', target_id: tx, identity: b.identity.adiUrl, public_key: seat2.publicKey });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body;
    };
    const submitReq = (req: Json, hash = req.signing_data.data_for_signature) =>
      api(b, 'POST', `/v1/sign/${req.sign_request_id}/signature`, { signature: sign(hash, seat2.secretKey), public_key: seat2.publicKey });
    const rc = await reqFor(cTx);
    const rd = await reqFor(dTx);
    expect((await submitReq(rd)).status).toBe(200);

    const stale = await submitReq(rc);
    // before: 400 LEDGER_REFUSED (badTimestamp) and the sign request settled failed
    expect(stale.status, JSON.stringify(stale.body)).toBe(409);
    expect(stale.body.code).toBe('SIGNING_DATA_STALE');
    expect(stale.body.details).toMatchObject({ cause: 'timestamp', signing_data_url: `/v1/sign/${rc.sign_request_id}/signing-data` });

    const fresh = await api(b, 'POST', `/v1/sign/${rc.sign_request_id}/signing-data`);
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    expect(fresh.body).toMatchObject({ sign_request_id: rc.sign_request_id, status: 'signing_required' });
    expect(fresh.body.signing_data.transaction_hash).toBe(rc.signing_data.transaction_hash);
    expect(fresh.body.signing_data.data_for_signature).not.toBe(rc.signing_data.data_for_signature);
    expect(fresh.body.signing_data.timestamp).toBeGreaterThan(rc.signing_data.timestamp);

    const ok = await submitReq(rc, fresh.body.signing_data.data_for_signature);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // spent now: no fresh signing data for it
    expect((await api(b, 'POST', `/v1/sign/${rc.sign_request_id}/signing-data`)).status).toBe(404);
    expect((await api(b, 'POST', `/v1/sign/${randomUUID()}/signing-data`)).status).toBe(404);

    const [doneC, doneD] = await Promise.all([waitIntent(b, c.intent_id), waitIntent(b, d.intent_id)]);
    expect(doneC.status, doneC.error_message).toBe('completed');
    expect(doneD.status, doneD.error_message).toBe('completed');
  }, 240_000);
});
