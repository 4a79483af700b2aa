/**
 * Two devnet chains (ethereum-sepolia 11155111, polygon-amoy 80002): the system contracts and an identity's
 * account have the same addresses on both, deployment and account creation are idempotent, and a proof for
 * one chain is worthless on the other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, keccak256, stringToHex, type Address } from 'viem';
import { startAnvil, type AnvilInstance } from '../../src/devnet/anvil.js';
import { computeSystemAddresses, deploySystem } from '../../src/chain/deploy.js';
import { createChainClients, type ChainWriter } from '../../src/chain/clients.js';
import { createAccount, executeGovernanceProofDirect, getAccountAddress, predictAccountAddress, proofForLeg } from '../../src/chain/account.js';
import { createAnchor, executeComprehensiveProof, readAnchorState, readValidatorSet } from '../../src/chain/anchor.js';
import { anchorMessage, planAnchor } from '../../src/chain/formulas.js';
import { createChainRegistry, KNOWN_CHAINS } from '../../src/chain/registry.js';
import { testTargetAbi, testTargetBytecode } from '../../src/chain/abi/index.js';
import { ANVIL_KEYS, quorumSign, registrations, testValidators } from './fixture.js';

const validators = testValidators();
const params = { validators: registrations(validators) };
const chains: { name: string; chainId: number; anvil?: AnvilInstance; w?: ChainWriter }[] = [
  { name: 'ethereum-sepolia', chainId: KNOWN_CHAINS['ethereum-sepolia'] },
  { name: 'polygon-amoy', chainId: KNOWN_CHAINS['polygon-amoy'] },
];

beforeAll(async () => {
  await Promise.all(
    chains.map(async (c) => {
      c.anvil = await startAnvil({ chainId: c.chainId });
      c.w = createChainClients({ rpcUrl: c.anvil.rpcUrl, chainId: c.chainId, privateKey: ANVIL_KEYS[1], pollingIntervalMs: 25 });
    }),
  );
});
afterAll(async () => {
  await Promise.all(chains.map((c) => c.anvil?.stop()));
});

describe('same addresses on every chain', () => {
  it('system contracts: predicted offline, deployed by CREATE2 on both chains, idempotent', async () => {
    const predicted = computeSystemAddresses(params);
    const first = await Promise.all(chains.map((c) => deploySystem({ rpcUrl: c.anvil!.rpcUrl, chainId: c.chainId, privateKey: ANVIL_KEYS[0], ...params })));
    for (const r of first) {
      expect({ proofAnchor: r.proofAnchor, accountFactory: r.accountFactory }).toEqual(predicted);
      expect(r.deployed).toEqual({ proofAnchor: true, accountFactory: true });
    }
    // a different deployer key gets the same addresses, and nothing is redeployed
    const again = await Promise.all(chains.map((c) => deploySystem({ rpcUrl: c.anvil!.rpcUrl, chainId: c.chainId, privateKey: ANVIL_KEYS[2], ...params })));
    for (const r of again) {
      expect(r.deployed).toEqual({ proofAnchor: false, accountFactory: false });
      expect(r.txHashes).toHaveLength(0);
      expect(r.proofAnchor).toBe(predicted.proofAnchor);
    }
    for (const c of chains) {
      expect(await c.w!.public.getCode({ address: predicted.proofAnchor })).toMatch(/^0x[0-9a-f]{100,}/);
      expect((await readValidatorSet(c.w!, predicted.proofAnchor)).root).toBe((await readValidatorSet(chains[0]!.w!, predicted.proofAnchor)).root);
    }
    // a different validator set would be a different anchor (and factory) address
    const other = computeSystemAddresses({ ...params, validators: registrations(testValidators(7, 'other')) });
    expect(other.proofAnchor).not.toBe(predicted.proofAnchor);
  });

  it('an identity account: same address on both chains, equal to the offline and factory predictions; idempotent', async () => {
    const { proofAnchor, accountFactory } = computeSystemAddresses(params);
    const adiUrl = 'acc://same-everywhere.acme';
    const offline = predictAccountAddress({ accountFactory, proofAnchor, adiUrl });
    for (const c of chains) {
      expect(await getAccountAddress(c.w!, accountFactory, adiUrl)).toBe(offline);
      const created = await createAccount(c.w!, accountFactory, adiUrl);
      expect(created).toMatchObject({ address: offline, created: true });
      expect(created.tx?.status).toBe('success');
      const again = await createAccount(c.w!, accountFactory, adiUrl);
      expect(again).toEqual({ address: offline, created: false });
      expect(await c.w!.public.getCode({ address: offline })).toMatch(/^0x[0-9a-f]+/);
    }
    // different ADIs, different accounts
    expect(predictAccountAddress({ accountFactory, proofAnchor, adiUrl: 'acc://other.acme' })).not.toBe(offline);
  });

  it('the registry maps names, ids, RPC URLs and addresses', () => {
    const reg = createChainRegistry(chains.map((c) => ({ name: c.name, chainId: c.chainId, rpcUrl: c.anvil!.rpcUrl, confirmations: 2 }))).withContracts(
      computeSystemAddresses(params),
    );
    expect(reg.get('polygon-amoy').chainId).toBe(80002);
    expect(reg.get(11155111).name).toBe('ethereum-sepolia');
    expect(reg.get('80002').rpcUrl).toBe(chains[1]!.anvil!.rpcUrl);
    expect(reg.get(80002n).contracts).toEqual(computeSystemAddresses(params));
    expect(reg.has('base-sepolia')).toBe(false);
    expect(() => reg.get('base-sepolia')).toThrow(/unknown chain/);
    expect(() =>
      createChainRegistry([
        { name: 'a', chainId: 1, rpcUrl: 'x', confirmations: 0 },
        { name: 'b', chainId: 1, rpcUrl: 'y', confirmations: 0 },
      ]),
    ).toThrow(/duplicate/);
  });
});

describe('no cross-chain replay', () => {
  it('an anchor proven on sepolia cannot be used on amoy: the anchor does not exist there, and its signature proves nothing there', async () => {
    const { proofAnchor, accountFactory } = computeSystemAddresses(params);
    const adiUrl = 'acc://replay.acme';
    const [sep, amoy] = [chains[0]!, chains[1]!];
    const account = (await createAccount(sep.w!, accountFactory, adiUrl)).address;
    expect((await createAccount(amoy.w!, accountFactory, adiUrl)).address).toBe(account);
    // the same target contract address on both chains (same deployer, same nonce is not guaranteed: use CREATE2-free check)
    const targets: Address[] = [];
    for (const c of [sep, amoy]) {
      const hash = await c.w!.wallet.deployContract({ abi: testTargetAbi, bytecode: testTargetBytecode });
      targets.push((await c.w!.public.waitForTransactionReceipt({ hash })).contractAddress as Address);
    }
    const data = encodeFunctionData({ abi: testTargetAbi, functionName: 'record', args: [keccak256(stringToHex('replay'))] });
    const legs = [{ target: targets[0]!, value: 0n, data }];
    const common = {
      anchor: proofAnchor,
      account,
      adiUrl,
      operationId: keccak256(stringToHex('replay-op')),
      ledgerTxHash: keccak256(stringToHex('replay-ltx')),
      deadline: BigInt(Math.floor(Date.now() / 1000) + 3600),
      legs,
    };
    const planSep = planAnchor({ chainId: 11155111n, ...common });
    await createAnchor(sep.w!, proofAnchor, planSep);
    const setRoot = (await readValidatorSet(sep.w!, proofAnchor)).root;
    const q = quorumSign(
      validators,
      [0, 1, 2, 3, 4],
      anchorMessage({ chainId: 11155111n, anchor: proofAnchor, anchorId: planSep.anchorId, validatorSetRoot: setRoot }),
    );
    expect((await executeComprehensiveProof(sep.w!, proofAnchor, { anchorId: planSep.anchorId, ...q })).tx?.status).toBe('success');

    // on amoy: the same proof arguments name an anchor id that does not exist there
    const tx = await executeGovernanceProofDirect(amoy.w!, account, { ...legs[0]!, proof: proofForLeg(planSep, 0) }, { gas: 1_000_000n });
    expect(tx.status).toBe('reverted');
    expect(tx.receipt.logs).toHaveLength(0);
    // creating "the same" anchor on amoy gives another id, and the sepolia signature does not prove it
    const created = await createAnchor(amoy.w!, proofAnchor, planSep);
    expect(created.anchorId).not.toBe(planSep.anchorId);
    const r = await executeComprehensiveProof(amoy.w!, proofAnchor, { anchorId: created.anchorId, ...q }, { gas: 1_000_000n });
    expect(r.tx?.status).toBe('reverted');
    expect((await readAnchorState(amoy.w!, proofAnchor, created.anchorId)).status).toBe('created');
    // and on sepolia the call runs
    expect((await executeGovernanceProofDirect(sep.w!, account, { ...legs[0]!, proof: proofForLeg(planSep, 0) })).status).toBe('success');
  });
});

describe('concurrent deployment', () => {
  it('two deployers racing on a fresh chain both end with the same contracts, deployed once', async () => {
    const a = await startAnvil({ chainId: 80002 });
    try {
      const run = (key: (typeof ANVIL_KEYS)[number]) => deploySystem({ rpcUrl: a.rpcUrl, chainId: 80002, privateKey: key, ...params });
      const [x, y] = await Promise.all([run(ANVIL_KEYS[0]), run(ANVIL_KEYS[2])]);
      expect(x.proofAnchor).toBe(y.proofAnchor);
      expect(x.accountFactory).toBe(y.accountFactory);
      expect([x.deployed.proofAnchor, y.deployed.proofAnchor].filter(Boolean).length).toBeLessThanOrEqual(1);
      const w = createChainClients({ rpcUrl: a.rpcUrl, chainId: 80002 });
      expect(await w.public.getCode({ address: x.accountFactory })).toMatch(/^0x[0-9a-f]+/);
    } finally {
      await a.stop();
    }
  });
});
