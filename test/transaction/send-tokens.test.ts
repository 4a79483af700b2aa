/**
 * The ledger token transfer intent `{ type: "sendTokens", to, amount }` on the devnet (ledger simulator, no
 * validators: a transfer has no chain leg and no validator round):
 *
 *   provisioning  a new identity gets its ACME token account acc://<adi>/tokens
 *   transfer      funded from the faucet, a sendTokens intent is prepared, signed and delivered; it completes with
 *                 a proof made of the ledger's receipt (the artifact, the bundle with the receipt folding from the
 *                 transaction hash to its anchor, the receipt endpoint), and the recipient's balance grows by the
 *                 amount while the sender's shrinks by it
 *   short         a balance short of the amount is refused at prepare (402 naming intent.amount with the balance);
 *                 one spent between prepare and delivery fails the intent with the ledger's reason
 *   older         an identity provisioned before token accounts (made here on the ledger and in the database as
 *                 provisioning made them then) answers 409 NO_TOKEN_ACCOUNT naming the account it lacks and the
 *                 governance operation create_token_account; that operation, signed by the identity's key, creates
 *                 the account (a second one is refused as changing nothing), and once funded the identity sends
 *   inputs        a `to` that is no token account URL, or names no ACME token account, is a 400 naming intent.to;
 *                 an amount beyond ACME's 8 decimals, zero or negative a 400 naming intent.amount
 */
import { randomBytes } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdentityWithinQuota, markIdentityActive } from '../../src/db/identities.js';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import { verifyBundle } from '../../src/proof/verify.js';
import { workflowBundle } from '../../src/temporal/worker.js';
import { createSponsor } from '../../src/identity/sponsor.js';
import { ensureAdi, sendFaucetTokens, verifyReceipt } from '../../src/ledger/index.js';
import { answerDeviations } from '../support/conventions.js';
import { dbKinds } from '../support/env.js';
import { newClientKey, pollIdentity, startIdentityApp, startIdentityDevnet, startWorker, uniqueName, type IdentityDevnet } from '../identity/devnet.js';
import { sign, type Json } from './support.js';

type App = Awaited<ReturnType<typeof startIdentityApp>>;
type Identity = { id: string; adiUrl: string; tokens: string; key: ReturnType<typeof newClientKey> };

let dn: IdentityDevnet;
let app: App;
let worker: Awaited<ReturnType<typeof startWorker>>;
let alice: Identity;
let bob: Identity;
const faucetKey = randomBytes(32);

