/** Shared test fixture: 7 deterministic validators, anvil keys, a deployed system. */
import { hexToBytes, keccak256, stringToHex, type Address, type Hex } from 'viem';
import { blsKeygen, blsProofOfPossession, blsSign, blsAggregateSignatures, signerBitmap } from '../../src/chain/bls.js';
import type { ValidatorRegistration } from '../../src/chain/deploy.js';
import { startAnvil, type AnvilInstance } from '../../src/devnet/anvil.js';
import { deploySystem, type DeployResult } from '../../src/chain/deploy.js';
import { createChainClients, type ChainWriter } from '../../src/chain/clients.js';
import { readValidatorSet } from '../../src/chain/anchor.js';
import { createAccount } from '../../src/chain/account.js';
import { anchorMessage, planAnchor, type AnchorPlan } from '../../src/chain/formulas.js';
import { testTargetAbi, testTargetBytecode } from '../../src/chain/abi/index.js';

/** anvil's default accounts 0..2 (mnemonic 'test test ... junk'; checked in test/chain/anvil.test.ts) */
export const ANVIL_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
] as const satisfies readonly Hex[];
export const ANVIL_ADDRESSES = [
  '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
  '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
] as const satisfies readonly Address[];

export interface TestValidator {
  secretKey: Uint8Array;
  publicKey: Hex;
  proofOfPossession: Hex;
}

export function testValidators(n = 7, tag = 'pgw-test-validator'): TestValidator[] {
  return Array.from({ length: n }, (_, i) => {
    const seed = hexToBytes(keccak256(stringToHex(`${tag}-${i}`)));
    const { secretKey, publicKey } = blsKeygen(seed);
    return { secretKey, publicKey, proofOfPossession: blsProofOfPossession(secretKey) };
  });
}

export function registrations(vs: readonly TestValidator[], power = 100n): ValidatorRegistration[] {
  return vs.map((v) => ({ publicKey: v.publicKey, proofOfPossession: v.proofOfPossession, power }));
}

/** Aggregate signature of validators `indices` over `message`, plus the bitmap. */
export function quorumSign(vs: readonly TestValidator[], indices: readonly number[], message: Hex) {
  return {
    signature: blsAggregateSignatures(indices.map((i) => blsSign(vs[i]!.secretKey, message))),
    signerBitmap: signerBitmap(indices),
  };
}

export interface TestSystem {
  anvil: AnvilInstance;
  chainId: bigint;
  /** relayer (anvil account 1) */
  w: ChainWriter;
  sys: DeployResult;
  validators: TestValidator[];
  setRoot: Hex;
  target: Address;
}

/** anvil + system contracts (owner = anvil account 0) + a TestTarget. */
export async function setupSystem(chainId = 11155111, validators = testValidators()): Promise<TestSystem> {
  const anvil = await startAnvil({ chainId });
  try {
    const sys = await deploySystem({
      rpcUrl: anvil.rpcUrl,
      chainId,
      privateKey: ANVIL_KEYS[0],
      validators: registrations(validators),
    });
    const w = createChainClients({ rpcUrl: anvil.rpcUrl, chainId, privateKey: ANVIL_KEYS[1], pollingIntervalMs: 25 });
    const hash = await w.wallet.deployContract({ abi: testTargetAbi, bytecode: testTargetBytecode });
    const target = (await w.public.waitForTransactionReceipt({ hash })).contractAddress as Address;
    const setRoot = (await readValidatorSet(w, sys.proofAnchor)).root;
    return { anvil, chainId: BigInt(chainId), w, sys, validators, setRoot, target };
  } catch (e) {
    await anvil.stop();
    throw e;
  }
}

let counter = 0;
/** A fresh anchor plan for `legs` of the account of `adiUrl` (created if needed). */
export async function planFor(
  t: TestSystem,
  adiUrl: string,
  legs: { target: Address; value: bigint; data: Hex; gasLimit?: bigint }[],
  deadline = BigInt(Math.floor(Date.now() / 1000) + 3600),
): Promise<{ plan: AnchorPlan; account: Address; message: Hex }> {
  const { address: account } = await createAccount(t.w, t.sys.accountFactory, adiUrl);
  const n = ++counter;
  const plan = planAnchor({
    chainId: t.chainId,
    anchor: t.sys.proofAnchor,
    account,
    adiUrl,
    operationId: keccak256(stringToHex(`op-${n}-${Date.now()}`)),
    ledgerTxHash: keccak256(stringToHex(`ltx-${n}`)),
    deadline,
    legs,
  });
  const message = anchorMessage({ chainId: t.chainId, anchor: t.sys.proofAnchor, anchorId: plan.anchorId, validatorSetRoot: t.setRoot });
  return { plan, account, message };
}
