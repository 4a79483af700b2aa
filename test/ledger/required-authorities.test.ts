/**
 * requiredAuthorities (and so awaitingAuthorities / isReady) agrees with the ledger simulator's own rule, which is
 * the network's multi-signature rule: a CreateIdentity's `authorities` must accept too, a lite identity is its own authority and
 * a lite token account's is its lite identity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { core } from 'accumulate.js';
import { liteIdentityUrl, requiredAuthorities, signingProgress, tx, type LedgerClient, type TxStatus } from '../../src/ledger/index.js';
import { createAdi, executed, fundedLite, held, openTarget, randomName, waitFor, type Sponsor, type Target } from '../ledger-conformance/harness.js';

let t: Target;
let c: LedgerClient;
let sp: Sponsor;

/** The simulator's required authorities for the transaction, lower-case and sorted. */
function simRequired(st: Pick<TxStatus, 'principal' | 'transaction'>): string[] | 'anyone' {
  const r = t.sim!.ledger.requiredAuthorities(new core.Transaction(st.transaction), st.principal.toLowerCase());
  return r === 'anyone' ? r : [...r].map((u) => u.toLowerCase()).sort();
}

beforeAll(async () => {
  t = await openTarget();
  if (!t.sim) throw new Error('these tests compare with the ledger simulator; run them without ACC_ENDPOINT');
  c = t.client;
  sp = await fundedLite(c);
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('requiredAuthorities', () => {
  it('a CreateIdentity with authorities waits for them: awaiting the other book and not ready until it signs', async () => {
    const corp = await createAdi(c, sp, 5000);
    const auditor = await createAdi(c, sp, 5000);
    const sub = `${corp.url}/${randomName('sub')}`;
    const r = await c.signAndSubmit(
      corp.url,
      tx.createIdentity({ url: sub, keyBookUrl: `${sub}/book`, publicKeyHash: corp.key.publicKeyHash, authorities: [auditor.book] }),
      held(corp.key, corp.page),
    );
    const st = await waitFor('recorded', async () => {
      const s = await c.getTransaction(r.txId);
      return s.pending ? s : undefined;
    });
    const required = await requiredAuthorities(c, st);
    expect(required).toEqual([corp.book, auditor.book].map((u) => u.toLowerCase()).sort());
    expect(required).toEqual(simRequired(st));
    const progress = await signingProgress(c, st, corp.page);
    expect(progress.collected).toBe(1);
    expect(progress.awaitingAuthorities).toEqual([auditor.book.toLowerCase()]);
    expect(progress.isReady).toBe(false);

    // the auditor's book accepts: it executes
    await c.signPending(r.txId, held(auditor.key, auditor.page));
    expect((await c.waitForTransaction(r.txId, { timeoutMs: 10_000 })).delivered).toBe(true);
  });

  it('a lite token account needs its lite identity, a lite identity itself', async () => {
    const lta = sp.lta;
    const { amount, oracle } = await c.acmeForCredits(10);
    const st = await executed(c, c.signAndSubmit(lta, tx.addCredits({ recipient: sp.lite, amount, oracle }), held(sp.key, sp.lite)));
    expect(await requiredAuthorities(c, st)).toEqual([sp.lite.toLowerCase()]);
    expect(simRequired(st)).toEqual([sp.lite.toLowerCase()]);

    const onLite = {
      principal: sp.lite,
      transaction: { header: { principal: sp.lite }, body: { type: 'writeData', entry: { type: 'doubleHash', data: ['00'] } } },
    };
    expect(await requiredAuthorities(c, onLite)).toEqual([liteIdentityUrl(sp.key.publicKey).toLowerCase()]);
    expect(simRequired(onLite)).toEqual([sp.lite.toLowerCase()]);
  });

  it('a root identity’s CreateIdentity (its principal does not exist yet) needs no authority: anyone may sign it', async () => {
    const url = `acc://${randomName('root')}.acme`;
    const root = {
      principal: url,
      transaction: new core.Transaction({ header: { principal: url }, body: tx.createIdentity({ url, authorities: [`${sp.lite}`] }) }).asObject(),
    };
    expect(simRequired(root)).toBe('anyone');
    expect(await requiredAuthorities(c, root)).toEqual([]);
  });
});
