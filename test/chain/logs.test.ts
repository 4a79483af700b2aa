/**
 * Log searches that work behind a public RPC provider's eth_getLogs limit (src/chain/logs.ts and the finders in
 * anchor.ts / account.ts), on a real anvil behind a proxy that refuses what such providers refuse: a block tag
 * instead of a number, or a span wider than LIMIT blocks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, keccak256, stringToHex } from 'viem';
import { proofAnchorAbi, testTargetAbi } from '../../src/chain/abi/index.js';
import { createAccount, executeGovernanceProofDirect, findAccountDeploymentTx, findExecutionTx, proofForLeg } from '../../src/chain/account.js';
import { createAnchor, executeComprehensiveProof, findAnchorTx, readAnchorState } from '../../src/chain/anchor.js';
import { createChainClients, type ChainClients } from '../../src/chain/clients.js';
import { blockAtOrBefore, scanLogs } from '../../src/chain/logs.js';
import { startAnvil, type AnvilHandle } from '../../src/devnet/anvil.js';
import { rpcLogRangeLimit, startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { planFor, quorumSign, setupSystem, type TestSystem } from './fixture.js';

const LIMIT = 4;

let t: TestSystem;
let proxy: FaultProxy;
/** the chain as seen through the limited provider */
let limited: ChainClients;
const spans: { from: bigint; to: bigint }[] = [];

beforeAll(async () => {
  t = await setupSystem();
  proxy = await startFaultProxy(t.anvil.rpcUrl, { answer: rpcLogRangeLimit(LIMIT, spans) });
  limited = createChainClients({ rpcUrl: proxy.url, chainId: Number(t.chainId), pollingIntervalMs: 25 });
}, 60_000);
afterAll(async () => {
  await proxy?.close();
  await t?.anvil.stop();
});

const mine = (rpcUrl: string, blocks: number, intervalS = 0) =>
  fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: [`0x${blocks.toString(16)}`, `0x${intervalS.toString(16)}`] }),
  }).then((r) => r.json());

/** spans [from, to] that follow each other without gap or overlap, each at most LIMIT blocks */
function expectContiguous(s: { from: bigint; to: bigint }[], from: bigint) {
  expect(s[0]?.from).toBe(from);
  for (let i = 0; i < s.length; i++) {
    expect(s[i]!.to - s[i]!.from).toBeLessThan(BigInt(LIMIT));
    if (i > 0) expect(s[i]!.from).toBe(s[i - 1]!.to + 1n);
  }
}

