/**
 * Credits after creation and authority changes the guard understands, on the proof-cycle devnet:
 *
 *   credits   an identity created with credits 0 is refused at prepare (402 naming POST /v1/identity/{id}/credits);
 *             it buys credits from the organization's grant (charged exactly, idempotent, beyond the grant a 402
 *             naming what remains) and completes an intent; a page made by create_key_page gets its own credits and
 *             an intent signed from it (signer_key_page) completes.
 *   authority add_authority on the identity's data account (which inherits the ADI's authority) keeps the identity's
 *             book: once the new book has co-signed, the identity's next intent completes (with the new book's
 *             approval); taking the identity's book off is refused unless forced; force sends the operations as given.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import { newClientKey } from '../identity/devnet.js';
import { testTargetLeg } from '../support/test-target.js';
import { api, arg, createCycleIdentity, SEPOLIA, sign, startCycleBench, waitIntent, type CycleBench, type Json } from '../transaction/support.js';

type Key = ReturnType<typeof newClientKey>;
type Identity = Awaited<ReturnType<typeof createCycleIdentity>>;

let b: CycleBench;

beforeAll(async () => {
  b = await startCycleBench();
}, 240_000);

afterAll(async () => {
  await b?.stop();
});

const leg = (who: Identity) =>
  testTargetLeg({ chain: SEPOLIA, account: who.account as Address, target: b.targets[SEPOLIA.name]!, arg: arg(`credits-${randomUUID()}`) });

const prepareFor = (who: Identity, extra: Json = {}) =>
  api(b, 'POST', '/v1/transaction', { identity_id: who.id, intent: { adiUrl: who.adiUrl, legs: [leg(who)] }, ...extra });

async function submitWith(p: Json, k: Key) {
  const r = await api(b, 'POST', `/v1/transaction/${p.intent_id}/signature`, {
    signature: sign(p.signing_data.hash_to_sign, k.secretKey),
    public_key: k.publicKey,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

async function governance(who: { adiUrl: string; key: Key }, operations: unknown[], extra: Json = {}) {
  const op = await api(b, 'POST', '/v1/governance', { identity: who.adiUrl, operations, ...extra });
  expect(op.status, JSON.stringify(op.body)).toBe(201);
  const s = await api(b, 'POST', `/v1/governance/${op.body.governance_op_id}/signature`, {
    signature: sign(op.body.signing_data.hash_to_sign, who.key.secretKey),
    public_key: who.key.publicKey,
  });
  expect(s.status, JSON.stringify(s.body)).toBe(200);
  return { op: op.body, signed: s.body };
}

async function governanceStatus(id: string, status: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await api(b, 'GET', `/v1/governance/${id}`);
    if (r.body.status === status) return r.body;
    if (Date.now() > deadline) throw new Error(`governance ${id} is not ${status}: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** `who`'s seat `k` approves the pending ledger transaction `txHash` through POST /v1/sign. */
