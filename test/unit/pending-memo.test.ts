/**
 * A pending action's memo is its ledger transaction header's memo, as the pending scan reads the transaction from the
 * account's pending list (null when the header has none or an empty one).
 */
import { describe, expect, it } from 'vitest';
import { memoOf } from '../../src/activities/pending.js';
import { createLedgerClient } from '../../src/ledger/index.js';

const H = (i: number) => i.toString(16).padStart(64, '0');
const header = (i: number) =>
  [{ principal: 'acc://x.acme/data', memo: 'proof-gateway intent' }, { principal: 'acc://x.acme/data' }, { principal: 'acc://x.acme/data', memo: '' }][i];

/** A node whose pending list holds three transactions: with a memo, without one, with an empty one. */
const client = createLedgerClient({
  url: 'http://node.invalid',
  fetch: (async (_u: string, init: any) => {
    const m = JSON.parse(init.body);
    const q = m.params?.query;
    const records = [0, 1, 2].map((i) => ({
      recordType: 'message',
      id: `acc://${H(i)}@x.acme/data`,
      status: 'pending',
      statusNo: 202,
      message: { type: 'transaction', transaction: { header: header(i), body: { type: 'writeData' } } },
    }));
    const start = q?.range?.start ?? 0;
    const result = q?.queryType === 'pending' ? { recordType: 'range', start, total: records.length, records: records.slice(start) } : undefined;
    return { ok: true, status: 200, text: async () => JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) };
  }) as any,
});

describe('pending action memo', () => {
  it("is the header's memo of the transaction the pending list gives", async () => {
    const txs = await client.listPending('acc://x.acme/data');
    expect(txs.map((t) => [t.txHash, memoOf(t)])).toEqual([
      [H(0), 'proof-gateway intent'],
      [H(1), null],
      [H(2), null],
    ]);
  });
});
