/**
 * Signature timestamps are milliseconds, as accumulate.js (Date.now()) and the Go SDK (UnixMilli) use, so a key the
 * gateway signed with stays usable with the standard tools; the network refuses a timestamp at or below the key's
 * lastUsedOn. A key already used with larger (microsecond) timestamps continues above its lastUsedOn, and two
 * signatures of one key in the same millisecond still increase. Against the ledger simulator.
 */
import { Signer, core, messaging } from 'accumulate.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LedgerTxFailedError, createLedgerClient, signatureMessageId, tx } from '../../src/ledger/index.js';
import { createAdi, executed, fundedLite, held, openTarget, type Sponsor, type Target } from '../ledger-conformance/harness.js';
import { attachSignature, signHash, keyFromSeed } from '../../src/ledger/signing.js';

let T: Target;
let sponsor: Sponsor;

beforeAll(async () => {
  T = await openTarget();
  sponsor = await fundedLite(T.client, 50_000);
});
afterAll(async () => {
  await T?.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const sign = (seed: Uint8Array, hashToSign: string) => signHash(keyFromSeed(seed), Buffer.from(hashToSign, 'hex'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('signature timestamps', () => {
  it('are the clock in milliseconds, so accumulate.js can sign with the same key afterwards', async () => {
    const c = T.client;
    // fundedLite had the gateway client sign an AddCredits with this lite key
    const lastUsedOn = Number((await c.queryAccount(sponsor.lite)).raw.lastUsedOn);
    expect(lastUsedOn).toBeGreaterThan(0);
    expect(lastUsedOn).toBeLessThanOrEqual(Date.now());
    expect(Date.now() - lastUsedOn).toBeLessThan(10 * 60_000);
    await sleep(2);
    // the same key the standard way: Signer.sign with timestamp Date.now()
    const { amount, oracle } = await c.acmeForCredits(5);
    const txn = new core.Transaction({ header: { principal: sponsor.lta }, body: tx.addCredits({ recipient: sponsor.lite, amount, oracle }) });
    const sig = await Signer.forLite(sponsor.key.key).sign(txn, { timestamp: Date.now() });
    const r = await c.submit(new messaging.Envelope({ transaction: [txn], signatures: [sig] }));
    const st = await c.waitForTransaction(r.txId, { timeoutMs: 30_000 });
    expect(st.status).toBe('delivered');
  });

  it('a key whose lastUsedOn is in microseconds (signed before this change) keeps working', async () => {
    const adi = await createAdi(T.client, sponsor, 500);
    const micros = Date.now() * 1000;
    const old = await T.client.prepareExternalSignature({
      principal: adi.url,
      body: tx.createDataAccount({ url: `${adi.url}/d1` }),
      signerUrl: adi.page,
      publicKey: adi.key.publicKey,
      timestamp: micros,
    });
    await executed(T.client, T.client.submitExternalSignature(old, sign(adi.key.seed, old.hashToSign)));
    const page = await T.client.queryKeyPage(adi.page);
    expect(page.keys[0]!.lastUsedOn).toBe(micros);
    // a fresh client (no memory of what it issued) reads lastUsedOn from the page and goes above it
    const fresh = createLedgerClient({ url: T.client.url });
    const p = await fresh.prepareExternalSignature({
      principal: adi.url,
      body: tx.createDataAccount({ url: `${adi.url}/d2` }),
      signerUrl: adi.page,
      publicKey: adi.key.publicKey,
    });
    expect(p.timestamp).toBe(micros + 1);
    const st = await executed(fresh, fresh.submitExternalSignature(p, sign(adi.key.seed, p.hashToSign)));
    expect(st.status).toBe('delivered');
  });

  it('two signatures of one key in the same millisecond still increase, and the ledger takes both', async () => {
    const adi = await createAdi(T.client, sponsor, 500);
    await sleep(2);
    const c = createLedgerClient({ url: T.client.url });
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now);
    const a = await c.prepareExternalSignature({
      principal: adi.url,
      body: tx.createDataAccount({ url: `${adi.url}/a` }),
      signerUrl: adi.page,
      publicKey: adi.key.publicKey,
    });
    const b = await c.prepareExternalSignature({
      principal: adi.url,
      body: tx.createDataAccount({ url: `${adi.url}/b` }),
      signerUrl: adi.page,
      publicKey: adi.key.publicKey,
    });
    expect(await c.nextTimestamp(adi.page, adi.key.publicKey)).toBe(now + 2);
    vi.restoreAllMocks();
    expect(a.timestamp).toBe(now);
    expect(b.timestamp).toBe(now + 1);
    await executed(c, c.submitExternalSignature(a, sign(adi.key.seed, a.hashToSign)));
    await executed(c, c.submitExternalSignature(b, sign(adi.key.seed, b.hashToSign)));
    expect((await c.queryKeyPage(adi.page)).keys[0]!.lastUsedOn).toBe(now + 1);
  });

  it('the held-key path (signAndSubmit) uses the same rule', async () => {
    const adi = await createAdi(T.client, sponsor, 500);
    const before = Date.now();
    const st = await executed(T.client, T.client.signAndSubmit(adi.url, tx.createDataAccount({ url: `${adi.url}/h` }), held(adi.key, adi.page)));
    const ts = st.signatures.find((s) => s.signer === adi.page)?.timestamp;
    expect(ts).toBeGreaterThanOrEqual(before);
    expect(ts).toBeLessThanOrEqual(Date.now());
  });
});

describe('one held key signing twice at once', () => {
  it('sends the second signature only after the node answered the first, so both are delivered', async () => {
    const adi = await createAdi(T.client, sponsor, 500);
    // the first submission reaches the node 150 ms late (a node busy for a moment, a slow connection); sent side by
    // side, the second (later timestamp) would be delivered first and the first refused for its older timestamp
    let submits = 0;
    const slowFirstSubmit: typeof fetch = async (input, init) => {
      if (String(init?.body).includes('"method":"submit"') && ++submits === 1) await sleep(150);
      return fetch(input, init);
    };
    const c = createLedgerClient({ url: T.client.url, fetch: slowFirstSubmit });
    const key = held(adi.key, adi.page);
    const sent = await Promise.all(['x', 'y'].map((n) => c.signAndSubmit(adi.url, tx.createDataAccount({ url: `${adi.url}/${n}` }), key)));
    const done = await Promise.all(sent.map((s) => c.waitForTransaction(s.txId, { timeoutMs: 10_000 })));
    expect(done.map((st) => st.status)).toEqual(['delivered', 'delivered']);
    const [a, b] = done.map((st) => st.signatures.find((s) => s.signer === adi.page)!.timestamp!);
    expect(a).toBeLessThan(b!);
  });
});

describe('a signature refused when its block executes it', () => {
  it('ends the wait for its transaction at once when the wait names the signature', async () => {
    const sim = T.sim;
    if (!sim) return; // needs the simulator's own submit, to put both signatures into one block in a chosen order
    const adi = await createAdi(T.client, sponsor, 500);
    const c = T.client;
    const prep = (n: string) =>
      c.prepareExternalSignature({
        principal: adi.url,
        body: tx.createDataAccount({ url: `${adi.url}/${n}` }),
        signerUrl: adi.page,
        publicKey: adi.key.publicKey,
      });
    const first = await prep('first');
    const second = await prep('second');
    const envelope = (p: typeof first) =>
      new messaging.Envelope({
        transaction: [new core.Transaction(p.transaction!.asObject())],
        signatures: [attachSignature(p.metadata, sign(adi.key.seed, p.hashToSign), Buffer.from(p.txHash, 'hex'))],
      }).asObject();
    // both pass the check on submission (nothing of the key delivered yet); in the block the later timestamp goes
    // first, so the earlier one is refused there and its transaction stays pending without a signature
    sim.ledger.submit(envelope(second));
    const submissions = sim.ledger.submit(envelope(first));
    const sigId = signatureMessageId({ submissions }, first.txHash);
    expect(sigId).toBeDefined();
    const t0 = Date.now();
    const err = await c.waitForTransaction(first.txId, { timeoutMs: 20_000, signature: sigId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerTxFailedError);
    expect((err as LedgerTxFailedError).code).toBe('badTimestamp');
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect((await c.getTransaction(first.txId)).delivered).toBe(false);
    expect((await c.waitForTransaction(second.txId, { timeoutMs: 10_000 })).status).toBe('delivered');
  });
});
