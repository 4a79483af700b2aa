/** The devnet anvil launcher: readiness, flags in effect, and a stop that leaves no process behind. */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createPublicClient, http } from 'viem';
import { startAnvil } from '../../src/devnet/anvil.js';
import { assertBlsPrecompiles } from '../../src/chain/deploy.js';
import { createChainClients } from '../../src/chain/clients.js';
import { privateKeyToAddress } from 'viem/accounts';
import { ANVIL_ADDRESSES, ANVIL_KEYS } from './fixture.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('startAnvil', () => {
  it('fixture keys are the funded anvil accounts', () => {
    expect(ANVIL_KEYS.map((k) => privateKeyToAddress(k))).toEqual(ANVIL_ADDRESSES);
  });

  it('starts on a free port with the chain id, prague, mixed mining and finalized = latest - 2; stop kills it', async () => {
    const a = await startAnvil({ chainId: 80002 });
    try {
      expect(a.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const c = createPublicClient({ transport: http(a.rpcUrl) });
      expect(await c.getChainId()).toBe(80002);
      const info = (await c.request({ method: 'anvil_nodeInfo' as never })) as { hardFork: string };
      expect(info.hardFork.toLowerCase()).toBe('prague');
      // blocks keep coming without transactions (--block-time 0.2)
      const b0 = await c.getBlockNumber({ cacheTime: 0 });
      await new Promise((r) => setTimeout(r, 900));
      const latest = await c.getBlockNumber({ cacheTime: 0 });
      expect(latest).toBeGreaterThan(b0);
      const fin = await c.getBlock({ blockTag: 'finalized' });
      expect(latest - fin.number).toBeLessThanOrEqual(3n);
      expect(execFileSync('ps', ['-o', 'args=', '-p', String(a.pid)]).toString()).toContain('--slots-in-an-epoch 1');
    } finally {
      await a.stop();
    }
    expect(alive(a.pid)).toBe(false);
    await a.stop(); // idempotent
  });

  it('the EIP-2537 check passes on prague and fails on cancun', async () => {
    const cancun = await startAnvil({ chainId: 31337, blockTime: 0, hardfork: 'cancun' });
    const prague = await startAnvil({ chainId: 31338, blockTime: 0 });
    try {
      await expect(assertBlsPrecompiles(createChainClients({ rpcUrl: prague.rpcUrl, chainId: 31338 }))).resolves.toBeUndefined();
      await expect(assertBlsPrecompiles(createChainClients({ rpcUrl: cancun.rpcUrl, chainId: 31337 }))).rejects.toThrow(/EIP-2537/);
    } finally {
      await Promise.all([cancun.stop(), prague.stop()]);
    }
  });

  it('two chains side by side; a taken port is reported', async () => {
    const [x, y] = await Promise.all([startAnvil({ chainId: 11155111 }), startAnvil({ chainId: 80002, blockTime: 0 })]);
    try {
      expect(x.port).not.toBe(y.port);
      // with anvil's own words, not only its exit code
      await expect(startAnvil({ chainId: 1, port: x.port, timeoutMs: 3000 })).rejects.toThrow(
        /exited before it became ready \(exit code 1\): .*Address already in use/,
      );
    } finally {
      await Promise.all([x.stop(), y.stop()]);
    }
    expect(alive(x.pid) || alive(y.pid)).toBe(false);
  });
});
