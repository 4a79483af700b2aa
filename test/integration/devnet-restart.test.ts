/**
 * `npm start` twice on the same DATA_DIR: the chains come back with their state (system contracts, the example
 * contract and what was written to it), the Temporal database lives under DATA_DIR, and a data dir whose chain
 * state was lost is refused instead of running with identities that point at nothing.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { testTargetAbi } from '../../src/chain/abi/index.js';
import { chainDefinition } from '../../src/chain/clients.js';
import { ANVIL_DEV_KEY_0 } from '../../src/devnet/contracts.js';
import { chainStateFile, formatSummary, startDevnet, type Devnet } from '../../src/devnet/index.js';
import { freePortDevnet } from '../support/devnet-config.js';
import { arg } from '../support/test-target.js';
import { quietLogger } from '../support/env.js';

describe('devnet restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-devnet-restart-'));
  let devnet: Devnet | undefined;
  afterAll(async () => {
    await devnet?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(env: Record<string, string> = {}) {
    const { config, temporalProfile } = await freePortDevnet(dataDir, env);
    // no dbFilename override: temporal-dev.yml's relative file must land under DATA_DIR
    return startDevnet(config, quietLogger, { temporalProfile });
  }
  const clientOf = (c: { chainId: number; rpcUrl: string }) => createPublicClient({ chain: chainDefinition(c.chainId, c.rpcUrl), transport: http(c.rpcUrl) });
  const code = async (c: { chainId: number; rpcUrl: string }, address: string) => (await clientOf(c).getCode({ address: address as Address })) ?? '0x';

  it('keeps chain state across a restart and refuses a data dir that lost it', { timeout: 400_000 }, async () => {
    devnet = await start();
    const first = devnet.summary;
    const contracts = devnet.config.chains[0]!.contracts!;
    const example = first.exampleContract as Address;
    // the README's example contract is deployed on every chain and named in the summary
    expect(example).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(formatSummary(first)).toContain(`Example contract`);
    expect(formatSummary(first)).toContain(`${example}  (TestTarget: record(bytes32)`);
    for (const c of devnet.config.chains) expect((await code(c, example)).length).toBeGreaterThan(2);
    // the Temporal database follows DATA_DIR
    expect(existsSync(join(dataDir, 'temporal', 'dev.sqlite'))).toBe(true);

    // write something on chain: record(a) on the example contract
    const sepolia = devnet.config.chains[0]!;
    const wallet = createWalletClient({
      chain: chainDefinition(sepolia.chainId, sepolia.rpcUrl),
      transport: http(sepolia.rpcUrl),
      account: privateKeyToAccount(ANVIL_DEV_KEY_0),
    });
    const a = arg('devnet-restart');
    const hash = await wallet.writeContract({ address: example, abi: testTargetAbi, functionName: 'record', args: [a] });
    expect((await clientOf(sepolia).waitForTransactionReceipt({ hash })).status).toBe('success');
    const height = await clientOf(sepolia).getBlockNumber();
    const nonce = await clientOf(sepolia).getTransactionCount({ address: wallet.account.address });

    await devnet.stop();
    devnet = undefined;
    for (const c of ['ethereum-sepolia', 'polygon-amoy']) expect(existsSync(chainStateFile(dataDir, c))).toBe(true);

    // second start: same contracts, nothing redeployed, the write still there; TEMPORAL_UI_URL is the UI link shown
    devnet = await start({ TEMPORAL_UI_URL: 'https://temporal.example.test/namespaces/default' });
    const second = devnet.summary;
    expect(second.adminKey).toBeUndefined(); // the database was kept too
    expect(devnet.config.chains[0]!.contracts).toEqual(contracts);
    expect(second.exampleContract).toBe(example);
    expect(second.temporalUiUrl).toBe('https://temporal.example.test/namespaces/default');
    expect(formatSummary(second)).toContain('https://temporal.example.test/namespaces/default');
    const sepolia2 = devnet.config.chains[0]!;
    for (const c of devnet.config.chains) {
      expect((await code(c, contracts.proofAnchor)).length).toBeGreaterThan(2);
      expect((await code(c, contracts.accountFactory)).length).toBeGreaterThan(2);
    }
    expect(await clientOf(sepolia2).readContract({ address: example, abi: testTargetAbi, functionName: 'lastArg' })).toBe(a as Hex);
    expect(await clientOf(sepolia2).getBlockNumber()).toBeGreaterThanOrEqual(height);
    expect(await clientOf(sepolia2).getTransactionCount({ address: wallet.account.address })).toBe(nonce);

    await devnet.stop();
    devnet = undefined;

    // a lost chain state with the rest of the devnet still there: refused, naming the chain and the way out
    rmSync(chainStateFile(dataDir, 'polygon-amoy'));
    await expect(start()).rejects.toThrow(/no saved chain state for polygon-amoy.*fresh DATA_DIR/s);
  });
});
