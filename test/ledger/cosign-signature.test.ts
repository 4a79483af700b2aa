/**
 * signatureOnLedger against the ledger simulator: a key's signature counts on a pending transaction only at its
 * page's current version and with the vote asked for, like signingProgress; `recorded` still says the key's
 * signature reached the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureOnLedger, signingProgress, toHex, tx, type LedgerClient, type SubmitResult } from '../../src/ledger/index.js';
import { createAdi, executed, fundedLite, held, newKey, openTarget, waitFor, type Adi, type Target, type TestKey } from '../ledger-conformance/harness.js';

let t: Target;
let c: LedgerClient;
let adi: Adi;
let A: TestKey, B: TestKey, C: TestKey;
let data: string;

const pk = (k: TestKey) => toHex(k.publicKey);
const on = (r: SubmitResult, k: TestKey, vote?: 'accept' | 'reject' | 'abstain') =>
  signatureOnLedger(c, { txId: r.txId, txHash: r.txHash, publicKey: pk(k), vote });

async function pendingWrite(tag: string): Promise<SubmitResult> {
  const r = await c.signAndSubmit(data, tx.writeData([tag]), held(A, adi.page));
  await waitFor(`${tag} recorded`, async () => ((await c.getTransaction(r.txId)).pending ? true : undefined));
  return r;
}

async function signedBy(r: SubmitResult, n: number) {
  await waitFor(`${n} signatures`, async () => ((await c.getTransaction(r.txId)).signatures.length >= n ? true : undefined));
}

beforeAll(async () => {
  t = await openTarget();
  c = t.client;
  const sp = await fundedLite(c);
  adi = await createAdi(c, sp, 5000);
  A = adi.key;
  B = newKey();
  C = newKey();
  data = `${adi.url}/data`;
  await executed(c, c.signAndSubmit(adi.url, tx.createDataAccount({ url: data }), held(A, adi.page)));
  // 3-of-3 page (version 2 after this update)
  await executed(
    c,
    c.signAndSubmit(
      adi.page,
      tx.updateKeyPage([
        { type: 'addKey', publicKeyHash: B.publicKeyHash },
        { type: 'addKey', publicKeyHash: C.publicKeyHash },
        { type: 'setThreshold', threshold: 3 },
      ]),
      held(A, adi.page),
    ),
  );
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('signatureOnLedger', () => {
  it('a signature voided by a later page change does not count (recorded, not signed); signing again at the new version counts', async () => {
    const r1 = await pendingWrite('tx1');
    await c.signPending(r1.txId, held(B, adi.page));
    await signedBy(r1, 2);
    expect((await on(r1, B))?.signed).toBe(true);

    // a page update signed by all three moves the version 2 → 3 and voids tx1's votes
    const r2 = await c.signAndSubmit(adi.page, tx.updateKeyPage([{ type: 'setThreshold', threshold: 3 }]), held(A, adi.page));
    await waitFor('tx2 recorded', async () => ((await c.getTransaction(r2.txId)).pending ? true : undefined));
    await c.signPending(r2.txId, held(B, adi.page));
    await c.signPending(r2.txId, held(C, adi.page));
    expect((await c.waitForTransaction(r2.txId, { timeoutMs: 10_000 })).delivered).toBe(true);
    expect((await c.queryKeyPage(adi.page)).version).toBe(3);

    const st = await c.getTransaction(r1.txId);
    expect(st.pending).toBe(true);
    expect((await signingProgress(c, st, adi.page)).collected).toBe(0);
    const b = await on(r1, B);
    expect(b).toMatchObject({ signed: false, recorded: true });
    expect((await on(r1, A))?.signed).toBe(false);

    // B signs again at version 3: that counts
    await c.signPending(r1.txId, held(B, adi.page));
    await signedBy(r1, 3);
    expect((await on(r1, B))?.signed).toBe(true);
    expect(await on(r1, C)).toMatchObject({ signed: false, recorded: false });
  });

  it('the vote must be the one asked for: a reject is not an accept, and is found when asked for', async () => {
    const r = await pendingWrite('tx3');
    await c.signPending(r.txId, held(B, adi.page), 'reject');
    await signedBy(r, 2);
    expect(await on(r, B)).toMatchObject({ signed: false, recorded: true });
    expect((await on(r, B, 'reject'))?.signed).toBe(true);
    expect((await on(r, A))?.signed).toBe(true);
  });

  it('on an executed transaction every recorded signature counts', async () => {
    const r = await pendingWrite('tx4');
    await c.signPending(r.txId, held(B, adi.page));
    await c.signPending(r.txId, held(C, adi.page));
    expect((await c.waitForTransaction(r.txId, { timeoutMs: 10_000 })).delivered).toBe(true);
    for (const k of [A, B, C]) expect((await on(r, k))?.signed).toBe(true);
  });
});