async function cosign(who: Identity, k: Key, txHash: string) {
  const req = await api(b, 'POST', '/v1/sign', { type: 'pending_tx', target_id: txHash, identity: who.adiUrl, public_key: k.publicKey });
  expect(req.status, JSON.stringify(req.body)).toBe(201);
  const r = await api(b, 'POST', `/v1/sign/${req.body.sign_request_id}/signature`, {
    signature: sign(req.body.signing_data.data_for_signature, k.secretKey),
    public_key: k.publicKey,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

const creditsRemaining = async () => (await api(b, 'GET', '/v1/me')).body.organization.credits_remaining as number;

describe('credits after creation', () => {
  let Z: Identity;
  const page2Key = newClientKey();

  it('an identity created with credits 0 is refused at prepare, naming the endpoint that buys them', async () => {
    Z = await createCycleIdentity(b, 0);
    const r = await prepareFor(Z);
    expect(r.status, JSON.stringify(r.body)).toBe(402);
    expect(r.body.code).toBe('INSUFFICIENT_CREDITS');
    expect(r.body.error).toContain(`POST /v1/identity/${Z.id}/credits`);
  }, 120_000);

  it('refuses what it cannot buy: a bad amount, a page outside the book, an unknown identity, more than the grant', async () => {
    const zero = await api(b, 'POST', `/v1/identity/${Z.id}/credits`, { credits: 0 });
    expect(zero.status).toBe(400);
    expect(zero.body.details).toMatchObject({ field: 'credits' });
    const outside = await api(b, 'POST', `/v1/identity/${Z.id}/credits`, { credits: 1, key_page_url: `${b.identity.adiUrl}/book/1` });
    expect(outside.status).toBe(400);
    expect(outside.body.details).toMatchObject({ field: 'key_page_url' });
    const missing = await api(b, 'POST', `/v1/identity/${Z.id}/credits`, { credits: 1, key_page_url: `${Z.adiUrl}/book/9` });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/^key_page_url: .* does not exist/);
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const unknown = await api(b, 'POST', `/v1/identity/${id}/credits`, { credits: 1 });
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('IDENTITY_NOT_FOUND');
    }
    const before = await creditsRemaining();
    const tooMany = await api(b, 'POST', `/v1/identity/${Z.id}/credits`, { credits: before + 1 });
    expect(tooMany.status, JSON.stringify(tooMany.body)).toBe(402);
    expect(tooMany.body).toMatchObject({ code: 'CREDIT_GRANT_EXCEEDED', details: { field: 'credits', remaining: before } });
    expect(tooMany.body.error).toContain(`only ${before} remain`);
    expect(await creditsRemaining()).toBe(before);
  });

  it('buys credits from the grant, once per Idempotency-Key, and answers the live balance', async () => {
    const before = await creditsRemaining();
    const key = randomUUID();
    // enough for an intent and the CreateKeyPage (100 credits) of the next test
    const first = await api(b, 'POST', `/v1/identity/${Z.id}/credits`, { credits: 300 }, { 'Idempotency-Key': key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const page = await b.dn.ledger.queryKeyPage(`${Z.adiUrl}/book/1`);
    expect(first.body).toMatchObject({
      status: 'completed',
      identity_id: Z.id,
      key_page_url: `${Z.adiUrl}/book/1`,
      credits_added: 300,
      credit_balance: Math.floor(page.creditBalance / 100),
      tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(first.body.credit_balance).toBeGreaterThanOrEqual(300);
    const replay = await api(b, 'POST', `/v1/identity/${Z.id}/credits`, { credits: 300 }, { 'Idempotency-Key': key });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ purchase_id: first.body.purchase_id, idempotent: true });
    expect(await creditsRemaining()).toBe(before - 300);
    expect((await b.dn.ledger.queryKeyPage(`${Z.adiUrl}/book/1`)).creditBalance).toBe(page.creditBalance);
    expect((await api(b, 'GET', `/v1/identity/${Z.id}`)).body.credit_balance).toBe(first.body.credit_balance);
  });

  it('with the credits, the identity completes an intent', async () => {
    const p = await prepareFor(Z);
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    await submitWith(p.body, Z.key);
    const done = await waitIntent(b, p.body.intent_id);
    expect(done.error_message ?? null).toBeNull();
    expect(done.status).toBe('completed');
  }, 150_000);

  it('a page made by create_key_page gets credits of its own, and an intent signed from it completes', async () => {
    const { op } = await governance(Z, [{ type: 'create_key_page', public_key_hashes: [publicKeyHashHex(page2Key.publicKey)] }]);
    await governanceStatus(op.governance_op_id, 'executed');
    const page2 = `${Z.adiUrl}/book/2`;
    const seat = { signer_key_page: page2, signer_public_key: page2Key.publicKey };
    const refused = await prepareFor(Z, seat);
    expect(refused.status, JSON.stringify(refused.body)).toBe(402);
    expect(refused.body.error).toContain(`POST /v1/identity/${Z.id}/credits with key_page_url ${page2}`);

    const bought = await api(b, 'POST', `/v1/identity/${Z.id}/credits`, { credits: 100, key_page_url: page2 });
    expect(bought.status, JSON.stringify(bought.body)).toBe(200);
    expect(bought.body).toMatchObject({ key_page_url: page2, credits_added: 100 });
    expect(bought.body.credit_balance).toBeGreaterThanOrEqual(100);
    expect((await b.dn.ledger.queryKeyPage(page2)).creditBalance).toBe(bought.body.credit_balance * 100);

    const p = await prepareFor(Z, seat);
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    await submitWith(p.body, page2Key);
    const done = await waitIntent(b, p.body.intent_id);
    expect(done.error_message ?? null).toBeNull();
    expect(done.status).toBe('completed');
  }, 180_000);
});

describe('add_authority on the data account that inherits the ADI authority', () => {
  let O: Identity;

  it('keeps the identity book: the operation adds it explicitly before the new one, and the new book co-signs', async () => {
    O = await createCycleIdentity(b, 100);
    const data = `${b.identity.adiUrl}/data`;
    const ownBook = `${b.identity.adiUrl}/book`;
    const otherBook = `${O.adiUrl}/book`;
    expect((await b.dn.ledger.queryAccount(data)).authorities).toEqual([]);

    // force sends the operations as given (not signed: it would take the identity's book off its data account)
    const forced = await api(b, 'POST', '/v1/governance', {
      identity: b.identity.adiUrl,
      account_url: data,
      operations: [{ type: 'add_authority', authority_url: otherBook }],
      force: true,
    });
    expect(forced.status, JSON.stringify(forced.body)).toBe(201);
    expect(forced.body.operations).toEqual([{ type: 'add_authority', authority_url: otherBook }]);

    const { op, signed } = await governance(b.identity, [{ type: 'add_authority', authority_url: otherBook }], { account_url: data });
    expect(op.operations).toEqual([
      { type: 'add_authority', authority_url: ownBook },
      { type: 'add_authority', authority_url: otherBook },
    ]);
    expect(signed).toMatchObject({ status: 'pending_signatures', awaiting_authorities: [otherBook] });
    await cosign(O, O.key, op.tx_hash);
    await governanceStatus(op.governance_op_id, 'executed');
    const auths = (await b.dn.ledger.queryAccount(data)).authorities.map((a) => a.url.toLowerCase());
    expect(auths.sort()).toEqual([ownBook, otherBook].sort());
  }, 180_000);

  it('the identity signs its next intent, which completes once the new book approves', async () => {
    const p = await api(b, 'POST', '/v1/transaction', {
      identity_id: b.identity.id,
      intent: { adiUrl: b.identity.adiUrl, legs: [leg(b.identity)] },
    });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    const s = await submitWith(p.body, b.identity.key);
    expect(s.status).toBe('submitted');
    await cosign(O, O.key, s.tx_hash);
    const done = await waitIntent(b, p.body.intent_id);
    expect(done.error_message ?? null).toBeNull();
    expect(done.status).toBe('completed');
  }, 150_000);

  it("taking the identity's book off its data account is refused unless forced; adding a present book changes nothing", async () => {
    const data = `${b.identity.adiUrl}/data`;
    const body = { identity: b.identity.adiUrl, account_url: data, operations: [{ type: 'remove_authority', authority_url: `${b.identity.adiUrl}/book` }] };
    const refused = await api(b, 'POST', '/v1/governance', body);
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body).toMatchObject({ code: 'QUORUM_UNREACHABLE', error: expect.stringMatching(/could not sign its intents/) });
    expect((await api(b, 'POST', '/v1/governance', { ...body, force: true })).status).toBe(201);
    const present = await api(b, 'POST', '/v1/governance', {
      identity: b.identity.adiUrl,
      account_url: data,
      operations: [{ type: 'add_authority', authority_url: `${O.adiUrl}/book` }],
    });
    expect(present.status).toBe(400);
    expect(present.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'operations[0]' } });
    expect(present.body.error).toMatch(/already an authority of .*: the operation changes nothing$/);
  });
});
