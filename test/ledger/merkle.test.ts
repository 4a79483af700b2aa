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

  it('the chain kept for a state array follows appends made to the array itself (the simulator pushes leaves)', () => {
    const leaves: string[] = [];
    for (let n = 1; n <= 70; n++) {
      leaves.push(leaf(n));
      const c = MerkleChain.of(leaves);
      expect(c).toBe(MerkleChain.of(leaves));
      expect(c.anchor()).toBe(goAnchor(leaves));
      expect(c.indexOf(leaf(n).toUpperCase())).toBe(n - 1);
      for (const i of [0, n >> 1, n - 1]) {
        const r = c.receipt(i);
        expect(r.anchor).toBe(goAnchor(leaves));
        expect(verifyReceipt(r)).toBe(true);
      }
      // an earlier height still proves against its own anchor
      expect(c.receipt(0, Math.ceil(n / 2)).anchor).toBe(goAnchor(leaves.slice(0, Math.ceil(n / 2))));
    }
    expect(MerkleChain.of(leaves).indexOf(leaf(999))).toBe(-1);
    // a duplicate leaf keeps its first position, as Array.indexOf did
    leaves.push(leaf(3));
    expect(MerkleChain.of(leaves).indexOf(leaf(3))).toBe(2);
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
