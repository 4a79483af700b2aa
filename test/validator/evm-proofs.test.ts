/**
 * Effect proofs against a real anvil block, and against the same block as a Polygon PoS (Bor) node returns it:
 * with the synthetic state-sync transaction and receipt that Bor's RPC appends but its roots exclude.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concatHex, createPublicClient, createWalletClient, http, keccak256, numberToHex, stringToHex, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type AnvilHandle } from '../../src/devnet/anvil.js';
import { borStateSyncTxHash, fetchVerifiedBlock, proveReceipt, proveTransaction, type RawBlock } from '../../src/chain/effects/evm-proofs.js';

const KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const; // anvil's first dev account
let anvil: AnvilHandle;
let block: bigint;
let txs: Hex[];

beforeAll(async () => {
  // automine off: three transfers land in one block
  anvil = await startAnvil({ chainId: 80002, blockTime: 0, extraArgs: ['--no-mining'] });
  const transport = http(anvil.rpcUrl);
  const pub = createPublicClient({ transport });
  const wallet = createWalletClient({
    account: privateKeyToAccount(KEY),
    transport,
    chain: { id: 80002, name: 'amoy-test', nativeCurrency: { name: 'POL', symbol: 'POL', decimals: 18 }, rpcUrls: { default: { http: [anvil.rpcUrl] } } },
  });
  txs = [];
  for (let i = 0; i < 3; i++) txs.push(await wallet.sendTransaction({ to: `0x${'be'.repeat(19)}0${i + 1}`, value: 1000n + BigInt(i), nonce: i }));
  await pub.request({ method: 'evm_mine', params: [] } as never);
  block = (await pub.getTransactionReceipt({ hash: txs[2]! })).blockNumber;
});

afterAll(async () => {
  await anvil?.stop();
});

/** An RPC that answers like Bor for blocks with state-sync events: one more transaction and receipt, last. */
function borLike(upstream: string): Pick<PublicClient, 'request'> {
  const pub = createPublicClient({ transport: http(upstream) });
  return {
    request: (async (args: { method: string; params: unknown[] }): Promise<unknown> => {
      const res = (await pub.request(args as never)) as any;
      if (args.method === 'eth_getBlockByNumber' || args.method === 'eth_getBlockByHash') {
        return { ...res, transactions: [...res.transactions, borStateSyncTxHash(res)] };
      }
      if (args.method === 'eth_getBlockReceipts') {
        const b = (await pub.request({ method: 'eth_getBlockByNumber', params: [args.params[0], false] } as never)) as RawBlock;
        const sync = borStateSyncTxHash(b);
        return [
          ...res,
          {
            ...res[0],
            transactionHash: sync,
            transactionIndex: numberToHex(res.length),
            cumulativeGasUsed: res.at(-1).cumulativeGasUsed,
            gasUsed: '0x0',
            status: '0x1',
            type: '0x0',
            logs: [{ address: '0x0000000000000000000000000000000000001001', topics: [keccak256(stringToHex('StateCommitted(uint256,bool)'))], data: '0x' }],
          },
        ];
      }
      return res;
    }) as PublicClient['request'],
  };
}

describe('effect proofs', () => {
  it("the state-sync hash is keccak256('matic-bor-receipt-' || uint64 number || block hash)", () => {
    const b = { number: '0x1b4' as Hex, hash: `0x${'ab'.repeat(32)}` as Hex };
    expect(borStateSyncTxHash(b)).toBe(keccak256(concatHex([stringToHex('matic-bor-receipt-'), '0x00000000000001b4', b.hash])).toLowerCase());
  });

  it('proves each transaction and receipt of a block', async () => {
    const rpc = createPublicClient({ transport: http(anvil.rpcUrl) });
    const b = await fetchVerifiedBlock(rpc, { number: block });
    expect(b.transactions).toHaveLength(3);
    for (const h of txs) {
      const t = await proveTransaction(rpc, b, h);
      const r = await proveReceipt(rpc, b, t.txIndex);
      expect(r.status).toBe(1);
      expect(r.gasUsed).toBe(21_000n);
    }
  });

  it('on a Polygon PoS block the synthetic state-sync transaction and receipt are left out of the tries (the roots exclude them)', async () => {
    const rpc = borLike(anvil.rpcUrl);
    const b = await fetchVerifiedBlock(rpc, { number: block });
    expect(b.transactions).toHaveLength(3);
    for (const h of txs) {
      const t = await proveTransaction(rpc, b, h);
      const r = await proveReceipt(rpc, b, t.txIndex);
      expect(r.status).toBe(1);
    }
    // the state-sync transaction itself is not a provable execution
    await expect(proveTransaction(rpc, b, borStateSyncTxHash(b))).rejects.toThrow(/is not in block/);
  });
});
