/**
 * Bounded log searches. An eth_getLogs from block 0 reads a public chain's whole history and most RPC providers
 * refuse ranges beyond a few thousand blocks, so every search here starts at a block known to be no later than
 * the event (a block recorded by the contracts, or one found by timestamp) and goes forward in spans of at most
 * `ChainEntry.logRangeBlocks` blocks.
 */
import type { ChainClients } from './clients.js';

/** Span of one eth_getLogs call when the chain entry names none (a common provider limit). */
export const DEFAULT_LOG_RANGE_BLOCKS = 10_000;

/**
 * Calls `fetch(from, to)` over [fromBlock, toBlock (default: the latest block)] in consecutive spans of at most
 * `maxRange` blocks and returns the results in block order; with `firstMatch`, stops after the first span that
 * returned anything.
 */
export async function scanLogs<T>(
  c: ChainClients,
  fromBlock: bigint,
  fetch: (from: bigint, to: bigint) => Promise<readonly T[]>,
  opts: { toBlock?: bigint; maxRange?: number; firstMatch?: boolean } = {},
): Promise<T[]> {
  const maxRange = BigInt(opts.maxRange ?? DEFAULT_LOG_RANGE_BLOCKS);
  if (maxRange < 1n) throw new RangeError('maxRange must be at least 1 block');
  const toBlock = opts.toBlock ?? (await c.public.getBlockNumber({ cacheTime: 0 }));
  const out: T[] = [];
  for (let from = fromBlock < 0n ? 0n : fromBlock; from <= toBlock; from += maxRange) {
    const to = from + maxRange - 1n < toBlock ? from + maxRange - 1n : toBlock;
    out.push(...(await fetch(from, to)));
    if (opts.firstMatch && out.length) break;
  }
  return out;
}

/**
 * A block whose timestamp is at or before `unixSeconds` (0 if the chain is younger), found from the latest block
 * by galloping back: the first step assumes one block per second (at least as many blocks as any chain in use
 * makes), and each step that lands after the time doubles. Usually two getBlock calls; the block found may be
 * earlier than the last one at that time, which only widens a search that starts there.
 */
export async function blockAtOrBefore(c: ChainClients, unixSeconds: bigint): Promise<bigint> {
  const latest = await c.public.getBlock({ blockTag: 'latest' });
  if (latest.timestamp <= unixSeconds) return latest.number;
  let step = latest.timestamp - unixSeconds;
  for (;;) {
    const n = latest.number - step;
    if (n <= 0n) return 0n;
    const b = await c.public.getBlock({ blockNumber: n });
    if (b.timestamp <= unixSeconds) return n;
    step *= 2n;
  }
}
