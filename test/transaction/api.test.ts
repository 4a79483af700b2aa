/**
 * The transaction API's rules on a devnet made here: every malformed leg is a 400 naming the leg and the field;
 * identity state (hash-only, no credits, not active) gives a clear 4xx; the single-transfer shape; Idempotency-Key;
 * an unsigned intent expires; a transient ledger failure at signature time is a 502 after which the same
 * signature succeeds; listing, proofs by id and by transaction hash, custody, the ledger receipt; other
 * organizations see 404s.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowNotFoundError } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { sql } from 'drizzle-orm';
import { createActivities } from '../../src/activities/index.js';
import { workerActivityDeps } from '../../src/activities/worker-deps.js';
import { getIntent } from '../../src/db/intents.js';
import { proofs } from '../../src/db/schema/intents.js';
import { createLedgerClient } from '../../src/ledger/index.js';
import { startIntentWorkflow } from '../../src/temporal/intents.js';
import { createTestOrgAndKey } from '../support/platform.js';
import { newClientKey, pollIdentity, uniqueName } from '../identity/devnet.js';
import {
  AMOY,
  api,
  arg,
  createCycleIdentity,
  prepare,
  recordLeg,
  runIntent,
  SEPOLIA,
  sign,
  startCycleBench,
  startCycleWorker,
  submit,
  submitToLedgerOnly,
  transferLeg,
  waitIntent,
  type CycleBench,
  type Json,
} from './support.js';

let b: CycleBench;

beforeAll(async () => {
  b = await startCycleBench();
}, 240_000);

afterAll(async () => {
  await b?.stop();
});

const post = (body: Json, headers: Record<string, string> = {}) => api(b, 'POST', '/v1/transaction', body, headers);
const multi = (legs: Json[]) => ({ identity_id: b.identity.id, intent: { adiUrl: b.identity.adiUrl, legs } });

describe('POST /v1/transaction validation', () => {
  it('names the leg and the field of every malformed leg', async () => {
    const good = () => recordLeg(b, SEPOLIA, arg('v'));
    const cases: [string, (l: Json) => void, RegExp, string][] = [
      [
        'missing functionSignature',
        (l) => delete l.contractCall.functionSignature,
        /^intent\.legs\[0\]\.contractCall\.functionSignature \(leg "rec-ethereum-sepolia-\w+"\): required/,
        'intent.legs[0].contractCall.functionSignature',
      ],
      ['negative amount', (l) => (l.amount = '-1'), /\): must not be negative/, 'intent.legs[0].amount'],
      ['fractional amount', (l) => (l.amount = '1.5'), /\): must be a non-negative integer in wei/, 'intent.legs[0].amount'],
      [
        'amount ≠ value on a payable call',
        (l) => {
          l.amount = '10';
          l.contractCall.value = '5';
        },
        /\): 10 must equal contractCall\.value 5/,
        'intent.legs[0].amount',
      ],
      ['unknown chain', (l) => (l.chain = 'moonchain'), /\): unknown chain "moonchain"/, 'intent.legs[0].chain'],
      ['chainId not the chain', (l) => (l.chainId = 1), /\): 1 does not match ethereum-sepolia/, 'intent.legs[0].chainId'],
      [
        'fromAddress not the account',
        (l) => (l.fromAddress = '0x000000000000000000000000000000000000bEEF'),
        /\): must be the identity's abstract account/,
        'intent.legs[0].fromAddress',
      ],
      ['args not matching the types', (l) => (l.contractCall.args = ['0x1234']), /\): expected 32 bytes for bytes32/, 'intent.legs[0].contractCall.args[0]'],
      ['wrong number of args', (l) => (l.contractCall.args = []), /\): expected 1 arguments, got 0/, 'intent.legs[0].contractCall.args'],
      [
        'selector instead of a signature',
        (l) => (l.contractCall.functionSignature = '0xa9059cbb'),
        /selector is not accepted/,
        'intent.legs[0].contractCall.functionSignature',
      ],
      [
        'gas limit out of range',
        (l) => (l.contractCall.gasLimit = 40_000_000),
        /\): must be an integer from 10000 to 30000000/,
        'intent.legs[0].contractCall.gasLimit',
      ],
      ['gas limit not an integer', (l) => (l.contractCall.gasLimit = '1e6'), /\): must be an integer/, 'intent.legs[0].contractCall.gasLimit'],
    ];
    for (const [name, mutate, msg, field] of cases) {
      const l = good();
      mutate(l);
      const r = await post(multi([l]));
      expect(r.status, name).toBe(400);
      // one form for every leg error, whichever check found it: `<field path> (leg "<legId>"): <message>`
      expect(r.body.error.startsWith(`${field} (leg ${JSON.stringify(l.legId)}): `), `${name}: ${r.body.error}`).toBe(true);
      expect(r.body.error, name).toMatch(msg);
      expect(r.body.details?.field, name).toBe(field);
    }
    // integers beyond 2^53 as numbers (uint256 argument and amount)
    const big = { ...transferLeg(b, SEPOLIA, '0x000000000000000000000000000000000000bEEF', '1'), amount: 2 ** 53 + 2 };
    const r1 = await post(multi([big]));
    expect(r1.status).toBe(400);
    expect(r1.body.error).toMatch(/integers beyond 2\^53 must be sent as strings/);
    const call = recordLeg(b, SEPOLIA, arg('v'));
    call.contractCall.functionSignature = 'record(uint256)';
    call.contractCall.args = [2 ** 53 + 2];
    delete call.contractCall.expectedState;
    const r2 = await post(multi([call]));
    expect(r2.status).toBe(400);
    expect(r2.body.error).toMatch(/^intent\.legs\[0\]\.contractCall\.args\[0\] \(leg "[^"]+"\): integers beyond 2\^53 must be strings/);
    // native transfer with amount 0
    const r3 = await post(multi([transferLeg(b, SEPOLIA, '0x000000000000000000000000000000000000bEEF', '0')]));
    expect(r3.status).toBe(400);
    expect(r3.body.error).toMatch(/native transfer .* more than 0 wei/);
    // the second leg is named when only it is wrong
    const second = recordLeg(b, AMOY, arg('w'));
    second.amount = '-3';
    const r4 = await post(multi([recordLeg(b, SEPOLIA, arg('x')), second]));
    expect(r4.body.details.field).toBe('intent.legs[1].amount');
    expect(r4.body.error).toBe(`intent.legs[1].amount (leg ${JSON.stringify(second.legId)}): must not be negative, got -3`);
    // a leg without legId has none to name; a repeated legId names the repeat and the first
    const noId = recordLeg(b, SEPOLIA, arg('y'));
    delete noId.legId;
    const rNoId = await post(multi([noId]));
    expect(rNoId.body).toMatchObject({ error: 'intent.legs[0].legId: required, a non-empty string', details: { field: 'intent.legs[0].legId' } });
    const twin = recordLeg(b, AMOY, arg('z'));
    const rTwin = await post(multi([twin, { ...recordLeg(b, SEPOLIA, arg('z2')), legId: twin.legId }]));
    expect(rTwin.body).toMatchObject({
      error: `intent.legs[1].legId (leg ${JSON.stringify(twin.legId)}): duplicate leg id (intent.legs[0] has it too)`,
      details: { field: 'intent.legs[1].legId' },
    });
    // adiUrl of another identity, no legs, bad identity id
    expect(
      (await post({ identity_id: b.identity.id, intent: { adiUrl: 'acc://someone-else.acme', legs: [recordLeg(b, SEPOLIA, arg('y'))] } })).body.details.field,
    ).toBe('intent.adiUrl');
    expect((await post({ identity_id: b.identity.id, intent: { adiUrl: b.identity.adiUrl, legs: [] } })).status).toBe(400);
    expect((await post({ identity_id: '7d3c1a9e-0000-4000-8000-000000000000', intent: {} })).status).toBe(404);
    // a seat that is not on the page
    const stranger = newClientKey();
    const r5 = await post({ ...multi([recordLeg(b, SEPOLIA, arg('z'))]), signer_public_key: stranger.publicKey });
    expect(r5.status).toBe(400);
    expect(r5.body.details.field).toBe('signer_public_key');
    const r6 = await post({ ...multi([recordLeg(b, SEPOLIA, arg('z'))]), signer_key_page: 'acc://elsewhere.acme/book/1' });
    expect(r6.body.details.field).toBe('signer_key_page');
  });

  it('identity state: hash-only → 400, no credits → 402, not active → 409', async () => {
    const k = newClientKey();
    const { publicKeyHashHex } = await import('../../src/identity/keys.js');
    const hashOnly = await api(b, 'POST', '/v1/identity', {
      name: uniqueName('ho'),
      public_key_hash: publicKeyHashHex(k.publicKey),
      chains: [SEPOLIA.name],
      credits: 10,
    });
    const r1 = await post({ identity_id: hashOnly.body.identity.id, intent: { adiUrl: hashOnly.body.identity.adi_url, legs: [] } });
    expect(r1.status).toBe(400);
    expect(r1.body.error).toBe('Identity has no public key configured');

    const poor = await createCycleIdentity(b, 0);
    const r2 = await post({
      identity_id: poor.id,
      intent: { adiUrl: poor.adiUrl, legs: [{ ...transferLeg(b, SEPOLIA, '0x000000000000000000000000000000000000bEEF', '5'), fromAddress: poor.account }] },
    });
    expect(r2.status).toBe(402);
    expect(r2.body.code).toBe('INSUFFICIENT_CREDITS');

    const creating = await api(b, 'POST', '/v1/identity', { name: uniqueName('cr'), public_key: k.publicKey, chains: [SEPOLIA.name], credits: 10 });
    const r3 = await post({ identity_id: creating.body.identity.id, intent: { adiUrl: creating.body.identity.adi_url, legs: [] } });
    if (r3.status !== 409)
      expect(r3.body.code).toBe('VALIDATION_ERROR'); // provisioning may have won the race
    else expect(r3.body.code).toBe('IDENTITY_NOT_ACTIVE');
    await pollIdentity(b.app as never, creating.body.identity.id, (x) => x.status !== 'creating', 90_000);
  });

  it('single-transfer shape: native units on toChain; the ledger token shape is refused with the reason', async () => {
    const to = '0x000000000000000000000000000000000000F00D';
    const w = b.wallets[SEPOLIA.name]!;
    const before = await w.public.getBalance({ address: to });
    const p = await post({
      identity_id: b.identity.id,
      intent: { fromChain: SEPOLIA.name, toChain: SEPOLIA.name, fromAddress: b.identity.account, toAddress: to, amount: '0.000001', tokenSymbol: 'ETH' },
    });
    expect(p.status).toBe(201);
    await submit(b, p.body);
    const done = await waitIntent(b, p.body.intent_id);
    expect(done.status).toBe('completed');
    expect(done.intent_type).toBe('transfer');
    expect(await w.public.getBalance({ address: to })).toBe(before + 10n ** 12n);
    const bad = await post({
      identity_id: b.identity.id,
      intent: { fromChain: SEPOLIA.name, toChain: SEPOLIA.name, fromAddress: b.identity.account, toAddress: to, amount: '1', tokenSymbol: 'DOGE' },
    });
    expect(bad.body.details.field).toBe('intent.tokenSymbol');
    // a typed shape other than the ledger token transfer (sendTokens: test/transaction/send-tokens.test.ts)
    const otherType = await post({ identity_id: b.identity.id, intent: { type: 'swapTokens', to: 'acc://bob.acme/tokens', amount: 5 } });
    expect(otherType.status).toBe(422);
    expect(otherType.body.code).toBe('UNSUPPORTED_INTENT');
  });

  it('Idempotency-Key: a replay returns the same intent with idempotent true', async () => {
    const key = crypto.randomUUID();
    const body = multi([recordLeg(b, SEPOLIA, arg('idem'))]);
    const a = await post(body, { 'Idempotency-Key': key });
    const again = await post(body, { 'Idempotency-Key': key });
    expect(a.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.intent_id).toBe(a.body.intent_id);
    expect(again.body.idempotent).toBe(true);
  });
});

describe('signature lifecycle', () => {
  /** An intent prepared with a TTL of `seconds` (the app's setting, restored after). */
  async function prepareExpiring(seconds: number, tag: string): Promise<Json> {
    const ttl = b.app.config.intentTtlSeconds;
    b.app.config.intentTtlSeconds = seconds;
    try {
      return await prepare(b, [recordLeg(b, SEPOLIA, arg(tag))]);
    } finally {
      b.app.config.intentTtlSeconds = ttl;
    }
  }

  it('an unsigned intent expires without ever having a workflow, with its event; a late signature is a 409', async () => {
    const p = await prepareExpiring(2, 'expire');
    const done = await waitIntent(b, p.intent_id, undefined, 30_000);
    expect(done).toMatchObject({ status: 'expired', stage: 'failed' });
    expect(done.error_message).toMatch(/expired/);
    // recorded by the expiry sweep, within its 5 s look of expires_at
    expect(new Date(done.updated_at).getTime() - new Date(p.expires_at).getTime()).toBeLessThan(7_000);
    await expect(b.app.deps.temporal.workflow.getHandle(`intent-${p.intent_id}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    const events = (await api(b, 'GET', `/v1/events?resource_id=${p.intent_id}`)).body.events;
    expect(events.map((e: Json) => [e.type, e.data.error])).toEqual([['transaction.failed', done.error_message]]);
    const late = await api(b, 'POST', `/v1/transaction/${p.intent_id}/signature`, {
      signature: sign(p.signing_data.hash_to_sign, b.identity.key.secretKey),
      public_key: b.identity.key.publicKey,
    });
    expect(late.status).toBe(409);
  });

  it('at expiry an intent whose signature the ledger took (the answer lost) is not reported unsigned: it is submitted, and the validators refuse it as expired', async () => {
    const p = await prepareExpiring(3, 'expiry-held');
    const held = await submitToLedgerOnly(b, p); // the gateway never heard back
    expect((await api(b, 'GET', `/v1/transaction/${p.intent_id}`)).body.status).toBe('signing_required');
    const done = await waitIntent(b, p.intent_id, undefined, 60_000);
    // before: expired, "no valid signature arrived", while the ledger had executed it
    expect(done.status).toBe('failed');
    expect(done.tx_hash.replace(/^0x/, '')).toBe(held.txHash.replace(/^0x/, ''));
    expect(done.submitted_at).not.toBeNull();
    expect(done.error_message).toMatch(/EXPIRED|expired at/);
    expect(done.error_message).not.toMatch(/no valid signature/);
  });

  /** The worker's submission step run outside any workflow, as an attempt of the signature Update runs it. */
  function submissionStep(p: Json, signature: string, opts: { startToCloseTimeoutMs?: number } = {}) {
    const acts = createActivities({ db: b.app.db, ...workerActivityDeps(b.app.config) });
    return new MockActivityEnvironment(opts).run(acts.submitIntentSignature, { intentId: p.intent_id, signature });
  }

  it('a submission attempt that outlives its timeout does not mark the intent; the same signature then goes through', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg('late-attempt'))]);
    const signature = sign(p.signing_data.hash_to_sign, b.identity.key.secretKey);
    // an attempt whose 1 ms start-to-close timeout ran out while it worked: its submission reaches the ledger
    await expect(submissionStep(p, signature, { startToCloseTimeoutMs: 1 })).rejects.toThrow(/outlived its timeout/);
    expect((await api(b, 'GET', `/v1/transaction/${p.intent_id}`)).body.status).toBe('signing_required');
    const r = await api(b, 'POST', `/v1/transaction/${p.intent_id}/signature`, { signature, public_key: b.identity.key.publicKey });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.tx_hash).toBe(p.signing_data.transaction_hash);
    // the ledger hash bare, also under Certen's name, in the submit answer and the intent view
    expect(r.body.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.accum_tx_hash).toBe(r.body.tx_hash);
    const done = await waitIntent(b, p.intent_id);
    expect(done.status).toBe('completed');
    expect(done).toMatchObject({ tx_hash: r.body.tx_hash, accum_tx_hash: r.body.tx_hash });
    expect(done.signing_data.hash_to_sign).toMatch(/^[0-9a-f]{64}$/);
    expect(done.legs[0]).toMatchObject({ chain: SEPOLIA.name, evm_chain_id: SEPOLIA.chainId });
    expect(done.legs[0]).not.toHaveProperty('chain_id');
  });

  it('a signature whose Update was lost (row marked submitted, workflow still waiting) goes through when sent again', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg('lost-update'))]);
    const signature = sign(p.signing_data.hash_to_sign, b.identity.key.secretKey);
    // The Update's submission step ran to the end and marked the row; the API and worker processes were killed
    // before the workflow recorded the Update, which Temporal then drops (it was admitted, never accepted): the
    // workflow runs and still waits for its signature.
    await submissionStep(p, signature);
    await startIntentWorkflow(b.app.deps.temporal, b.app.config.temporal.taskQueue, (await getIntent(b.app.db, p.intent_id))!);
    expect((await api(b, 'GET', `/v1/transaction/${p.intent_id}`)).body).toMatchObject({ status: 'submitted', stage: 'submitted' });
    // the client, its answer lost, sends the same signature again: it reaches the workflow (before: a 409
    // ALREADY_SIGNED from the row, and the intent stood still until its expiry)
    const r = await api(b, 'POST', `/v1/transaction/${p.intent_id}/signature`, { signature, public_key: b.identity.key.publicKey });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.tx_hash).toBe(p.signing_data.transaction_hash);
    expect((await waitIntent(b, p.intent_id, undefined, 60_000)).status).toBe('completed');
    // once the workflow has it, the same signature again is the record's answer
    const again = await api(b, 'POST', `/v1/transaction/${p.intent_id}/signature`, { signature, public_key: b.identity.key.publicKey });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'ALREADY_SIGNED', details: { status: 'completed', tx_hash: r.body.tx_hash } });
  });

  it('a workflow whose signature Update was lost finds the submission on its own when the signature is not sent again', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg('lost-update-watch'))]);
    await submissionStep(p, sign(p.signing_data.hash_to_sign, b.identity.key.secretKey));
    const started = Date.now();
    await startIntentWorkflow(b.app.deps.temporal, b.app.config.temporal.taskQueue, (await getIntent(b.app.db, p.intent_id))!);
    // the first look at the row is 2 s after the workflow starts waiting (before: nothing until the intent's expiry)
    expect((await waitIntent(b, p.intent_id, undefined, 30_000)).status).toBe('completed');
    expect(Date.now() - started).toBeGreaterThan(2_000);
  });

  it('a transient ledger failure at submission is a 502; the intent stays signing_required; the same signature then succeeds', async () => {
    // the worker reaches the ledger through a proxy that can fail every request
    let failing = false;
    const target = new URL(b.app.config.ledgerUrl);
    const proxy: Server = createServer(async (req, res) => {
      let body = '';
      for await (const c of req) body += c;
      if (failing) return void res.writeHead(503).end('down for maintenance');
      const r = await fetch(new URL(req.url ?? '/', target), { method: req.method, headers: { 'content-type': 'application/json' }, body: body || undefined });
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${target.pathname}`;
    await b.worker!.stop();
    b.worker = await startCycleWorker(b.app, { ledger: createLedgerClient({ url: proxyUrl, pollIntervalMs: 25 }) });
    try {
      const p = await prepare(b, [recordLeg(b, SEPOLIA, arg('flaky'))]);
      const body = { signature: sign(p.signing_data.hash_to_sign, b.identity.key.secretKey), public_key: b.identity.key.publicKey };
      failing = true;
      const r1 = await api(b, 'POST', `/v1/transaction/${p.intent_id}/signature`, body);
      expect(r1.status).toBe(502);
      expect(r1.body.code).toBe('LEDGER_UNAVAILABLE');
      expect((await api(b, 'GET', `/v1/transaction/${p.intent_id}`)).body.status).toBe('signing_required');
      failing = false;
      const r2 = await api(b, 'POST', `/v1/transaction/${p.intent_id}/signature`, body);
      expect(r2.status).toBe(200);
      expect((await waitIntent(b, p.intent_id)).status).toBe('completed');
    } finally {
      failing = false;
      await b.worker.stop();
      b.worker = await startCycleWorker(b.app);
      proxy.close();
    }
  });
});

