/** The worker's workflow cache is sized from the machine's cores (100 each, at least 100), capped by its memory. */
import { describe, expect, it } from 'vitest';
import { workflowCacheSize } from '../../src/temporal/worker.js';

const GiB = 2 ** 30;

describe('workflowCacheSize', () => {
  it('100 workflows per core, at least 100', () => {
    expect(workflowCacheSize(2, 24 * GiB)).toBe(200);
    expect(workflowCacheSize(1, 24 * GiB)).toBe(100);
    expect(workflowCacheSize(16, 64 * GiB)).toBe(1600);
  });
  it('at most a quarter of the memory at 1 MiB each', () => {
    expect(workflowCacheSize(8, 1 * GiB)).toBe(256);
    expect(workflowCacheSize(2, 256 * 2 ** 20)).toBe(64);
  });
});
