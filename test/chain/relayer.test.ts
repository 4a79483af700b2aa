/**
 * A relayer key's nonces on a real anvil: a sent transaction that the node drops before mining it (evicted from the
 * mempool, node restarted) must not leave a gap that every later transaction of the key queues behind, also when
 * nobody waits for the dropped one any more (the waiter of a later one fills the gap). And a
 * provider's internal error is not taken for a revert (a revert fails a leg for good; an RPC fault is retried).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getContractAddress, type Hex } from 'viem';
import { revertErrorName } from '../../src/chain/anchor.js';
import { createChainClients, DroppedTransactionError, waitForReceipt, type ChainWriter } from '../../src/chain/clients.js';
import { startAnvil, type AnvilHandle } from '../../src/devnet/anvil.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { ANVIL_ADDRESSES, ANVIL_KEYS } from './fixture.js';

let anvil: AnvilHandle;
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 31337, blockTime: 0 });
}, 30_000);
afterAll(async () => {
  await anvil?.stop();
});

const rpc = (method: string, params: unknown[]) =>
  fetch(anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  }).then((r) => r.json());

const writer = (key: Hex) => createChainClients({ rpcUrl: anvil.rpcUrl, chainId: 31337, privateKey: key, pollingIntervalMs: 25 });

/** sends a transfer while mining is paused and has the node drop it */
async function sendAndDrop(w: ChainWriter): Promise<{ hash: Hex; nonce: number }> {
  await rpc('evm_setAutomine', [false]);
  try {
    const hash = await w.wallet.sendTransaction({ to: ANVIL_ADDRESSES[0], value: 1n });
    const { nonce } = await w.public.getTransaction({ hash });
    await rpc('anvil_dropTransaction', [hash]);
    return { hash, nonce };
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
}

describe('waitForReceipt', () => {
  it('the hazard: after a dropped transaction, the next one takes the nonce after the gap and is never mined', async () => {
    const w = writer(ANVIL_KEYS[2]);
    const dropped = await sendAndDrop(w);
    const next = await w.wallet.sendTransaction({ to: ANVIL_ADDRESSES[0], value: 1n });
    expect((await w.public.getTransaction({ hash: next })).nonce).toBe(dropped.nonce + 1);
    await expect(waitForReceipt(w, next, { timeoutMs: 1_000, droppedCheckMs: 60_000 })).rejects.toThrow(/no receipt .* after 1000 ms/);
    await rpc('anvil_dropTransaction', [next]);
  });

  it('a dropped transaction throws DroppedTransactionError and releases its nonce: the next send fills the gap and is mined', async () => {
    const w = writer(ANVIL_KEYS[1]);
    const first = await w.wallet.sendTransaction({ to: ANVIL_ADDRESSES[0], value: 1n });
    expect((await waitForReceipt(w, first)).status).toBe('success');

    const dropped = await sendAndDrop(w);
    const e = await waitForReceipt(w, dropped.hash, { droppedCheckMs: 50 }).catch((x) => x);
    expect(e).toBeInstanceOf(DroppedTransactionError);
    expect(e.message).toMatch(/dropped by the node/);

    const again = await w.wallet.sendTransaction({ to: ANVIL_ADDRESSES[0], value: 1n });
    const receipt = await waitForReceipt(w, again, { timeoutMs: 10_000 });
    expect(receipt.status).toBe('success');
    expect((await w.public.getTransaction({ hash: again })).nonce).toBe(dropped.nonce);
  });

  it('a transaction queued behind a gap nobody fills: its waiter fills the gap with an empty transfer, and it is mined', async () => {
    const w = writer(ANVIL_KEYS[0]);
    const dropped = await sendAndDrop(w); // no waiter is left to notice the drop (its process died, say)
    const next = await w.wallet.sendTransaction({ to: ANVIL_ADDRESSES[0], value: 1n });
    expect((await w.public.getTransaction({ hash: next })).nonce).toBe(dropped.nonce + 1);
    const filled: unknown[] = [];
    const receipt = await waitForReceipt(w, next, { timeoutMs: 10_000, droppedCheckMs: 50, gapFillMs: 200, onGapFilled: (g) => filled.push(g) });
    expect(receipt.status).toBe('success');
    expect(filled).toEqual([{ address: w.account.address, from: dropped.nonce, to: dropped.nonce + 1, hash: next }]);
    // the gap's nonce went to an empty transfer of the key to itself
    const blocks = await Promise.all([0n, 1n].map((back) => w.public.getBlock({ blockNumber: receipt.blockNumber - back, includeTransactions: true })));
    const filler = blocks.flatMap((b) => b.transactions).find((t) => t.nonce === dropped.nonce && t.from.toLowerCase() === w.account.address.toLowerCase());
    expect(filler).toMatchObject({ to: w.account.address.toLowerCase(), value: 0n });
  });
});

describe('revertErrorName', () => {
  const abi = [{ type: 'function', name: 'f', inputs: [], outputs: [], stateMutability: 'nonpayable' }] as const;

  it('names a contract revert, and not a provider internal error (-32603) that viem reports as one without revert data', async () => {
    const w = writer(ANVIL_KEYS[2]);
    // a contract whose code is PUSH1 0 PUSH1 0 REVERT
    const deploy = await w.wallet.sendTransaction({ data: '0x6460006000fd6000526005601bf3' });
    const { from, nonce } = await w.public.getTransaction({ hash: deploy });
    await waitForReceipt(w, deploy);
    const address = getContractAddress({ from, nonce: BigInt(nonce) });
    const reverted = await w.wallet.writeContract({ address, abi, functionName: 'f' }).catch((e) => e);
    expect(revertErrorName(reverted)).toBeDefined();

    const proxy = await startFaultProxy(anvil.rpcUrl, {
      answer: (_p, body) =>
        ['eth_estimateGas', 'eth_sendRawTransaction'].includes(body?.method)
          ? { jsonrpc: '2.0', id: body.id, error: { code: -32603, message: 'upstream request timed out' } }
          : undefined,
    });
    try {
      const behind = createChainClients({ rpcUrl: proxy.url, chainId: 31337, privateKey: ANVIL_KEYS[2], pollingIntervalMs: 25 });
      const fault = await behind.wallet.writeContract({ address, abi, functionName: 'f', gas: 100_000n }).catch((e) => e);
      expect(fault).toBeInstanceOf(Error);
      expect(String(fault.message)).toMatch(/upstream request timed out/);
      expect(revertErrorName(fault)).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });
});
