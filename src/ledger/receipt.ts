/** Merkle receipt verification: fold entries from `start` and compare with `anchor`. */
import { sha256 } from 'accumulate.js/common';
import { fromHex, toHex } from './signing.js';

export interface ReceiptEntry {
  hash: string;
  right?: boolean;
}
export interface Receipt {
  start: string;
  startIndex?: number;
  end?: string;
  endIndex?: number;
  anchor: string;
  entries: ReceiptEntry[];
  localBlock?: number;
  localBlockTime?: string;
  majorBlock?: number;
}

/**
 * h = start; for each entry: h = right ? SHA256(h || e.hash) : SHA256(e.hash || h); valid iff h == anchor.
 * Strict: every hash must be 32 bytes. Returns false on malformed input instead of throwing.
 */
export function verifyReceipt(r: Receipt, opts: { expectStart?: string; expectAnchor?: string } = {}): boolean {
  try {
    let h = fromHex(r.start, 'receipt.start', 32);
    for (const e of r.entries ?? []) {
      const x = fromHex(e.hash, 'receipt.entries.hash', 32);
      h = e.right ? sha256(Buffer.concat([h, x])) : sha256(Buffer.concat([x, h]));
    }
    const anchor = fromHex(r.anchor, 'receipt.anchor', 32);
    if (!Buffer.from(h).equals(Buffer.from(anchor))) return false;
    if (opts.expectStart && opts.expectStart.toLowerCase() !== toHex(fromHex(r.start, 'start')).toLowerCase()) return false;
    if (opts.expectAnchor && opts.expectAnchor.toLowerCase() !== toHex(anchor)) return false;
    return true;
  } catch {
    return false;
  }
}

/** Combine r1 (start -> X) with r2 (X -> anchor). Requires r1.anchor == r2.start. */
export function combineReceipts(r1: Receipt, r2: Receipt): Receipt {
  if (r1.anchor.toLowerCase() !== r2.start.toLowerCase()) throw new Error('combineReceipts: r1.anchor != r2.start');
  return {
    start: r1.start,
    end: r1.end,
    anchor: r2.anchor,
    entries: [...r1.entries, ...r2.entries],
    localBlock: r2.localBlock,
    localBlockTime: r2.localBlockTime,
  };
}
