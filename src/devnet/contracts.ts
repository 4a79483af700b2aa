/**
 * Devnet system contracts: ProofAnchor + AccountFactory deployed through the CREATE2 deployer on every local
 * chain (idempotent: an existing deployment is reused), with a validator set given by the caller (the devnet's
 * validators) or, when none is given, 7 deterministic development keys. The result is the chain list with the
 * `contracts` addresses filled in, ready for the config the worker and API use.
 */
import { hexToBytes, keccak256, stringToHex, type Address, type Hex } from 'viem';
import { blsKeygen, blsProofOfPossession } from '../chain/bls.js';
import { testTargetBytecode } from '../chain/abi/index.js';
import { createChainClients } from '../chain/clients.js';
import { computeSystemAddresses, create2Address, deploySystem, ensureCreate2, type ValidatorRegistration } from '../chain/deploy.js';
import type { SystemContracts } from '../chain/registry.js';
import type { ChainConfig } from '../config.js';

/** anvil's first development account: the devnet's default relayer and deployer (public, test-only key). */
export const ANVIL_DEV_KEY_0: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

/** `n` BLS validator registrations derived from `tag` (development only: anyone can derive these keys). */
export function devValidatorRegistrations(n = 7, tag = 'pgw-devnet-validator'): ValidatorRegistration[] {
  return Array.from({ length: n }, (_, i) => {
    const { secretKey, publicKey } = blsKeygen(hexToBytes(keccak256(stringToHex(`${tag}-${i}`))));
    return { publicKey, proofOfPossession: blsProofOfPossession(secretKey), power: 100n };
  });
}

export interface DeployDevnetContractsOptions {
  chains: readonly ChainConfig[];
  /** funded key that sends the CREATE2 deployments */
  deployerKey: Hex;
  /** the validator set; default devValidatorRegistrations() */
  validators?: readonly ValidatorRegistration[];
}

export async function deployDevnetContracts(o: DeployDevnetContractsOptions): Promise<{ contracts: SystemContracts; chains: ChainConfig[] }> {
  const params = { validators: o.validators ?? devValidatorRegistrations() };
  const contracts = computeSystemAddresses(params);
  await Promise.all(o.chains.map((c) => deploySystem({ rpcUrl: c.rpcUrl, chainId: c.chainId, privateKey: o.deployerKey, ...params })));
  return { contracts, chains: o.chains.map((c) => ({ ...c, contracts })) };
}

/** CREATE2 salt of the devnet's example contract: the same address on every local chain, on every start. */
export const EXAMPLE_CONTRACT_SALT: Hex = keccak256(stringToHex('pgw:devnet:TestTarget:v1'));

/** Address of the devnet's example contract (TestTarget, contracts/test/TestTarget.sol), computed offline. */
export function exampleContractAddress(): Address {
  return create2Address(EXAMPLE_CONTRACT_SALT, testTargetBytecode);
}

/**
 * Deploys the example contract TestTarget (record(bytes32) emits Called(caller, value, arg) and stores arg in
 * slot 3) on each chain through the CREATE2 deployer, unless it is there already (a chain restored from its state
 * file). The README's transaction example calls it.
 */
export async function ensureExampleContract(chains: readonly Pick<ChainConfig, 'rpcUrl' | 'chainId'>[], deployerKey: Hex): Promise<Address> {
  const addresses = await Promise.all(
    chains.map(async (c) => {
      const w = createChainClients({ rpcUrl: c.rpcUrl, chainId: c.chainId, privateKey: deployerKey, pollingIntervalMs: 50 });
      return (await ensureCreate2(w, EXAMPLE_CONTRACT_SALT, testTargetBytecode)).address;
    }),
  );
  return addresses[0] ?? exampleContractAddress();
}
