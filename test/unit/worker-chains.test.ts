/**
 * The worker's chains are the configured ones, every field included: workerActivityDeps used to rebuild each
 * CHAINS entry field by field and left out logRangeBlocks, so findExecutionTx scanned in 10,000-block spans whatever
 * the provider's limit was.
 */
import { describe, expect, it } from 'vitest';
import { createChainAccess } from '../../src/activities/chain-access.js';
import { workerActivityDeps } from '../../src/activities/worker-deps.js';
import { loadConfig } from '../../src/config.js';

const contracts = { proofAnchor: `0x${'11'.repeat(20)}`, accountFactory: `0x${'22'.repeat(20)}` };
const CHAINS = [
  { name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: 'http://127.0.0.1:8545', confirmations: 3, logRangeBlocks: 500, contracts },
  { name: 'polygon-amoy', chainId: 80002, rpcUrl: 'http://127.0.0.1:8546' },
];

describe("the worker's chain registry", () => {
  it('carries every configured field, logRangeBlocks included, to what activities read', () => {
    const config = loadConfig({ CHAINS: JSON.stringify(CHAINS) });
    const { chains } = workerActivityDeps(config);
    // each entry is the parsed CHAINS entry, nothing dropped (defaults filled in: confirmations 2)
    expect(chains.list()).toEqual(config.chains);
    expect(chains.get('ethereum-sepolia').logRangeBlocks).toBe(500);
    expect(chains.get('polygon-amoy')).toEqual({ name: 'polygon-amoy', chainId: 80002, rpcUrl: 'http://127.0.0.1:8546', confirmations: 2 });
    // what intent.ts passes to findExecutionTx as maxRange
    expect(createChainAccess({ chains }).entry('ethereum-sepolia').logRangeBlocks).toBe(500);
  });
});
