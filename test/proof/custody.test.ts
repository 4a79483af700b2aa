/** Custody chain: hash links recomputed; tampered data, reordering, removal and a forged genesis are named. */
import { describe, expect, it } from 'vitest';
import { CUSTODY_GENESIS, custodyDataHash, custodyEvent, custodyEventHash, verifyCustody, type CustodyEvent } from '../../src/proof/custody.js';
import { custodyTrail } from '../../src/proof/custody-trail.js';

function chain(): CustodyEvent[] {
  const steps = [
    { type: 'created', data: { intent_id: 'intent-1', ledger_tx: 'acc://ab@x.acme/data' } },
    { type: 'attested', data: { chain: 'ethereum-sepolia', signers: [0, 1, 2, 3, 4, 5, 6] } },
    { type: 'anchored', data: { anchor_id: `0x${'11'.repeat(32)}`, tx: `0x${'22'.repeat(32)}` } },
    { type: 'executed', data: { leg: 'leg-1', tx: `0x${'33'.repeat(32)}` } },
    { type: 'observed', data: { result_hash: `0x${'44'.repeat(32)}` } },
    { type: 'recorded', data: { result_tx: 'acc://cd@results.acme/results' } },
    { type: 'retrieved', data: { by: 'key_1', at_request: 'req-1' } },
  ] as const;
  const out: CustodyEvent[] = [];
  for (const [i, s] of steps.entries())
    out.push(custodyEvent(out[i - 1], { type: s.type, at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), data: s.data }));
  return out;
}

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

