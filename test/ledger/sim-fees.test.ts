/**
 * The simulator charges what the Go node charges (protocol/fee_schedule.go): WriteData pays per 256 B chunk of the
 * whole transaction at the data or scratch rate, doubled to write to state, with no size surcharge on top; a
 * signature pays 1 unit, 1 more per 256 B past the first and 1 per delegation layer. Expected values are Go's
 * formulas worked by hand for these encodings.
 */
import { encode } from 'accumulate.js/encoding';
import { describe, expect, it } from 'vitest';
import { SimLedger } from '../../src/ledger-sim/ledger.js';
import { attachSignature, buildTransaction, signatureMetadata } from '../../src/ledger/signing.js';
import * as tx from '../../src/ledger/tx.js';

const ledger = new SimLedger();

describe('ledger simulator fees', () => {
  it.each([
    // [data bytes, scratch, writeToState, Go fee in units]
    [10, false, false, 10], // 1 chunk × 10
    [300, false, false, 20], // 2 chunks
    [600, false, false, 30], // 3 chunks (the old rule: 3 for the data + 2 for the size = 50)
    [2000, false, false, 90], // 9 chunks (old: 160)
    [600, true, false, 3], // scratch: 3 chunks × 1 (old: 5)
    [600, false, true, 60], // to state: × 2
  ] as const)('WriteData of %i B (scratch %s, writeToState %s) costs %i units', (bytes, scratch, writeToState, units) => {
    const t = buildTransaction('acc://fees.acme/data', tx.writeData([new Uint8Array(bytes)], { scratch, writeToState }));
    t.header!.initiator = new Uint8Array(32).fill(1);
    expect(Math.ceil(encode(t).length / 256)).toBe(Math.max(1, units / (scratch ? 1 : 10) / (writeToState ? 2 : 1)));
    expect(ledger.transactionFee(t)).toBe(units);
  });

  it('a signature pays for its size past 256 B and for each delegation layer', () => {
    const fee = (delegators: string[]) => {
      const md = signatureMetadata({
        publicKey: new Uint8Array(32).fill(1),
        signer: 'acc://auditor-company-treasury.acme/book/1',
        signerVersion: 3,
        timestamp: 1,
        delegators,
      });
      const s = attachSignature(md, new Uint8Array(64).fill(2), new Uint8Array(32).fill(3));
      return { bytes: encode(s).length, units: (ledger as unknown as { signatureFee(s: unknown, d: number): number }).signatureFee(s, delegators.length) };
    };
    const direct = fee([]);
    expect(direct.bytes).toBeLessThanOrEqual(256);
    expect(direct.units).toBe(1);
    const two = fee(['acc://alice-corp-treasury.acme/book/1', 'acc://holding-group-main.acme/book/1']);
    expect(two.bytes).toBeGreaterThan(256); // 1 + 1 (second chunk) + 2 (layers); the old rule charged 3
    expect(two.units).toBe(4);
  });
});
