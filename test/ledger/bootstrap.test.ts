/** Idempotent seeding helpers and the provisioning-latency budget, against ledger-sim with its default block interval. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import { createLedgerClient, ensureAdi, ensureFundedLite, keyFromSeed, tx, type LedgerClient } from '../../src/ledger/index.js';

let sim: LedgerSimHandle;
let c: LedgerClient;
beforeAll(async () => {
  sim = await startLedgerSim({ port: 0 }); // default block interval
  c = createLedgerClient({ url: sim.url });
});
afterAll(async () => {
  await sim?.stop();
});

describe('bootstrap helpers', () => {
  it('ensureFundedLite and ensureAdi are idempotent', async () => {
    const seed = randomBytes(32);
    const s1 = await ensureFundedLite(c, seed, { minCredits: 20_000 });
    const before = (await c.queryAccount(s1.lite)).creditBalance;
    const s2 = await ensureFundedLite(c, seed, { minCredits: 20_000 });
    expect(s2.lite).toBe(s1.lite);
    expect((await c.queryAccount(s1.lite)).creditBalance).toBe(before);
    const owner = randomBytes(32);
    const ownerKey = keyFromSeed(owner);
    const url = `acc://seed${randomBytes(4).toString('hex')}.acme`;
    const args = {
      url,
      publicKeyHash: ownerKey.address.publicKeyHash,
      sponsor: s1.key,
      sponsorTokenAccount: s1.lta,
      pageCredits: 100,
      dataAccounts: [`${url}/data`],
      owner: { privateKey: owner, signerUrl: `${url}/book/1` },
    };
    const a = await ensureAdi(c, args);
    const spent = (await c.queryAccount(s1.lite)).creditBalance!;
    const b = await ensureAdi(c, args);
    expect(b).toEqual(a);
    expect((await c.queryAccount(s1.lite)).creditBalance).toBe(spent);
    expect((await c.queryAccount(`${url}/data`)).type).toBe('dataAccount');
  });

  it('identity provisioning on the ledger (5 transactions) stays under 2 s with the default block interval', async () => {
    const s = await ensureFundedLite(c, randomBytes(32), { minCredits: 20_000 });
    const gatewayKey = randomBytes(32);
    const clientKey = keyFromSeed(randomBytes(32));
    const url = `acc://perf${randomBytes(4).toString('hex')}.acme`;
    const page = `${url}/book/1`;
    const t0 = performance.now();
    const gk = keyFromSeed(gatewayKey);
    const wait = async (p: Promise<{ txId: string }>) => c.waitForTransaction((await p).txId, { throwOnFailure: true, waitProduced: true });
    await wait(c.signAndSubmit(url, tx.createIdentity({ url, keyBookUrl: `${url}/book`, publicKeyHash: gk.address.publicKeyHash }), s.key));
    const { amount, oracle } = await c.acmeForCredits(1_000);
    await wait(c.signAndSubmit(s.lta, tx.addCredits({ recipient: page, amount, oracle }), s.key));
    const owner = { privateKey: gatewayKey, signerUrl: page };
    await wait(c.signAndSubmit(url, tx.createDataAccount({ url: `${url}/data` }), owner));
    await wait(
      c.signAndSubmit(
        page,
        tx.updateKeyPage([{ type: 'updateKey', oldPublicKeyHash: gk.address.publicKeyHash, newPublicKeyHash: clientKey.address.publicKeyHash }]),
        owner,
      ),
    );
    const elapsed = performance.now() - t0;
    const p = await c.queryKeyPage(page);
    expect(p.keys.map((k) => k.publicKeyHash)).toEqual([Buffer.from(clientKey.address.publicKeyHash).toString('hex')]);
    expect(p.version).toBe(2);
    // the whole identity flow (ledger + chains) targets p50 <= 2 s; the ledger part alone must stay under it
    expect(elapsed).toBeLessThan(2000);
  });
});
