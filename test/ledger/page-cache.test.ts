/**
 * The key-page cache of the API's ledger client (src/ledger/page-cache.ts): recentKeyPage (the prepare's credit check)
 * answers from a read at most the TTL old, every submission through the client drops it, and signatures are always
 * prepared from a live read, so a page changed elsewhere gives signing data at its new version at once. Against the
 * ledger simulator; the cache's rules (TTL, what is kept) with a counted transport.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerClient, recentKeyPage, tx, type LedgerClient } from '../../src/ledger/index.js';
import { signerPageCache } from '../../src/ledger/page-cache.js';
import { keyFromSeed, signHash } from '../../src/ledger/signing.js';
import { createAdi, executed, fundedLite, newKey, openTarget, type Sponsor, type Target } from '../ledger-conformance/harness.js';

let T: Target;
let sponsor: Sponsor;

beforeAll(async () => {
  T = await openTarget();
  sponsor = await fundedLite(T.client, 50_000);
});
afterAll(async () => {
  await T?.stop();
});

const sign = (seed: Uint8Array, hashToSign: string) => signHash(keyFromSeed(seed), Buffer.from(hashToSign, 'hex'));

/** a client whose ledger calls are counted by method and scope */
function counted(signerCacheMs: number): { client: LedgerClient; queries: string[] } {
  const queries: string[] = [];
  const client = createLedgerClient({
    url: T.client.url,
    signerCacheMs,
    fetch: (async (input: any, init: any) => {
      const body = JSON.parse(String(init?.body ?? '{}'));
      if (body.method === 'query') queries.push(String(body.params?.scope));
      return fetch(input, init);
    }) as any,
  });
  return { client, queries };
}

describe('key-page cache of the API ledger client', () => {
  it('a page changed elsewhere: signatures are prepared at its live version at once; only recentKeyPage answers from the cache', async () => {
    const adi = await createAdi(T.client, sponsor, 500);
    const cached = createLedgerClient({ url: T.client.url, signerCacheMs: 60_000 });
    const body = (n: number) => ({
      principal: adi.url,
      body: tx.createDataAccount({ url: `${adi.url}/d${n}` }),
      signerUrl: adi.page,
      publicKey: adi.key.publicKey,
    });
    const before = await cached.prepareExternalSignature(body(1));
    expect((await recentKeyPage(cached, adi.page)).version).toBe(before.signerVersion);

    // another process changes the page (adds a key): its version moves on
    const other = createLedgerClient({ url: T.client.url });
    const add = await other.prepareExternalSignature({
      ...body(0),
      body: tx.updateKeyPage([{ type: 'addKey', publicKeyHash: newKey().publicKeyHash }]),
      principal: adi.page,
    });
    await executed(other, other.submitExternalSignature(add, sign(adi.key.seed, add.hashToSign)));
    const live = await other.queryKeyPage(adi.page);
    expect(live.version).toBeGreaterThan(before.signerVersion);

    // the credit check's read is the cached one; the signature is prepared from the live page and executes
    expect((await recentKeyPage(cached, adi.page)).version).toBe(before.signerVersion);
    const fresh = await cached.prepareExternalSignature(body(2));
    expect(fresh.signerVersion).toBe(live.version);
    expect((await executed(cached, cached.submitExternalSignature(fresh, sign(adi.key.seed, fresh.hashToSign)))).status).toBe('delivered');
    // the submission dropped the cache
    expect((await recentKeyPage(cached, adi.page)).version).toBe(live.version);
  });

  it('recentKeyPage reads once per TTL; a submission drops it; prepares and queryKeyPage always read', async () => {
    const adi = await createAdi(T.client, sponsor, 500);
    const { client, queries } = counted(60_000);
    const body = (n: number) => ({
      principal: adi.url,
      body: tx.createDataAccount({ url: `${adi.url}/e${n}` }),
      signerUrl: adi.page,
      publicKey: adi.key.publicKey,
    });
    const pageReads = () => queries.filter((q) => q.toLowerCase() === adi.page.toLowerCase()).length;
    await recentKeyPage(client, adi.page);
    await recentKeyPage(client, adi.page);
    expect(pageReads()).toBe(1);
    await client.queryKeyPage(adi.page);
    expect(pageReads()).toBe(2);
    const p = await client.prepareExternalSignature(body(1));
    expect(pageReads()).toBe(3);
    await recentKeyPage(client, adi.page);
    expect(pageReads()).toBe(3);
    await executed(client, client.submitExternalSignature(p, sign(adi.key.seed, p.hashToSign)));
    await recentKeyPage(client, adi.page);
    expect(pageReads()).toBe(4); // the submission dropped the cache
  });

  it('the cache itself: TTL, pages without credits, other account types, and reads overlapping a clear', async () => {
    let now = 0;
    let calls = 0;
    let answer: any = { account: { type: 'keyPage', creditBalance: 5, version: 1 } };
    let gate: Promise<void> | undefined;
    const call = (async () => {
      calls++;
      if (gate) await gate;
      return answer;
    }) as any;
    const cache = signerPageCache(call, 2000, () => now);
    const q = (scope = 'acc://a.acme/book/1') => cache.call('query', { scope, query: { queryType: 'default' } });
    await q();
    await q('ACC://A.acme/book/1');
    expect(calls).toBe(1);
    now = 1999;
    await q();
    expect(calls).toBe(1);
    now = 2000;
    await q();
    expect(calls).toBe(2);
    answer = { account: { type: 'keyPage', creditBalance: 0, version: 1 } };
    await q('acc://b.acme/book/1');
    await q('acc://b.acme/book/1');
    expect(calls).toBe(4);
    answer = { account: { type: 'identity' } };
    await q('acc://c.acme');
    await q('acc://c.acme');
    expect(calls).toBe(6);
    answer = { account: { type: 'liteIdentity', creditBalance: 0 } };
    await q('acc://d');
    await q('acc://d');
    expect(calls).toBe(7);
    // a read in flight when the cache is cleared is not kept
    answer = { account: { type: 'keyPage', creditBalance: 5, version: 2 } };
    let open = () => {};
    gate = new Promise((r) => (open = r));
    const inFlight = q('acc://e.acme/book/1');
    cache.clear();
    open();
    await inFlight;
    gate = undefined;
    await q('acc://e.acme/book/1');
    expect(calls).toBe(9);
    // anything but a default account query passes through
    await cache.call('query', { scope: 'acc://a.acme/book/1', query: { queryType: 'chain' } });
    await cache.call('network-status', {});
    expect(calls).toBe(11);
  });
});