describe('custody chain', () => {
  it('links events: seq, genesis prev_hash, data and event hashes recompute; a valid chain verifies', () => {
    const c = chain();
    expect(c.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(c[0]!.prev_hash).toBe(CUSTODY_GENESIS);
    expect(c[0]!.prev_hash).toBe(`0x${'0'.repeat(64)}`);
    for (let i = 1; i < c.length; i++) expect(c[i]!.prev_hash).toBe(c[i - 1]!.hash);
    expect(c[3]!.data_hash).toBe(custodyDataHash({ tx: `0x${'33'.repeat(32)}`, leg: 'leg-1' })); // key order irrelevant
    expect(c[3]!.hash).toBe(custodyEventHash(c[3]!));
    expect(new Set(c.map((e) => e.hash)).size).toBe(c.length);
    expect(verifyCustody(c)).toEqual({ chain_valid: true });
    expect(verifyCustody(clone(c))).toEqual({ chain_valid: true }); // survives a JSON round trip
  });

  it('tampered data breaks the chain at that event', () => {
    const c = clone(chain());
    (c[3]!.data as { tx: string }).tx = `0x${'34'.repeat(32)}`;
    const v = verifyCustody(c);
    expect(v.chain_valid).toBe(false);
    expect(v.broken_at).toBe(3);
    expect(v.reason).toMatch(/data_hash/);
  });

  it('data re-hashed without re-linking breaks at the event hash; re-hashing it breaks the next link', () => {
    const c = clone(chain());
    c[2]!.data = { anchor_id: 'forged' };
    c[2]!.data_hash = custodyDataHash(c[2]!.data);
    expect(verifyCustody(c)).toMatchObject({ chain_valid: false, broken_at: 2, reason: expect.stringMatching(/hash .* does not recompute/) });
    c[2]!.hash = custodyEventHash(c[2]!);
    expect(verifyCustody(c)).toMatchObject({ chain_valid: false, broken_at: 3, reason: expect.stringMatching(/prev_hash/) });
  });

  it('a changed time or type breaks the chain', () => {
    const c = clone(chain());
    c[5]!.at = '2026-01-01T00:00:59.000Z';
    expect(verifyCustody(c)).toMatchObject({ chain_valid: false, broken_at: 5 });
    const d = clone(chain());
    d[4]!.type = 'recorded';
    expect(verifyCustody(d)).toMatchObject({ chain_valid: false, broken_at: 4 });
  });

  it('reordered events break the chain', () => {
    const c = chain();
    const r = [c[0]!, c[2]!, c[1]!, ...c.slice(3)];
    expect(verifyCustody(r)).toMatchObject({ chain_valid: false, broken_at: 1, reason: expect.stringMatching(/seq/) });
    // even with seq renumbered the links do not hold
    const s = clone(r).map((e, i) => ({ ...e, seq: i }));
    expect(verifyCustody(s)).toMatchObject({ chain_valid: false, broken_at: 1 });
  });

  it('a removed event breaks the chain (middle, first); dropping the tail leaves a valid prefix', () => {
    const c = chain();
    expect(verifyCustody([...c.slice(0, 3), ...c.slice(4)])).toMatchObject({ chain_valid: false, broken_at: 3 });
    const noFirst = clone(c.slice(1)).map((e, i) => ({ ...e, seq: i }));
    expect(verifyCustody(noFirst)).toMatchObject({ chain_valid: false, broken_at: 0, reason: expect.stringMatching(/prev_hash/) });
    expect(verifyCustody(c.slice(0, 4))).toEqual({ chain_valid: true });
    expect(verifyCustody([])).toMatchObject({ chain_valid: false, reason: 'no custody events' });
  });

  it('refuses unknown types and non-ISO times when building', () => {
    expect(() => custodyEvent(undefined, { type: 'forged' as never, at: new Date().toISOString(), data: {} })).toThrow(/unknown event type/);
    expect(() => custodyEvent(undefined, { type: 'created', at: 'yesterday', data: {} })).toThrow(/ISO 8601/);
  });

  it("the trail's data follows the API conventions: the ledger transaction hash is tx_hash in bare hex, validator indexes are numbers", () => {
    const h = (b: string) => `0x${b.repeat(32)}` as const;
    const quorum = { message: h('01'), aggregateSignature: `0x${'02'.repeat(128)}` as const, signerBitmap: '7', signers: [0, 1, 2], outcomes: [] };
    const trail = custodyTrail({
      intentId: 'intent-1',
      operationId: h('03'),
      createdAt: '2026-01-01T00:00:00.000Z',
      ledgerTxHash: `0x${'AB'.repeat(32)}`,
      bundleHash: h('04'),
      chains: [
        {
          chain: 'ethereum-sepolia',
          record: {
            chain: 'ethereum-sepolia',
            chainId: '11155111',
            proofAnchor: '0x0000000000000000000000000000000000000001',
            anchorId: h('05'),
            attestation: { ...quorum, authority: {} as never },
            createAnchorTx: h('06'),
            proveTx: h('07'),
            legs: [
              {
                legId: 'leg-1',
                leafIndex: 0,
                executionTx: h('08'),
                observation: { ...quorum, resultHash: h('09'), confirmations: 2, checks: { callBinding: 'calldata', expectedEvents: 0, expectedState: 0 } },
                result: { resultId: h('0a'), resultsAccount: 'acc://results.acme/results', txId: 'acc://cd@results.acme/results', writtenBy: 0 },
              },
            ],
          },
          stepTimes: { attested: '2026-01-01T00:00:01.000Z', observed: '2026-01-01T00:00:02.000Z' },
        },
      ],
    });
    expect(verifyCustody(trail)).toEqual({ chain_valid: true });
    expect(trail.map((e) => e.type)).toEqual(['created', 'attested', 'observed']);
    expect(trail[0]!.data).toEqual({ intent_id: 'intent-1', operation_id: h('03'), tx_hash: 'ab'.repeat(32) });
    expect(trail[1]!.data).toMatchObject({ chain: 'ethereum-sepolia', signers: [0, 1, 2] });
    expect(trail[2]!.data).toMatchObject({ results: [{ leg_id: 'leg-1', result_hash: h('09'), signers: [0, 1, 2] }] });
    // before the ledger transaction is known
    expect(custodyTrail({ intentId: 'i', operationId: h('03'), createdAt: '2026-01-01T00:00:00.000Z', bundleHash: h('04'), chains: [] })[0]!.data).toEqual({
      intent_id: 'i',
      operation_id: h('03'),
      tx_hash: null,
    });
  });
});
