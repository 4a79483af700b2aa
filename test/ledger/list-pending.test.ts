/**
 * listPending reads every page of an account's pending list, not only the first 100: against the ledger simulator
 * (130 pending transactions on one data account) and against a node that gives fewer records per page than asked,
 * one that reports more than it gives, and one with more than the client lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerClient, LedgerError, tx, type LedgerClient } from '../../src/ledger/index.js';
import { createAdi, executed, fundedLite, held, newKey, openTarget, waitFor, type Target } from '../ledger-conformance/harness.js';

const H = (i: number) => i.toString(16).padStart(64, '0');
const rec = (i: number) => ({
  recordType: 'message',
  id: `acc://${H(i)}@x.acme/data`,
  status: 'pending',
  statusNo: 202,
  message: { type: 'transaction', transaction: { header: { principal: 'acc://x.acme/data' }, body: { type: 'writeData' } } },
});

/** A node whose pending list holds `total` records (reports `reported`) and answers at most `perPage` a query. */
function fakeNode(o: { total: number; reported?: number; perPage: number }) {
  const ranges: { start: number; count: number }[] = [];
  const fetch = async (_u: string, init: any) => {
    const m = JSON.parse(init.body);
    const q = m.params?.query;
    let result: any;
    if (q?.queryType === 'pending') {
      const start = q.range.start ?? 0;
      ranges.push({ start, count: q.range.count });
      const n = Math.max(0, Math.min(q.range.count, o.perPage, o.total - start));
      result = { recordType: 'range', start, total: o.reported ?? o.total, records: Array.from({ length: n }, (_, k) => rec(start + k)) };
    }
    return { ok: true, status: 200, text: async () => JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) };
  };
  return { client: createLedgerClient({ url: 'http://node.invalid', fetch: fetch as any }), ranges };
}

describe('listPending against the ledger simulator', () => {
  let t: Target;
  let c: LedgerClient;
  let data: string;
  const hashes: string[] = [];

  beforeAll(async () => {
    t = await openTarget();
    c = t.client;
    const sp = await fundedLite(c);
    const adi = await createAdi(c, sp, 20_000);
    const B = newKey();
    data = `${adi.url}/data`;
    await executed(c, c.signAndSubmit(adi.url, tx.createDataAccount({ url: data }), held(adi.key, adi.page)));
    await executed(
      c,
      c.signAndSubmit(
        adi.page,
        tx.updateKeyPage([
          { type: 'addKey', publicKeyHash: B.publicKeyHash },
          { type: 'setThreshold', threshold: 2 },
        ]),
        held(adi.key, adi.page),
      ),
    );
    // 130 writes signed by one of the two keys: all wait on the page
    for (let i = 0; i < 130; i++) hashes.push((await c.signAndSubmit(data, tx.writeData([`w${i}`]), held(adi.key, adi.page))).txHash);
    await waitFor(
      'all pending',
      async () => (t.sim ? t.sim.ledger.pendingOf(data).length === 130 : (await c.queryAccount(data)).pending.length >= 100) || undefined,
    );
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
  });

  it('lists all 130 pending transactions, not the first 100', async () => {
    const all = await c.listPending(data);
    expect(all.length).toBe(130);
    expect(new Set(all.map((p) => p.txHash))).toEqual(new Set(hashes));
    expect(all.every((p) => p.pending)).toBe(true);
  });

  it('start and count still select a window', async () => {
    const all = await c.listPending(data);
    expect((await c.listPending(data, { start: 120 })).map((p) => p.txHash)).toEqual(all.slice(120).map((p) => p.txHash));
    expect((await c.listPending(data, { start: 10, count: 5 })).map((p) => p.txHash)).toEqual(all.slice(10, 15).map((p) => p.txHash));
    expect((await c.listPending(data, { start: 30, count: 100 })).map((p) => p.txHash)).toEqual(all.slice(30, 130).map((p) => p.txHash));
  });
});

describe('listPending against nodes that page differently', () => {
  it('a node that gives 40 records a query: all 250, in 7 queries', async () => {
    const n = fakeNode({ total: 250, perPage: 40 });
    const all = await n.client.listPending('acc://x.acme/data');
    expect(all.map((p) => p.txHash)).toEqual(Array.from({ length: 250 }, (_, i) => H(i)));
    expect(n.ranges.map((r) => r.start)).toEqual([0, 40, 80, 120, 160, 200, 240]);
    expect(n.ranges.every((r) => r.count <= 100)).toBe(true);
  });

  it('a node that reports more than it gives: what it gives, and the listing ends', async () => {
    const n = fakeNode({ total: 150, reported: 400, perPage: 100 });
    expect((await n.client.listPending('acc://x.acme/data')).length).toBe(150);
    expect(n.ranges.length).toBe(3);
  });

  it('more than 10,000 pending transactions is an error, not a shortened list', async () => {
    const n = fakeNode({ total: 10_050, perPage: 100 });
    await expect(n.client.listPending('acc://x.acme/data')).rejects.toBeInstanceOf(LedgerError);
    expect(n.ranges.length).toBe(100);
  });
});
