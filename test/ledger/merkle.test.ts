import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { MerkleChain } from '../../src/ledger-sim/merkle.js';
import { combineReceipts, verifyReceipt } from '../../src/ledger/receipt.js';

const sha = (...b: Buffer[]) => createHash('sha256').update(Buffer.concat(b)).digest();
const leaf = (i: number) => sha(Buffer.from(`leaf-${i}`)).toString('hex');

/** Go pkg/database/merkle/state.go, transcribed: AddEntry fills pending slots; Anchor folds them. */
function goAnchor(leaves: string[]): string {
  const pending: (Buffer | undefined)[] = [];
  for (const l of leaves) {
    let h = Buffer.from(l, 'hex');
    let placed = false;
    for (let i = 0; i < pending.length; i++) {
      const v = pending[i];
      if (!v) {
        pending[i] = h;
        placed = true;
        break;
      }
      h = sha(v, h);
      pending[i] = undefined;
    }
    if (!placed) pending.push(h);
  }
  let anchor: Buffer | undefined;
  for (const v of pending) {
    if (!v) continue;
    anchor = anchor ? sha(v, anchor) : v;
  }
  return anchor!.toString('hex');
}

describe('simulated Merkle chains', () => {
  it('anchor equals the Go DAG algorithm for 1..40 leaves', () => {
    const c = new MerkleChain();
    for (let n = 1; n <= 40; n++) {
      c.add(leaf(n));
      expect(c.anchor()).toBe(goAnchor(c.leaves));
    }
  });

  it('every receipt verifies against the anchor at every height, and tampering breaks it', () => {
    const c = new MerkleChain(Array.from({ length: 23 }, (_, i) => leaf(i)));
    for (let n = 1; n <= 23; n++) {
      for (let i = 0; i < n; i++) {
        const r = c.receipt(i, n);
        expect(r.anchor).toBe(goAnchor(c.leaves.slice(0, n)));
        expect(verifyReceipt(r)).toBe(true);
        if (r.entries.length) {
          const bad = { ...r, entries: r.entries.map((e, j) => (j === r.entries.length - 1 ? { ...e, hash: leaf(999) } : e)) };
          expect(verifyReceipt(bad)).toBe(false);
        }
      }
    }
  });

  it('combined receipts (entry -> chain anchor -> root chain) verify; malformed input is false, not a throw', () => {
    const a = new MerkleChain([leaf(1), leaf(2), leaf(3)]);
    const root = new MerkleChain([leaf(50), a.anchor(), leaf(51)]);
    const r = combineReceipts(a.receipt(1), root.receipt(1));
    expect(verifyReceipt(r)).toBe(true);
    expect(verifyReceipt({ ...r, start: 'zz' })).toBe(false);
    expect(verifyReceipt({ ...r, entries: [{ hash: 'abcd' }] })).toBe(false);
    expect(() => combineReceipts(root.receipt(0), a.receipt(0))).toThrow(/anchor/);
  });
});