async function api(method: string, path: string, body?: unknown) {
  const res = await app.call(path, { method, key: app.key.key, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, body: json };
}

async function createIdentity(): Promise<Identity> {
  const key = newClientKey();
  const r = await api('POST', '/v1/identity', { name: uniqueName('tok'), public_key: key.publicKey, credits: 100 });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const done = await pollIdentity(app, r.body.identity.id, (x) => x.status !== 'creating', 90_000);
  expect(done.status, JSON.stringify(done)).toBe('active');
  return { id: done.id, adiUrl: done.adi_url, tokens: `${done.adi_url}/tokens`, key };
}

const balance = async (url: string) => BigInt((await dn.ledger.tryQueryAccount(url))?.balance ?? '0');
const ACME = 100_000_000n;

const prepare = (who: Identity, intent: Json) => api('POST', '/v1/transaction', { identity_id: who.id, intent });

async function signIntent(who: Identity, p: Json) {
  const r = await api('POST', `/v1/transaction/${p.intent_id}/signature`, {
    signature: sign(p.signing_data.hash_to_sign, who.key.secretKey),
    public_key: who.key.publicKey,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

async function waitEnd(id: string, timeoutMs = 60_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api('GET', `/v1/transaction/${id}`);
    if (['completed', 'failed', 'expired'].includes(r.body.status)) return r.body;
    if (Date.now() > deadline) throw new Error(`intent ${id} did not end: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

beforeAll(async () => {
  dn = await startIdentityDevnet();
  app = await startIdentityApp(dn, dbKinds().includes('postgres') ? 'postgres' : 'pglite');
  worker = await startWorker(app.config, app.db);
  [alice, bob] = await Promise.all([createIdentity(), createIdentity()]);
  // 5 ACME for alice from the devnet's faucet
  await sendFaucetTokens(dn.ledger, faucetKey, alice.tokens, 5n * ACME);
}, 240_000);

afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await dn?.stop();
});

describe('sendTokens: a ledger token transfer', () => {
  it('provisioning gives a new identity its ACME token account <adi>/tokens', async () => {
    for (const who of [alice, bob]) {
      const acct = await dn.ledger.queryAccount(who.tokens);
      expect(acct.type).toBe('tokenAccount');
      expect(String(acct.raw.tokenUrl).toLowerCase()).toBe('acc://acme');
    }
    expect(await balance(alice.tokens)).toBe(5n * ACME);
  });

  it('is prepared, signed and delivered; its proof is the ledger receipt; the recipient gets the amount', async () => {
    const [fromBefore, toBefore] = [await balance(alice.tokens), await balance(bob.tokens)];
    const p = await prepare(alice, { type: 'sendTokens', to: bob.tokens, amount: 1.5 });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    expect(p.body.status).toBe('signing_required');
    expect(p.body.signing_data.hash_to_sign).toMatch(/^[0-9a-f]{64}$/);
    const s = await signIntent(alice, p.body);
    expect(s.status).toBe('submitted');
    const done = await waitEnd(p.body.intent_id);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    // the ledger-only path of intentWorkflow (behind patched('ledger-only-intent')) replays deterministically
    const history = await app.deps.temporal.workflow.getHandle(`intent-${p.body.intent_id}`).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, `intent-${p.body.intent_id}`);
    expect(done.intent_type).toBe('sendTokens');
    expect(done.tx_hash).toBe(s.tx_hash);
    expect(done.proof_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(done.legs).toEqual([]);
    expect(done.transfer).toEqual({
      from: alice.tokens,
      to: bob.tokens.toLowerCase(),
      amount: '150000000',
      amount_acme: '1.5',
      receipt_url: `/v1/proof/tx/${s.tx_hash}/receipt`,
    });

    // the recipient holds 1.5 ACME more, the sender 1.5 ACME less
    expect(await balance(bob.tokens)).toBe(toBefore + 150_000_000n);
    expect(await balance(alice.tokens)).toBe(fromBefore - 150_000_000n);

    const artifact = await api('GET', `/v1/proof/${done.proof_id}`);
    expect(artifact.status, JSON.stringify(artifact.body)).toBe(200);
    expect(artifact.body.ledger.tx_hash).toBe(s.tx_hash);
    expect(artifact.body.ledger.key_page.toLowerCase()).toBe(`${alice.adiUrl}/book/1`.toLowerCase());
    expect(artifact.body.chains).toEqual([]);
    expect(artifact.body.status).toBe('complete');
    const byTx = await api('GET', `/v1/proof/tx/${s.tx_hash}`);
    expect(byTx.body.proof_id).toBe(done.proof_id);

    const bundle = await api('GET', `/v1/proof/${done.proof_id}/bundle`);
    expect(bundle.status).toBe(200);
    expect(bundle.body.version).toBe('pgw-ledger-receipt/1');
    expect(bundle.body.intent).toMatchObject({ type: 'sendTokens', to: bob.tokens.toLowerCase(), amount: '150000000', amount_acme: '1.5' });
    expect(bundle.body.ledger.receipt.start).toBe(s.tx_hash);
    expect(verifyReceipt(bundle.body.ledger.receipt, { expectStart: s.tx_hash })).toBe(true);
    expect(bundle.body.ledger.transaction.body.type).toBe('sendTokens');
    // the offline verifier reads it: transaction, signatures, threshold, receipt; a changed amount breaks it
    const verified = await verifyBundle(bundle.body);
    expect(verified.checks.filter((c) => !c.ok)).toEqual([]);
    expect(verified.valid).toBe(true);
    expect(verified.checks.map((c) => c.name)).toEqual(
      expect.arrayContaining(['bundle.hash', 'ledger.transaction', 'ledger.signatures', 'ledger.authority', 'ledger.receipt']),
    );
    const forged = await verifyBundle({ ...bundle.body, intent: { ...bundle.body.intent, amount: '150000001' } });
    expect(forged.valid).toBe(false);
    expect(forged.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['bundle.hash', 'ledger.transaction']);

    const receipt = await api('GET', `/v1/proof/tx/${s.tx_hash}/receipt`);
    expect(receipt.status, JSON.stringify(receipt.body)).toBe(200);
    expect(receipt.body).toMatchObject({ tx_hash: s.tx_hash, status: 'delivered', verified: true });
    expect(receipt.body.receipt.anchor).toBe(bundle.body.ledger.receipt.anchor);

    // every answer in the forms of docs/api-conventions.md
    for (const [what, body] of Object.entries({
      prepare: p.body,
      signature: s,
      intent: done,
      artifact: artifact.body,
      bundle: bundle.body,
      receipt: receipt.body,
    }))
      expect(answerDeviations(body), what).toEqual([]);
  });

  it('a balance short of the amount is refused at prepare, naming intent.amount and the balance', async () => {
    const have = await balance(alice.tokens);
    const r = await prepare(alice, { type: 'sendTokens', to: bob.tokens, amount: 1000 });
    expect(r.status, JSON.stringify(r.body)).toBe(402);
    expect(r.body.code).toBe('INSUFFICIENT_BALANCE');
    expect(r.body.details.field).toBe('intent.amount');
    expect(r.body.details.balance_base_units).toBe(have.toString());
    expect(r.body.error).toContain('intent.amount');
  });

  it('a balance spent between prepare and delivery fails the intent with the ledger reason', async () => {
    const have = await balance(alice.tokens);
    const amount = Number(have - ACME / 2n) / Number(ACME); // more than half: two of them do not fit
    const a = await prepare(alice, { type: 'sendTokens', to: bob.tokens, amount });
    const b = await prepare(alice, { type: 'sendTokens', to: bob.tokens, amount });
    expect([a.status, b.status], JSON.stringify([a.body, b.body])).toEqual([201, 201]);
    await signIntent(alice, a.body);
    expect((await waitEnd(a.body.intent_id)).status).toBe('completed');
    await signIntent(alice, b.body);
    const failed = await waitEnd(b.body.intent_id);
    expect(failed.status).toBe('failed');
    expect(failed.error_message).toMatch(/insufficient balance/i);
    expect(failed.proof_id ?? null).toBeNull();
  });

  it('a `to` that is no ACME token account is a 400 naming intent.to', async () => {
    for (const to of ['not a url', 'https://bob.acme/tokens', 'acc://nobody-here-x1.acme/tokens', bob.adiUrl, `${bob.adiUrl}/book`, alice.tokens, 42]) {
      const r = await prepare(alice, { type: 'sendTokens', to, amount: 0.1 });
      expect(r.status, `${to}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.details.field, String(to)).toBe('intent.to');
    }
  });

  it('an amount beyond ACME precision, zero, negative or not a number is a 400 naming intent.amount', async () => {
    for (const amount of [0.000000001, '1.123456789', 0, -1, 'abc', null]) {
      const r = await prepare(alice, { type: 'sendTokens', to: bob.tokens, amount });
      expect(r.status, `${amount}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.details.field, String(amount)).toBe('intent.amount');
    }
    const tooPrecise = await prepare(alice, { type: 'sendTokens', to: bob.tokens, amount: 0.000000001 });
    expect(tooPrecise.body.error).toMatch(/8/);
    // 8 decimals is ACME's precision: the smallest amount goes through prepare
    const smallest = await prepare(alice, { type: 'sendTokens', to: bob.tokens, amount: 0.00000001 });
    expect(smallest.status, JSON.stringify(smallest.body)).toBe(201);
  });

  it('an identity provisioned before token accounts: 409 NO_TOKEN_ACCOUNT naming create_token_account, which makes the account; funded, it sends', async () => {
    const key = newClientKey();
    const name = uniqueName('old');
    const url = `acc://${name}.acme`;
    const sponsor = createSponsor(dn.env.SPONSOR_KEY!);
    // what provisioning made before token accounts: the ADI, credits on page 1, the data account, the client's key
    await ensureAdi(dn.ledger, {
      url,
      publicKeyHash: publicKeyHashHex(key.publicKey),
      sponsor: sponsor.asLite(),
      sponsorTokenAccount: sponsor.liteTokenAccount,
      // enough for its data account, then the token account and a transfer
      pageCredits: 100,
      dataAccounts: [`${url}/data`],
      owner: { privateKey: key.secretKey, signerUrl: `${url}/book/1` },
    });
    const created = await createIdentityWithinQuota(app.db, {
      id: crypto.randomUUID(),
      orgId: app.key.orgId,
      name,
      adiUrl: url,
      bookUrl: `${url}/book`,
      keyPageUrl: `${url}/book/1`,
      dataAccountUrl: `${url}/data`,
      publicKey: key.publicKey,
      publicKeyHash: publicKeyHashHex(key.publicKey),
      requestedChains: [],
      requestedCredits: 0n,
    });
    if (!created.ok) throw new Error(`identity row: ${created.reason}`);
    await markIdentityActive(app.db, created.identity.id, 100n);
    const old: Identity = { id: created.identity.id, adiUrl: url, tokens: `${url}/tokens`, key };

    const r = await prepare(old, { type: 'sendTokens', to: bob.tokens, amount: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(409);
    expect(r.body.code).toBe('NO_TOKEN_ACCOUNT');
    expect(r.body.details).toEqual({ token_account: old.tokens, operation: 'create_token_account' });
    expect(r.body.error).toContain('create_token_account');
    expect(await dn.ledger.tryQueryAccount(old.tokens)).toBeUndefined();

    // the account must be one of the identity's ADI, directly under it
    const outside = await api('POST', '/v1/governance', { identity: old.id, operations: [{ type: 'create_token_account', url: `${bob.adiUrl}/more` }] });
    expect(outside.status, JSON.stringify(outside.body)).toBe(400);
    expect(outside.body.details.field).toBe('operations[0].url');

    // the governance operation, signed by the identity's key, creates <adi>/tokens for ACME
    const op = await api('POST', '/v1/governance', { identity: old.id, operations: [{ type: 'create_token_account' }] });
    expect(op.status, JSON.stringify(op.body)).toBe(201);
    expect(op.body).toMatchObject({ status: 'signing_required', kind: 'create_token_account' });
    expect(op.body.operations).toEqual([{ type: 'create_token_account', url: old.tokens }]);
    const signed = await api('POST', `/v1/governance/${op.body.governance_op_id}/signature`, {
      signature: sign(op.body.signing_data.hash_to_sign, key.secretKey),
      public_key: key.publicKey,
    });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    const deadline = Date.now() + 30_000;
    let got = await api('GET', `/v1/governance/${op.body.governance_op_id}`);
    while (got.body.status !== 'executed' && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 50));
      got = await api('GET', `/v1/governance/${op.body.governance_op_id}`);
    }
    expect(got.body.status, JSON.stringify(got.body)).toBe('executed');
    const acct = await dn.ledger.queryAccount(old.tokens);
    expect(acct.type).toBe('tokenAccount');
    expect(String(acct.raw.tokenUrl).toLowerCase()).toBe('acc://acme');

    // once more changes nothing: refused like every such operation, naming it
    const again = await api('POST', '/v1/governance', { identity: old.id, operations: [{ type: 'create_token_account' }] });
    expect(again.status, JSON.stringify(again.body)).toBe(400);
    expect(again.body.code).toBe('VALIDATION_ERROR');
    expect(again.body.details.field).toBe('operations[0]');
    expect(again.body.error).toMatch(/already exists.*the operation changes nothing/);

    // funded from the faucet, its sendTokens completes
    await sendFaucetTokens(dn.ledger, faucetKey, old.tokens, 2n * ACME);
    const toBefore = await balance(bob.tokens);
    const p = await prepare(old, { type: 'sendTokens', to: bob.tokens, amount: 1 });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    await signIntent(old, p.body);
    const done = await waitEnd(p.body.intent_id);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(await balance(bob.tokens)).toBe(toBefore + ACME);
    expect(await balance(old.tokens)).toBe(ACME);
    for (const [what, body] of Object.entries({ refused: r.body, op: op.body, signed: signed.body, again: again.body }))
      expect(answerDeviations(body), what).toEqual([]);
  });
});
