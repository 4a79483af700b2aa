/**
 * waitForTransaction polls fast at first (a devnet block is ~20 ms) and then backs off ×1.5 up to 500 ms, so a
 * long wait against a real node costs a few requests a second; and it never waits past the caller's deadline,
 * including the waits for produced (synthetic) transactions. A small fake node that counts and times requests.
 */
import { describe, expect, it } from 'vitest';
import { createLedgerClient, LedgerError } from '../../src/ledger/index.js';

const H = (c: string) => c.repeat(64);
const TX = `acc://${H('a')}@x.acme/data`;
const PRODUCED = `acc://${H('c')}@y.acme/tokens`;

/** `status(id, n)` answers the n-th query of that id */
function fakeNode(status: (id: string, n: number) => { status: string; produced?: string[] }) {
  const times: number[] = [];
  const seen = new Map<string, number>();
  const fetch = async (_u: string, init: any) => {
    times.push(Date.now());
    const m = JSON.parse(init.body);
    const id = String(m.params?.scope);
    const n = seen.get(id) ?? 0;
    seen.set(id, n + 1);
    const s = status(id, n);
    const result = {
      recordType: 'message',
      id,
      status: s.status,
      message: { type: 'transaction', transaction: { header: { principal: 'acc://x.acme/data' }, body: { type: 'writeData' } } },
      produced: { records: (s.produced ?? []).map((value) => ({ recordType: 'txID', value })) },
    };
    return { ok: true, status: 200, text: async () => JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) };
  };
  return { client: createLedgerClient({ url: 'http://node.invalid', fetch: fetch as any, pollIntervalMs: 25 }), times };
}

describe('waitForTransaction', () => {
  it('backs off: a 3 s wait makes a handful of requests, the first ones fast, none more than ~500 ms apart', async () => {
    const { client, times } = fakeNode(() => ({ status: 'pending' }));
    const t0 = Date.now();
    const err = await client.waitForTransaction(TX, { timeoutMs: 3000 }).catch((e) => e);
    const elapsed = Date.now() - t0;
    expect(err).toBeInstanceOf(LedgerError);
    expect(err.code).toBe('timeout');
    // no backoff: 3000 / 25 ≈ 120 requests
    expect(times.length).toBeLessThan(25);
    expect(times.length).toBeGreaterThan(8);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    // the first pauses are the configured interval (timers may run late on a busy machine)
    for (const g of gaps.slice(0, 3)) expect(g).toBeLessThan(150);
    for (const g of gaps) expect(g).toBeLessThan(500 + 150);
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(400);
    expect(elapsed).toBeGreaterThanOrEqual(3000);
    expect(elapsed).toBeLessThan(3000 + 300);
  });

  it('a transaction delivered after a few blocks is seen within one short interval', async () => {
    const { client, times } = fakeNode((_id, n) => ({ status: n < 3 ? 'pending' : 'delivered' }));
    const t0 = Date.now();
    const st = await client.waitForTransaction(TX, { timeoutMs: 5000 });
    expect(st.delivered).toBe(true);
    expect(times.length).toBe(4);
    expect(Date.now() - t0).toBeLessThan(400);
  });

  it('waitProduced stays within the caller deadline (it waited at least 1 s more before)', async () => {
    const { client } = fakeNode((id) => (id === TX ? { status: 'delivered', produced: [PRODUCED] } : { status: 'pending' }));
    const t0 = Date.now();
    const err = await client.waitForTransaction(TX, { timeoutMs: 300, waitProduced: true }).catch((e) => e);
    const elapsed = Date.now() - t0;
    expect(err).toBeInstanceOf(LedgerError);
    expect(err.code).toBe('timeout');
    expect(err.message).toContain(PRODUCED);
    expect(elapsed).toBeGreaterThanOrEqual(300);
    expect(elapsed).toBeLessThan(300 + 300);
  });

  it('waitProduced returns once the produced transaction is delivered', async () => {
    const { client } = fakeNode((id, n) => (id === TX ? { status: 'delivered', produced: [PRODUCED] } : { status: n < 2 ? 'pending' : 'delivered' }));
    const st = await client.waitForTransaction(TX, { timeoutMs: 5000, waitProduced: true });
    expect(st.delivered).toBe(true);
    expect(st.produced).toEqual([PRODUCED]);
  });
});
