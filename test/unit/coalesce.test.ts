import { describe, expect, it } from 'vitest';
import { coalescingCache } from '../../src/net/coalesce.js';

describe('coalescingCache', () => {
  it('makes one call for concurrent asks of a key and keeps its result', async () => {
    const cache = coalescingCache<string, number>(10);
    let calls = 0;
    let release!: (n: number) => void;
    const load = () => {
      calls++;
      return new Promise<number>((r) => (release = r));
    };
    const asks = Array.from({ length: 20 }, () => cache('batch-1', load));
    expect(calls).toBe(1);
    release(7);
    expect(await Promise.all(asks)).toEqual(Array(20).fill(7));
    expect(await cache('batch-1', load)).toBe(7);
    expect(calls).toBe(1);
  });

  it('keeps no failure: the asks under way share it, the next ask calls again', async () => {
    const cache = coalescingCache<string, number>(10);
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error('ledger down');
    };
    const both = await Promise.allSettled([cache('k', failing), cache('k', failing)]);
    expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    // a load that throws before its first await is a rejection too, not a throw at the caller
    const sync = () => {
      calls++;
      throw new Error('bad key');
    };
    await expect(cache('k', sync)).rejects.toThrow('bad key');
    expect(await cache('k', async () => 3)).toBe(3);
    expect(calls).toBe(2);
  });

  it('holds at most max results, dropping the oldest', async () => {
    const cache = coalescingCache<number, number>(2);
    let calls = 0;
    const load = (n: number) => async () => {
      calls++;
      return n;
    };
    for (const k of [1, 2, 3]) await cache(k, load(k));
    await cache(3, load(3));
    await cache(2, load(2));
    expect(calls).toBe(3);
    await cache(1, load(1));
    expect(calls).toBe(4);
  });
});
