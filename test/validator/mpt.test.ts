/** Our MPT against known roots, its proofs, and proof verification failures. */
import { describe, expect, it } from 'vitest';
import { stringToBytes, toHex, type Hex } from 'viem';
import { EMPTY_TRIE_ROOT, MptProofError, buildTrie, rlpIndexKey, verifyMptProof } from '../../src/chain/effects/mpt.js';

const kv = (k: string, v: string) => ({ key: stringToBytes(k), value: stringToBytes(v) });

describe('merkle-patricia trie', () => {
  it('empty trie root', () => {
    expect(buildTrie([]).root).toBe('0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421');
    expect(EMPTY_TRIE_ROOT).toBe('0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421');
  });

  it('the classic do/dog/doge/horse trie has the known root', () => {
    const t = buildTrie([kv('do', 'verb'), kv('dog', 'puppy'), kv('doge', 'coin'), kv('horse', 'stallion')]);
    expect(t.root).toBe('0x5991bb8c6514148a29db676a14ac506cd2cd5775ace63c30a4fe457715e9ac84');
  });

  it('proves inclusion and absence; a tampered proof or root fails', () => {
    const entries = Array.from({ length: 40 }, (_, i) => ({ key: rlpIndexKey(i), value: toHex(`receipt-${i}-${'x'.repeat(i)}`) }));
    const t = buildTrie(entries);
    for (const i of [0, 1, 7, 16, 39]) {
      const p = t.proof(rlpIndexKey(i));
      expect(verifyMptProof(t.root, rlpIndexKey(i), p)).toBe(entries[i]!.value);
    }
    const absent = t.proof(rlpIndexKey(40));
    expect(verifyMptProof(t.root, rlpIndexKey(40), absent)).toBeNull();
    const p = t.proof(rlpIndexKey(7));
    const bad = [...p];
    bad[bad.length - 1] = (bad[bad.length - 1]!.slice(0, -2) + (bad[bad.length - 1]!.endsWith('00') ? '01' : '00')) as Hex;
    expect(() => verifyMptProof(t.root, rlpIndexKey(7), bad)).toThrow(MptProofError);
    expect(() => verifyMptProof(`0x${'12'.repeat(32)}`, rlpIndexKey(7), p)).toThrow(/missing node/);
    // a proof along another path does not reach this key's node
    expect(() => verifyMptProof(t.root, rlpIndexKey(39), p)).toThrow(/missing node/);
  });

  it('exact: the proof must be the nodes of the path in path order, nothing else (the default accepts more)', () => {
    const entries = Array.from({ length: 40 }, (_, i) => ({ key: rlpIndexKey(i), value: toHex(`receipt-${i}-${'x'.repeat(i)}`) }));
    const t = buildTrie(entries);
    const exact = { exact: true };
    const p = t.proof(rlpIndexKey(7));
    const other = t.proof(rlpIndexKey(39));
    expect(p.length).toBeGreaterThan(1);
    expect(verifyMptProof(t.root, rlpIndexKey(7), p, exact)).toBe(entries[7]!.value);
    expect(verifyMptProof(t.root, rlpIndexKey(40), t.proof(rlpIndexKey(40)), exact)).toBeNull();
    expect(verifyMptProof(EMPTY_TRIE_ROOT, rlpIndexKey(0), [], exact)).toBeNull();
    const offPath = other.find((n) => !p.includes(n))!;
    const padded: [string, Hex[]][] = [
      ['a node off the path appended', [...p, offPath]],
      ['a node off the path first', [offPath, ...p]],
      ['a path node repeated', [...p, p[0]!]],
      ['the path reversed', [...p].reverse()],
    ];
    for (const [what, proof] of padded) {
      expect(verifyMptProof(t.root, rlpIndexKey(7), proof), what).toBe(entries[7]!.value);
      expect(() => verifyMptProof(t.root, rlpIndexKey(7), proof, exact), what).toThrow(/proof is not exactly the path/);
    }
    expect(() => verifyMptProof(EMPTY_TRIE_ROOT, rlpIndexKey(0), [offPath], exact)).toThrow(/proof is not exactly the path/);
  });

  it('proofs from a trie that already answered others are the proofs a fresh trie gives (nodes are built once)', () => {
    const sets = [
      [kv('do', 'verb'), kv('dog', 'puppy'), kv('doge', 'coin'), kv('horse', 'stallion')],
      Array.from({ length: 300 }, (_, i) => ({ key: rlpIndexKey(i), value: toHex(`r-${i}`) })),
    ];
    for (const entries of sets) {
      const shared = buildTrie(entries);
      for (const e of [...entries].reverse()) {
        const fresh = buildTrie(entries).proof(e.key);
        expect(shared.proof(e.key)).toEqual(fresh);
        expect(verifyMptProof(shared.root, e.key, fresh)).toBe(typeof e.value === 'string' ? e.value : toHex(e.value));
      }
    }
  });
});
