/**
 * Ledger conformance: one set of scenarios through LedgerClient, against ledger-sim by default or the node
 * at ACC_ENDPOINT (see scripts/go-simulator-conformance.sh for the official Go simulator).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519 } from '@noble/curves/ed25519.js';
import { core, messaging } from 'accumulate.js';
import { LedgerInputError, LedgerRpcError, attachSignature, dataEntryHash, toHex, tx, verifyReceipt } from '../../src/ledger/index.js';
import { createAdi, executed, failureCode, fundedLite, held, newKey, openTarget, settle, waitFor, type Adi, type Sponsor, type Target } from './harness.js';

let T: Target;
let sponsor: Sponsor;

beforeAll(async () => {
  T = await openTarget();
  sponsor = await fundedLite(T.client);
}, 120_000);

afterAll(async () => {
  await T?.stop();
});

const sign = (seed: Uint8Array, hashHex: string) => ed25519.sign(Buffer.from(hashHex, 'hex'), seed);

describe('ledger conformance', () => {
  let adi: Adi;
  let data: string;

  it('creates an ADI with key book and page 1', async () => {
    const c = T.client;
    adi = await createAdi(c, sponsor);
    const page = await c.queryKeyPage(adi.page);
    expect(page.version).toBe(1);
    expect(page.acceptThreshold).toBe(1);
    expect(page.keys.map((k) => k.publicKeyHash)).toEqual([adi.key.pkh]);
    const id = await c.queryAccount(adi.url);
    expect(id.type).toBe('identity');
    expect(id.authorities.map((a) => a.url.toLowerCase())).toContain(adi.book.toLowerCase());
  });

  it('adds credits at the live oracle price (units = amount × price / 1e8)', async () => {
    const c = T.client;
    const before = (await c.queryKeyPage(adi.page)).creditBalance;
    const { amount, oracle } = await c.acmeForCredits(100);
    const r = await c.signAndSubmit(sponsor.lta, tx.addCredits({ recipient: adi.page, amount, oracle }), held(sponsor.key, sponsor.lite));
    // waitProduced: the credits arrive by a synthetic deposit the AddCredits produced
    const st = await c.waitForTransaction(r.txId, { waitProduced: true, throwOnFailure: true });
    expect(st.type).toBe('addCredits');
    expect(st.produced.length).toBeGreaterThan(0);
    const want = before + Number((amount * BigInt(oracle)) / 100_000_000n);
    expect((await c.queryKeyPage(adi.page)).creditBalance).toBe(want);
    // a wrong oracle value is refused
    const code = await failureCode(
      c,
      c.signAndSubmit(sponsor.lta, tx.addCredits({ recipient: adi.page, amount, oracle: oracle + 1 }), held(sponsor.key, sponsor.lite)),
    );
    expect(code).not.toBe('delivered');
  });

  it('creates a data account and writes a double-hash entry (external signature), reads it back', async () => {
    const c = T.client;
    data = `${adi.url}/data`;
    await executed(c, c.signAndSubmit(adi.url, tx.createDataAccount({ url: data }), held(adi.key, adi.page)));
    const parts = ['{"intent":"conformance"}', 'part-2'];
    const prepared = await c.prepareExternalSignature({ principal: data, body: tx.writeData(parts), signerUrl: adi.page, publicKey: adi.key.publicKey });
    expect(prepared.initiator).toBe(true);
    expect(prepared.signerVersion).toBe(1);
    const st = await executed(c, c.submitExternalSignature(prepared, sign(adi.key.seed, prepared.hashToSign)));
    expect(st.txHash).toBe(prepared.txHash);
    const expectedEntry = toHex(dataEntryHash(parts));
    expect(String(st.result?.entryHash ?? '')).toBe(expectedEntry);
    const latest = await c.readLatestDataEntry(data);
    expect(latest.entryHash).toBe(expectedEntry);
    expect(latest.data.map((d) => Buffer.from(d, 'hex').toString())).toEqual(parts);
    const all = await c.readDataEntries(data);
    expect(all.length).toBeGreaterThanOrEqual(1);
    const mine = all.find((e) => e.entryHash === expectedEntry)!;
    expect(mine.data.map((d) => Buffer.from(d, 'hex').toString())).toEqual(parts);
    expect(mine.txHash).toBe(prepared.txHash);
  });

  it('verifies a Merkle receipt for a delivered transaction', async () => {
    const c = T.client;
    const st = await executed(c, c.signAndSubmit(data, tx.writeData(['receipt-me']), held(adi.key, adi.page)));
    // let the chain anchor (the real network anchors a block or more later)
    const r = await waitFor('receipt', async () => {
      const x = await c.getReceipt(data, st.txHash);
      return x.verified && x.receipt.entries.length > 0 ? x : undefined;
    });
    expect(r.receipt.start).toBe(st.txHash);
    expect(verifyReceipt(r.receipt)).toBe(true);
    const tampered = { ...r.receipt, entries: r.receipt.entries.map((e, i) => (i === 0 ? { ...e, right: !e.right } : e)) };
    expect(verifyReceipt(tampered)).toBe(false);
  });

  describe('2-of-3 page', () => {
    let k2: ReturnType<typeof newKey>;
    let k3: ReturnType<typeof newKey>;

    it('UpdateKeyPage adds two keys and sets threshold 2; version bumps and keys stay sorted', async () => {
      const c = T.client;
      k2 = newKey();
      k3 = newKey();
      await executed(
        c,
        c.signAndSubmit(
          adi.page,
          tx.updateKeyPage([
            { type: 'addKey', publicKeyHash: k2.publicKeyHash },
            { type: 'addKey', publicKeyHash: k3.publicKeyHash },
            { type: 'setThreshold', threshold: 2 },
          ]),
          held(adi.key, adi.page),
        ),
      );
      const page = await c.queryKeyPage(adi.page);
      expect(page.version).toBe(2);
      expect(page.acceptThreshold).toBe(2);
      const hashes = page.keys.map((k) => k.publicKeyHash!);
      expect(hashes).toEqual([...hashes].sort());
      expect(new Set(hashes)).toEqual(new Set([adi.key.pkh, k2.pkh, k3.pkh]));
      // the update resets every key's lastUsedOn
      expect(page.keys.every((k) => k.lastUsedOn === 0)).toBe(true);
    });

    it('accept: stays pending with one signature, listed with its signature; executes on the second', async () => {
      const c = T.client;
      const r = await c.signAndSubmit(data, tx.writeData(['2of3-accept']), held(adi.key, adi.page));
      const pend = await c.waitForTransaction(r.txId, { until: 'recorded' });
      expect(pend.status).toBe('pending');
      const list = await waitFor('pending list', async () => {
        const l = await c.listPending(data);
        return l.some((p) => p.txHash === r.txHash) ? l : undefined;
      });
      const p = list.find((x) => x.txHash === r.txHash)!;
      expect(p.signatures.some((s) => s.publicKey === toHex(adi.key.publicKey))).toBe(true);
      const st = await settle(c, c.signPending(r.txId, held(k2, adi.page), 'accept'));
      expect(st.status).toBe('delivered');
    });

    it('reject: two rejects defeat the transaction', async () => {
      const c = T.client;
      const r = await c.signAndSubmit(data, tx.writeData(['2of3-reject']), held(adi.key, adi.page));
      await c.waitForTransaction(r.txId, { until: 'recorded' });
      await c.signPending(r.txId, held(k2, adi.page), 'reject');
      const after1 = await c.waitForTransaction(r.txId, { until: 'recorded' });
      expect(after1.pending).toBe(true);
      const st = await settle(c, c.signPending(r.txId, held(k3, adi.page), 'reject'));
      expect(st.failed).toBe(true);
      expect(st.status).toBe('rejected');
    });

    it('abstain: one abstain keeps it pending; when accept can no longer be reached the page abstains and it fails', async () => {
      const c = T.client;
      const r = await c.signAndSubmit(data, tx.writeData(['2of3-abstain']), held(adi.key, adi.page));
      await c.waitForTransaction(r.txId, { until: 'recorded' });
      await c.signPending(r.txId, held(k2, adi.page), 'abstain');
      await new Promise((res) => setTimeout(res, 300));
      expect((await c.getTransaction(r.txId)).pending).toBe(true);
      const st = await settle(c, c.signPending(r.txId, held(k3, adi.page), 'abstain'));
      expect(st.failed).toBe(true);
    });

    it('stale signer version: a signature made for version 1 after the bump is refused (badSignerVersion)', async () => {
      const c = T.client;
      const prepared = await c.prepareExternalSignature({
        principal: data,
        body: tx.writeData(['stale']),
        signerUrl: adi.page,
        publicKey: adi.key.publicKey,
        signerVersion: 1,
      });
      const code = await failureCode(c, c.submitExternalSignature(prepared, sign(adi.key.seed, prepared.hashToSign)));
      expect(code).toBe('badSignerVersion');
    });
  });

  it('replayed timestamp: a second transaction reusing the key timestamp is refused (badTimestamp)', async () => {
    const c = T.client;
    const fresh = await createAdi(c, sponsor, 500);
    const first = await c.prepareExternalSignature({
      principal: fresh.url,
      body: tx.createDataAccount({ url: `${fresh.url}/d1` }),
      signerUrl: fresh.page,
      publicKey: fresh.key.publicKey,
    });
    await executed(c, c.submitExternalSignature(first, sign(fresh.key.seed, first.hashToSign)));
    const again = await c.prepareExternalSignature({
      principal: fresh.url,
      body: tx.createDataAccount({ url: `${fresh.url}/d2` }),
      signerUrl: fresh.page,
      publicKey: fresh.key.publicKey,
      timestamp: first.timestamp,
    });
    const code = await failureCode(c, c.submitExternalSignature(again, sign(fresh.key.seed, again.hashToSign)));
    expect(code).toBe('badTimestamp');
  });

  it('insufficient credits: a page without credits cannot pay for CreateDataAccount', async () => {
    const c = T.client;
    const broke = await createAdi(c, sponsor, 0);
    expect((await c.queryKeyPage(broke.page)).creditBalance).toBe(0);
    const code = await failureCode(c, c.signAndSubmit(broke.url, tx.createDataAccount({ url: `${broke.url}/data` }), held(broke.key, broke.page)));
    expect(code).toBe('insufficientCredits');
  });

  it('delegate signing: a delegate book must co-sign its addition, then signs through DelegatedSignature', async () => {
    const c = T.client;
    const owner = await createAdi(c, sponsor, 1_000);
    const del = await createAdi(c, sponsor, 1_000);
    // adding a delegate requires the delegate book's approval too
    const r = await c.signAndSubmit(owner.page, tx.updateKeyPage([{ type: 'addDelegate', delegate: del.book }]), held(owner.key, owner.page));
    const pending = await c.waitForTransaction(r.txId, { until: 'recorded' });
    expect(pending.pending).toBe(true);
    const st = await settle(c, c.signPending(r.txId, held(del.key, del.page)));
    expect(st.status).toBe('delivered');
    const page = await c.queryKeyPage(owner.page);
    expect(page.keys.some((k) => k.delegate?.toLowerCase() === del.book.toLowerCase())).toBe(true);
    // the delegate's key now initiates alone for the owner (owner page is 1-of-2 entries: key + delegate)
    const dataUrl = `${owner.url}/data`;
    const st2 = await executed(c, c.signAndSubmit(owner.url, tx.createDataAccount({ url: dataUrl }), held(del.key, del.page, { delegators: [owner.page] })));
    expect(st2.signatures.some((s) => s.delegators.map((d) => d.toLowerCase()).includes(owner.page.toLowerCase()))).toBe(true);
    expect((await c.queryAccount(dataUrl)).type).toBe('dataAccount');
  });

  describe('bad input', () => {
    it('malformed URLs and wrong key lengths are typed input errors, nothing is sent', async () => {
      const c = T.client;
      await expect(c.queryAccount('http://evil.example/x')).rejects.toBeInstanceOf(LedgerInputError);
      await expect(c.queryAccount('acc://bad name.acme')).rejects.toMatchObject({ field: 'url' });
      await expect(
        c.prepareExternalSignature({ principal: data, body: tx.writeData(['x']), signerUrl: adi.page, publicKey: new Uint8Array(31) }),
      ).rejects.toMatchObject({ field: 'publicKey' });
      expect(() => tx.createIdentity({ url: 'acc://x.acme', keyBookUrl: 'acc://x.acme/book', publicKeyHash: 'abcd' })).toThrow(LedgerInputError);
    });

    it('unknown accounts answer notFound with the v3 error shape', async () => {
      const c = T.client;
      const e = await c.queryAccount('acc://does-not-exist-conformance.acme').catch((x) => x);
      expect(e).toBeInstanceOf(LedgerRpcError);
      expect(e.code).toBe('notFound');
      expect(e.rpcCode).toBe(-33404);
    });

    it('a signature over the ASCII of the hex is refused by the client and by the node', async () => {
      const c = T.client;
      const k = (await c.queryKeyPage(adi.page)).keys.length ? adi.key : adi.key;
      const prepared = await c.prepareExternalSignature({ principal: data, body: tx.writeData(['hex-text']), signerUrl: adi.page, publicKey: k.publicKey });
      const overHex = ed25519.sign(new TextEncoder().encode(prepared.hashToSign), k.seed);
      await expect(c.submitExternalSignature(prepared, overHex)).rejects.toThrow(/ASCII of the hex/);
      // bypass the client check: the node itself refuses it
      const sig = attachSignature(prepared.metadata, overHex, Buffer.from(prepared.txHash, 'hex'));
      const env = new messaging.Envelope({ transaction: [new core.Transaction(prepared.transactionJson)], signatures: [sig] });
      const code = await failureCode(c, c.submit(env));
      expect(code).not.toBe('delivered');
      expect(['unauthenticated', 'badRequest', 'no-final-status']).toContain(code.split(' ')[0]);
    });
  });
});