describe('reading intents and proofs', () => {
  it("GET shows the row's times as Date#toISOString writes them (microseconds truncated) and its documents' parts", async () => {
    // created_at is stored to the millisecond (rounded), submitted_at to the microsecond
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg('times'))]);
    const db = b.app.deps.database.db;
    await db.execute(
      sql`update intents set created_at = '2026-01-02 03:04:05.678999+00', submitted_at = '0999-12-31 23:59:59.9999+00' where id = ${p.intent_id}`,
    );
    const row = (await getIntent(db, p.intent_id))!;
    const got = (await api(b, 'GET', `/v1/transaction/${p.intent_id}`)).body;
    expect(got).toMatchObject({
      created_at: '2026-01-02T03:04:05.679Z',
      submitted_at: '0999-12-31T23:59:59.999Z',
      expires_at: row.expiresAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
      completed_at: null,
      proof_class: 'standard',
      ledger_tx_id: null,
      legs: [{ chain: 'ethereum-sepolia', status: 'pending', anchor_id: null }],
    });
    expect(got.created_at).toBe(row.createdAt.toISOString());
    expect(got.submitted_at).toBe(row.submittedAt!.toISOString());
  });

  it('list with cursor; proof artifact, custody chain, lookup by ledger and chain tx hash, ledger receipt; other orgs get 404', async () => {
    const unsigned = await prepare(b, [recordLeg(b, SEPOLIA, arg('read-before'))]);
    await prepare(b, [recordLeg(b, SEPOLIA, arg('read-before-2'))]);
    const done = await runIntent(b, [recordLeg(b, SEPOLIA, arg('read'))]);
    expect(done.status).toBe('completed');

    const page1 = await api(b, 'GET', '/v1/transactions?limit=2');
    expect(page1.status).toBe(200);
    expect(page1.body.transactions).toHaveLength(2);
    expect(page1.body.pagination.has_more).toBe(true);
    const page2 = await api(b, 'GET', `/v1/transactions?limit=2&cursor=${page1.body.pagination.next_cursor}`);
    const ids = [...page1.body.transactions, ...page2.body.transactions].map((t: Json) => t.intent_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(page1.body.transactions[0].intent_id).toBe(done.intent_id);

    const proof = await api(b, 'GET', `/v1/proof/${done.proof_id}`);
    expect(proof.status).toBe(200);
    expect(proof.body).toMatchObject({ proof_id: done.proof_id, intent_id: done.intent_id, status: 'complete' });
    expect(proof.body.chains[0].legs[0].execution_tx).toBe(done.legs[0].transactions.execute_governance_proof_direct);
    // the conventions: the ledger tx hash bare hex, counts as numbers, a chain as chain + evm_chain_id
    expect(proof.body.ledger).toMatchObject({ tx_hash: done.tx_hash.replace(/^0x/, ''), threshold: 1, signatures: 1 });
    expect(proof.body.ledger.key_page_version).toEqual(expect.any(Number));
    expect(proof.body.ledger.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(proof.body.chains[0]).toMatchObject({ chain: SEPOLIA.name, evm_chain_id: SEPOLIA.chainId });
    expect(proof.body.chains[0].attested_by.length).toBeGreaterThan(0);
    expect(proof.body.chains[0].attested_by.every(Number.isInteger)).toBe(true);
    expect(proof.body.chains[0]).not.toHaveProperty('chain_id');
    expect(proof.body.chains[0].transactions.create_anchor).toMatch(/^0x[0-9a-f]{64}$/);
    const stored = await api(b, 'GET', `/v1/proof/${done.proof_id}/bundle`);
    expect(stored.body.version).toBe('pgw-proof-bundle/2');
    expect(stored.body.chains[0].anchor.tx_hash).toBe(proof.body.ledger.tx_hash);

    // downloads at the same moment each leave their retrieved event, linked in order
    await Promise.all([1, 2, 3].map(() => api(b, 'GET', `/v1/proof/${done.proof_id}/bundle`)));
    const custody = await api(b, 'GET', `/v1/proof/${done.proof_id}/custody`);
    expect(custody.body.chain_valid).toBe(true);
    expect(custody.body.events.map((e: Json) => e.type)).toEqual([
      'created',
      'attested',
      'anchored',
      'executed',
      'observed',
      'recorded',
      'retrieved',
      'retrieved',
      'retrieved',
      'retrieved',
    ]);
    expect(custody.body.events[0].data).toMatchObject({ intent_id: done.intent_id, tx_hash: done.tx_hash.replace(/^0x/, '') });
    expect(custody.body.events[0].data).not.toHaveProperty('ledger_tx_hash');

    // a proof stored before bundle version 2: its artifact is in the same forms, its bundle is served as stored
    const v1 = readFileSync(join(import.meta.dirname, '../proof/fixtures/bundle-v1.json'), 'utf8');
    const v1Hash = (JSON.parse(v1) as { bundle_hash: string }).bundle_hash;
    const [old] = await b.app.db
      .insert(proofs)
      .values({ orgId: (await getIntent(b.app.db, unsigned.intent_id))!.orgId, intentId: unsigned.intent_id, bundle: v1, bundleHash: v1Hash, custody: [] })
      .returning();
    const oldProof = await api(b, 'GET', `/v1/proof/${old!.id}`);
    expect(oldProof.status).toBe(200);
    const v1Body = JSON.parse(v1);
    expect(oldProof.body).toMatchObject({
      proof_id: old!.id,
      bundle_hash: v1Hash,
      ledger: { tx_hash: v1Body.ledger.tx_hash.slice(2), key_page_version: 1, threshold: 1, signatures: 1 },
      chains: [{ chain: 'ethereum-sepolia', evm_chain_id: 11155111, attested_by: [0, 1, 2, 3, 4, 5, 6] }],
    });
    expect(oldProof.body.chains[0]).not.toHaveProperty('chain_id');
    const oldBundle = await b.app.call(`/v1/proof/${old!.id}/bundle`, { key: b.app.key.key });
    expect(oldBundle.status).toBe(200);
    expect(await oldBundle.text()).toBe(v1);

    const txs = done.legs[0].transactions;
    for (const h of [done.tx_hash, txs.execute_governance_proof_direct, txs.create_anchor, txs.execute_comprehensive_proof]) {
      const byTx = await api(b, 'GET', `/v1/proof/tx/${h}`);
      expect(byTx.status, h).toBe(200);
      expect(byTx.body.proof_id).toBe(done.proof_id);
    }
    // other hashes of the proof are not transaction hashes
    for (const h of [done.legs[0].anchor_id, proof.body.chains[0].legs[0].result_hash]) expect((await api(b, 'GET', `/v1/proof/tx/${h}`)).status, h).toBe(404);
    const receipt = await api(b, 'GET', `/v1/proof/tx/${done.tx_hash}/receipt`);
    expect(receipt.status).toBe(200);
    expect(receipt.body).toMatchObject({ status: 'delivered', verified: true, anchored: true });
    expect(receipt.body.receipt.start).toBe(done.tx_hash);
    expect((await api(b, 'GET', `/v1/proof/tx/${'ab'.repeat(32)}/receipt`)).status).toBe(404);

    // another organization
    const other = await createTestOrgAndKey(b.app.db, { rateLimitRpm: 100_000 });
    for (const path of [
      `/v1/transaction/${done.intent_id}`,
      `/v1/proof/${done.proof_id}`,
      `/v1/proof/${done.proof_id}/bundle`,
      `/v1/proof/tx/${done.tx_hash}`,
    ]) {
      const r = await b.app.call(path, { key: other.key });
      expect(r.status, path).toBe(404);
    }
    // proof:read is required for proofs
    const readOnly = await createTestOrgAndKey(b.app.db, { rateLimitRpm: 100_000, permissions: ['read'] });
    expect((await b.app.call(`/v1/proof/${done.proof_id}`, { key: readOnly.key })).status).toBe(403);
  });
});
