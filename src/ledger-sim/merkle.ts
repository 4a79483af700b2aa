/**
 * Append-only Merkle chain with the Accumulate Go DAG algorithm (pkg/database/merkle/state.go):
 * AddEntry fills "pending" slots like a binary counter; Anchor() folds them as combine(slot, acc),
 * starting from the lowest non-empty slot. Receipts fold with right ? H(h||x) : H(x||h).
 */
import { sha256 } from 'accumulate.js/common';
import type { Receipt, ReceiptEntry } from '../ledger/receipt.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));
const combine = (l: Uint8Array, r: Uint8Array) => sha256(Buffer.concat([l, r]));

export class MerkleChain {
  /** Leaves as hex. */
  constructor(readonly leaves: string[] = []) {}

  get height(): number {
    return this.leaves.length;
  }

  add(hash: string): number {
    this.leaves.push(hash.toLowerCase());
    return this.leaves.length - 1;
  }

  indexOf(hash: string): number {
    return this.leaves.indexOf(hash.toLowerCase());
  }

  /** Root of a perfect subtree of 2^level leaves starting at `start`. */
  private subtree(start: number, level: number): Uint8Array {
    if (level === 0) return unhex(this.leaves[start]!);
    const half = 1 << (level - 1);
    return combine(this.subtree(start, level - 1), this.subtree(start + half, level - 1));
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