describe('behind a provider that limits eth_getLogs', () => {
  it('the limit is real: a search from block 0 to latest is refused', async () => {
    await expect(
      limited.public.getContractEvents({ address: t.sys.proofAnchor, abi: proofAnchorAbi, eventName: 'AnchorCreated', fromBlock: 0n, toBlock: 'latest' }),
    ).rejects.toThrow(/limited to 4 blocks/);
  });

  it('an anchor records the blocks of its creation and proof; each transaction is read from that block, the execution found from the proof forward', async () => {
    const data = encodeFunctionData({ abi: testTargetAbi, functionName: 'record', args: [keccak256(stringToHex('logs'))] });
    const { plan, account, message } = await planFor(t, 'acc://logs.acme', [{ target: t.target, value: 0n, data }]);
    const anchor = t.sys.proofAnchor;
    expect(await findAnchorTx(limited, anchor, plan.anchorId, 'created')).toBeUndefined();

    const created = await createAnchor(t.w, anchor, plan);
    await mine(t.anvil.rpcUrl, 10);
    expect(await readAnchorState(limited, anchor, plan.anchorId)).toMatchObject({
      status: 'created',
      createdBlock: created.tx!.receipt.blockNumber,
      provenBlock: 0n,
    });
    expect(await findAnchorTx(limited, anchor, plan.anchorId, 'created')).toBe(created.tx!.txHash);
    expect(await findAnchorTx(limited, anchor, plan.anchorId, 'proven')).toBeUndefined();

    const proven = await executeComprehensiveProof(t.w, anchor, { anchorId: plan.anchorId, ...quorumSign(t.validators, [0, 1, 2, 3, 4], message) });
    const provenBlock = proven.tx!.receipt.blockNumber;
    expect(await readAnchorState(limited, anchor, plan.anchorId)).toMatchObject({
      status: 'proven',
      createdBlock: created.tx!.receipt.blockNumber,
      provenBlock,
    });
    expect(await findAnchorTx(limited, anchor, plan.anchorId, 'proven')).toBe(proven.tx!.txHash);

    const leaf = { proofAnchor: anchor, account, anchorId: plan.anchorId, leafIndex: 0n, maxRange: LIMIT };
    await mine(t.anvil.rpcUrl, 9);
    spans.length = 0;
    const latestBefore = await t.w.public.getBlockNumber({ cacheTime: 0 });
    expect(await findExecutionTx(limited, leaf)).toBeUndefined(); // proven, not executed: every span searched
    expectContiguous(spans, provenBlock);
    // up to the latest block (anvil also mines a block every 0.2 s, so "latest" moves while the test runs)
    expect(spans.at(-1)!.to).toBeGreaterThanOrEqual(latestBefore);
    expect(spans.at(-1)!.to).toBeLessThanOrEqual(await t.w.public.getBlockNumber({ cacheTime: 0 }));

    const executed = await executeGovernanceProofDirect(t.w, account, { target: t.target, value: 0n, data, proof: proofForLeg(plan, 0) });
    expect(executed.status).toBe('success');
    await mine(t.anvil.rpcUrl, 20);
    spans.length = 0;
    expect(await findExecutionTx(limited, leaf)).toBe(executed.txHash);
    expectContiguous(spans, provenBlock);
    // stops at the span that holds it
    expect(spans.at(-1)!.to).toBeGreaterThanOrEqual(executed.receipt.blockNumber);
    expect(spans.at(-1)!.to).toBeLessThan(executed.receipt.blockNumber + BigInt(LIMIT));
    expect(await findExecutionTx(limited, { ...leaf, leafIndex: 1n })).toBeUndefined();
  });

  it('an account records its deployment block; the deployment transaction is read from it', async () => {
    const made = await createAccount(t.w, t.sys.accountFactory, 'acc://deployed-at.acme');
    await mine(t.anvil.rpcUrl, 12);
    expect(await findAccountDeploymentTx(limited, t.sys.accountFactory, made.address)).toBe(made.tx!.txHash);
  });

  it('scanLogs covers [from, latest] in consecutive spans and finds what one unlimited call finds', async () => {
    const direct = await t.w.public.getContractEvents({
      address: t.sys.proofAnchor,
      abi: proofAnchorAbi,
      eventName: 'AnchorCreated',
      fromBlock: 0n,
      toBlock: 'latest',
    });
    expect(direct.length).toBeGreaterThan(0);
    spans.length = 0;
    const scanned = await scanLogs(
      limited,
      0n,
      (fromBlock, toBlock) =>
        limited.public.getContractEvents({ address: t.sys.proofAnchor, abi: proofAnchorAbi, eventName: 'AnchorCreated', fromBlock, toBlock }),
      { maxRange: LIMIT },
    );
    expect(scanned.map((l) => l.transactionHash)).toEqual(direct.map((l) => l.transactionHash));
    expectContiguous(spans, 0n);
    await expect(scanLogs(limited, 0n, async () => [], { maxRange: 0 })).rejects.toThrow(RangeError);
  });
});

describe('blockAtOrBefore', () => {
  let anvil: AnvilHandle;
  let c: ChainClients;
  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 31337, blockTime: 0 });
    c = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: 31337, pollingIntervalMs: 25 });
  }, 30_000);
  afterAll(async () => {
    await anvil?.stop();
  });

  const tsOf = async (n: bigint) => (await c.public.getBlock({ blockNumber: n })).timestamp;

  it('returns a block at or before the time, at most twice as far back as needed; the latest for a later time, 0 before the chain began', async () => {
    await mine(anvil.rpcUrl, 200, 12); // blocks 1..200, 12 s apart
    await mine(anvil.rpcUrl, 500, 0); // blocks 201..700 in the same second as block 200, as on fast chains
    const latest = await c.public.getBlock({ blockTag: 'latest' });
    const genesis = await tsOf(0n);
    expect(latest.number).toBe(700n);
    expect(await blockAtOrBefore(c, latest.timestamp + 100n)).toBe(700n);
    expect(await blockAtOrBefore(c, latest.timestamp)).toBe(700n);
    expect(await blockAtOrBefore(c, genesis - 1n)).toBe(0n);
    const ts = await Promise.all(Array.from({ length: 701 }, (_, i) => tsOf(BigInt(i))));
    for (const back of [1n, 2n, 13n, 30n, 100n, 1000n]) {
      const at = latest.timestamp - back;
      const last = BigInt(ts.findLastIndex((x) => x <= at)); // the last block at or before `at`
      const n = await blockAtOrBefore(c, at);
      expect(await tsOf(n)).toBeLessThanOrEqual(at);
      expect(n).toBeLessThanOrEqual(last);
      expect(n).toBeGreaterThanOrEqual(700n - 2n * (700n - last) > 0n ? 700n - 2n * (700n - last) : 0n);
    }
  });
});
