/**
 * System contracts through the deterministic CREATE2 deployer (0x4e59b448..., present on anvil, Sepolia and
 * Amoy): same init code + same salt => same address on every chain.
 *
 *   computeSystemAddresses(params)         offline: { proofAnchor, accountFactory }
 *   deploySystem({ rpcUrl, chainId, privateKey, ...params })   idempotent; returns the addresses
 *
 * The ProofAnchor's init code includes its initial validator set (keys, proofs of possession, powers, threshold),
 * so it must be identical on every chain; the factory's includes the anchor address. The ProofAnchor has no
 * owner: only a quorum of its current set can rotate it (anchor.rotateValidatorSet).
 */
import { concatHex, encodeDeployData, getContractAddress, keccak256, stringToHex, type Address, type Hex } from 'viem';
import { accountFactoryAbi, accountFactoryBytecode, proofAnchorAbi, proofAnchorBytecode } from './abi/index.js';
import { createChainClients, type ChainClients, type ChainWriter } from './clients.js';
import type { SystemContracts } from './registry.js';

export const CREATE2_DEPLOYER: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
export const PROOF_ANCHOR_SALT: Hex = keccak256(stringToHex('pgw:system:ProofAnchor:v1'));
export const ACCOUNT_FACTORY_SALT: Hex = keccak256(stringToHex('pgw:system:AccountFactory:v1'));

export interface ValidatorRegistration {
  /** EIP-2537 G2 public key, 256 bytes */
  publicKey: Hex;
  /** proof of possession (bls.blsProofOfPossession), 128 bytes */
  proofOfPossession: Hex;
  power: bigint;
}

export interface SystemParams {
  validators: readonly ValidatorRegistration[];
  /** default 2/3 */
  thresholdNum?: bigint;
  thresholdDen?: bigint;
}

/** A validator set as ProofAnchor's constructor and rotateValidatorSet take it: keys, proofs, powers, threshold. */
export function validatorSetArgs(p: SystemParams) {
  return [
    p.validators.map((v) => v.publicKey),
    p.validators.map((v) => v.proofOfPossession),
    p.validators.map((v) => v.power),
    p.thresholdNum ?? 2n,
    p.thresholdDen ?? 3n,
  ] as const;
}

export function proofAnchorInitCode(p: SystemParams): Hex {
  return encodeDeployData({ abi: proofAnchorAbi, bytecode: proofAnchorBytecode, args: validatorSetArgs(p) });
}

export function accountFactoryInitCode(proofAnchor: Address): Hex {
  return encodeDeployData({ abi: accountFactoryAbi, bytecode: accountFactoryBytecode, args: [proofAnchor] });
}

export function create2Address(salt: Hex, initCode: Hex): Address {
  return getContractAddress({ opcode: 'CREATE2', from: CREATE2_DEPLOYER, salt, bytecode: initCode });
}

export function computeSystemAddresses(p: SystemParams): SystemContracts {
  const proofAnchor = create2Address(PROOF_ANCHOR_SALT, proofAnchorInitCode(p));
  const accountFactory = create2Address(ACCOUNT_FACTORY_SALT, accountFactoryInitCode(proofAnchor));
  return { proofAnchor, accountFactory };
}

export interface DeployResult extends SystemContracts {
  /** which contracts this call deployed (false = already there) */
  deployed: { proofAnchor: boolean; accountFactory: boolean };
  txHashes: Hex[];
}

/**
 * Throws unless the chain has the EIP-2537 precompiles (Prague): G1ADD(inf, inf) must return 128 zero bytes.
 * On a chain without them the call "succeeds" with empty output, which is why the contracts check lengths.
 */
export async function assertBlsPrecompiles(c: ChainClients): Promise<void> {
  const { data } = await c.public.call({ to: '0x000000000000000000000000000000000000000b', data: `0x${'00'.repeat(256)}` });
  if (data !== `0x${'00'.repeat(128)}`) {
    throw new Error(`chain ${c.chain.id} lacks the EIP-2537 BLS12-381 precompiles (needs the Prague hardfork)`);
  }
}

/**
 * Deploys `initCode` through the CREATE2 deployer with `salt` unless code is already at its address (a restored or
 * shared chain): idempotent, and nonces come from the chain, so it works on a chain restored from a state file.
 */
export async function ensureCreate2(w: ChainWriter, salt: Hex, initCode: Hex): Promise<{ address: Address; deployed: boolean; txHash?: Hex }> {
  const address = create2Address(salt, initCode);
  const code = await w.public.getCode({ address });
  if (code && code !== '0x') return { address, deployed: false };
  let hash: Hex;
  try {
    hash = await w.wallet.sendTransaction({ to: CREATE2_DEPLOYER, data: concatHex([salt, initCode]) });
  } catch (err) {
    // a concurrent deployer may have won the race: same address, same code
    const now = await w.public.getCode({ address });
    if (now && now !== '0x') return { address, deployed: false };
    throw err;
  }
  const receipt = await w.public.waitForTransactionReceipt({ hash });
  const after = await w.public.getCode({ address });
  if (!after || after === '0x') {
    throw new Error(`CREATE2 deployment to ${address} failed (tx ${hash}, status ${receipt.status})`);
  }
  return { address, deployed: receipt.status === 'success', txHash: hash };
}

/** Deploys ProofAnchor and AccountFactory unless already present. Safe to run on every start. */
export async function deploySystem(p: SystemParams & { rpcUrl: string; chainId: number; privateKey: Hex }): Promise<DeployResult> {
  const w = createChainClients({ rpcUrl: p.rpcUrl, chainId: p.chainId, privateKey: p.privateKey, pollingIntervalMs: 50 });
  const deployerCode = await w.public.getCode({ address: CREATE2_DEPLOYER });
  if (!deployerCode || deployerCode === '0x') {
    throw new Error(`chain ${p.chainId} has no deterministic deployer at ${CREATE2_DEPLOYER}`);
  }
  await assertBlsPrecompiles(w);
  const txHashes: Hex[] = [];
  const ensure = async (salt: Hex, initCode: Hex) => {
    const r = await ensureCreate2(w, salt, initCode);
    if (r.txHash) txHashes.push(r.txHash);
    return r;
  };
  const anchor = await ensure(PROOF_ANCHOR_SALT, proofAnchorInitCode(p));
  const factory = await ensure(ACCOUNT_FACTORY_SALT, accountFactoryInitCode(anchor.address));
  return {
    proofAnchor: anchor.address,
    accountFactory: factory.address,
    deployed: { proofAnchor: anchor.deployed, accountFactory: factory.deployed },
    txHashes,
  };
}
