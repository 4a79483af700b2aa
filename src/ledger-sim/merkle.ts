/**
 * Append-only Merkle chain with the Accumulate Go DAG algorithm (pkg/database/merkle/state.go):
 * AddEntry fills "pending" slots like a binary counter; Anchor() folds them as combine(slot, acc),
 * starting from the lowest non-empty slot. Receipts fold with right ? H(h||x) : H(x||h).
 *
 * Every subtree the algorithm touches is perfect and aligned (2^level leaves from a multiple of 2^level), and a
 * complete one never changes in an append-only chain, so each root is hashed once and kept: an anchor or a receipt
 * costs O(log n) lookups plus the hashing of what was appended since, not O(n) hashes from the leaves up.
 */
import { createHash } from 'node:crypto';
import type { Receipt, ReceiptEntry } from '../ledger/receipt.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const combine = (l: Uint8Array, r: Uint8Array) => createHash('sha256').update(l).update(r).digest();

/** One chain object per leaves array, so its memo lives as long as the array (the simulator's state). */
const chains = new WeakMap<string[], MerkleChain>();

export class MerkleChain {
  /** nodes[level][k] (level ≥ 1): root of the subtree of 2^level leaves starting at k·2^level */
  private readonly nodes: Uint8Array[][] = [];
  /** leaf hash -> first index, for the first `indexed` leaves */
  private readonly positions = new Map<string, number>();
  private indexed = 0;

  /** Leaves as hex. */
  constructor(readonly leaves: string[] = []) {}

  /** The chain over `leaves` (an array that is only ever appended to), with the roots hashed so far. */
  static of(leaves: string[]): MerkleChain {
    let c = chains.get(leaves);
    if (!c) chains.set(leaves, (c = new MerkleChain(leaves)));
    return c;
  }

  get height(): number {
    return this.leaves.length;
  }

  add(hash: string): number {
    this.leaves.push(hash.toLowerCase());
    return this.leaves.length - 1;
  }

  indexOf(hash: string): number {
    for (; this.indexed < this.leaves.length; this.indexed++) {
      const l = this.leaves[this.indexed]!;
      if (!this.positions.has(l)) this.positions.set(l, this.indexed);
    }
    return this.positions.get(hash.toLowerCase()) ?? -1;
  }

  /** Root of the perfect subtree of 2^level leaves starting at `start` (a multiple of 2^level). */
  private subtree(start: number, level: number): Uint8Array {
    if (level === 0) return Buffer.from(this.leaves[start]!, 'hex'); // the leaf itself: not worth keeping twice
    const row = (this.nodes[level] ??= []);
    const k = start >>> level;
    let h = row[k];
    if (!h) row[k] = h = combine(this.subtree(start, level - 1), this.subtree(start + (1 << (level - 1)), level - 1));
    return h;
  }

  /** Decomposition of the first n leaves into perfect subtrees, oldest (largest) first. */
  private peaks(n: number): { start: number; level: number }[] {
    const out: { start: number; level: number }[] = [];
    let start = 0;
    for (let level = 31; level >= 0; level--) {
      if (n & (1 << level)) {
        out.push({ start, level });
        start += 1 << level;
      }
    }
    return out;
  }

  /** Anchor (root) of the chain at n leaves (default: all). */
  anchor(n = this.leaves.length): string {
    if (n === 0) return '00'.repeat(32);
    const peaks = this.peaks(n);
    let acc: Uint8Array | undefined;
    for (let i = peaks.length - 1; i >= 0; i--) {
      const s = this.subtree(peaks[i]!.start, peaks[i]!.level);
      acc = acc ? combine(s, acc) : s;
    }
    return hex(acc!);
  }

  /** Receipt proving leaf `index` against the anchor at n leaves. */
  receipt(index: number, n = this.leaves.length): Receipt {
    if (index < 0 || index >= n || n > this.leaves.length) throw new Error(`receipt: index ${index} out of range`);
    const peaks = this.peaks(n);
    const entries: ReceiptEntry[] = [];
    const pi = peaks.findIndex((p) => index >= p.start && index < p.start + (1 << p.level));
    const peak = peaks[pi]!;
    // inside the perfect subtree
    let start = peak.start;
    for (let level = peak.level; level > 0; level--) {
      const half = 1 << (level - 1);
      if (index < start + half) {
        entries.push({ hash: hex(this.subtree(start + half, level - 1)), right: true });
      } else {
        entries.push({ hash: hex(this.subtree(start, level - 1)) });
        start += half;
      }
    }
    entries.reverse();
    // fold of the lower (younger) peaks sits on the right
    let lower: Uint8Array | undefined;
    for (let i = peaks.length - 1; i > pi; i--) {
      const s = this.subtree(peaks[i]!.start, peaks[i]!.level);
      lower = lower ? combine(s, lower) : s;
    }
    if (lower) entries.push({ hash: hex(lower), right: true });
    // higher (older) peaks on the left
    for (let i = pi - 1; i >= 0; i--) entries.push({ hash: hex(this.subtree(peaks[i]!.start, peaks[i]!.level)) });
    return { start: this.leaves[index]!, startIndex: index, end: this.leaves[index]!, endIndex: index, anchor: this.anchor(n), entries };
  }
}
