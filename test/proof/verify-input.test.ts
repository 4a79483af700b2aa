/** verifyBundle on malformed input: never throws, reports invalid with the failing checks named. */
import { describe, expect, it } from 'vitest';
import { sealBundle, type ProofBundle } from '../../src/proof/bundle.js';
import { verifyBundle } from '../../src/proof/verify.js';

const failed = async (x: Parameters<typeof verifyBundle>[0]) => {
  const v = await verifyBundle(x);
  expect(v.valid).toBe(false);
  return v.checks.filter((c) => !c.ok).map((c) => c.name);
};

describe('verifyBundle input handling', () => {
  it('bytes that are not UTF-8, not JSON, not an object, or not canonical', async () => {
    expect(await failed(new Uint8Array([0x7b, 0xff, 0x7d]))).toEqual(['encoding.canonical_json']);
    expect(await failed('not json')).toEqual(['encoding.canonical_json']);
    expect(await failed('[1,2]')).toEqual(['encoding.canonical_json']);
    expect(await failed('{"b":1,"a":2}')).toEqual(['encoding.canonical_json']);
    expect(await failed('{"a":1.5}')).toEqual(['encoding.canonical_json']);
  });

  it('an empty or skeletal bundle fails every section instead of throwing', async () => {
    const names = await failed('{}');
    expect(names).toEqual(
      expect.arrayContaining(['bundle.hash', 'bundle.version', 'intent.parts', 'ledger.transaction', 'ledger.signatures', 'ledger.receipt', 'chains']),
    );
    const sealed = sealBundle({
      version: 'pgw-proof-bundle/1',
      intent: { parts: ['{}'] },
      ledger: {},
      chains: [{ chain: 'x', legs: [{}] }],
    } as unknown as ProofBundle);
    const n2 = await failed(sealed);
    expect(n2).not.toContain('bundle.hash');
    expect(n2).toEqual(expect.arrayContaining(['intent.parts', 'chain[x].anchor', 'chain[x].validator_set', 'chain[x].leg[undefined].execution_inclusion']));
  });

  it('an RPC cross-check for a chain the bundle does not have fails', async () => {
    const v = await verifyBundle('{}', { rpc: { nowhere: 'http://127.0.0.1:9' } });
    expect(v.checks.find((c) => c.name === 'rpc[nowhere]')).toMatchObject({ ok: false, detail: 'the bundle has no chain nowhere' });
  });
});
