/**
 * Identity accounts: address prediction (offline and via the factory), idempotent creation, and the
 * proof-gated execution transaction.
 */
import { encodeAbiParameters, getContractAddress, keccak256, concatHex, type Address, type Hex } from 'viem';
import { abstractAccountAbi, abstractAccountBytecode, accountFactoryAbi, proofAnchorAbi } from './abi/index.js';
import type { ChainClients, ChainWriter } from './clients.js';
import { adiHash, anchorId as computeAnchorId, type AnchorPlan } from './formulas.js';
import { readAnchorState, waitTx, type TxOptions, type TxResult } from './anchor.js';
import { scanLogs } from './logs.js';
import { memo } from './memo.js';

/** The account ABI plus the ProofAnchor errors that consume() bubbles up, so viem decodes them by name. */
export const accountAbiWithAnchorErrors = [...abstractAccountAbi, ...proofAnchorAbi.filter((x) => x.type === 'error')] as const;

/** Offline: the AbstractAccount address of `adiUrl` (identical on every chain for the same factory). */
export function predictAccountAddress(p: { accountFactory: Address; proofAnchor: Address; adiUrl: string }): Address {
  return predicted(JSON.stringify([p.accountFactory.toLowerCase(), p.proofAnchor.toLowerCase(), p.adiUrl]));
}

/** keccak of the 4 KB init code per call: every validator predicts the account of every intent it attests */
const predicted = memo(4096, (key): Address => {
  const [accountFactory, proofAnchor, adiUrl] = JSON.parse(key) as [Address, Address, string];
  const salt = adiHash(adiUrl);
  const initCode = concatHex([abstractAccountBytecode, encodeAbiParameters([{ type: 'address' }, { type: 'bytes32' }], [proofAnchor, salt])]);
  return getContractAddress({ opcode: 'CREATE2', from: accountFactory, salt, bytecodeHash: keccak256(initCode) });
});

/** On chain: AccountFactory.getAddress(adiUrl). */
export function getAccountAddress(c: ChainClients, accountFactory: Address, adiUrl: string): Promise<Address> {
  return c.public.readContract({ address: accountFactory, abi: accountFactoryAbi, functionName: 'getAddress', args: [adiUrl] });
}

/** Deploys the account unless it exists. `tx` is undefined when nothing was sent. */
export async function createAccount(
  w: ChainWriter,
  accountFactory: Address,
  adiUrl: string,
  opts: TxOptions = {},
): Promise<{ address: Address; created: boolean; tx?: TxResult }> {
  const address = await getAccountAddress(w, accountFactory, adiUrl);
  const code = await w.public.getCode({ address });
  if (code && code !== '0x') return { address, created: false };
  const hash = await w.wallet.writeContract({
    address: accountFactory,
    abi: accountFactoryAbi,
    functionName: 'createAccount',
    args: [adiUrl],
    gas: opts.gas,
  });
  const tx = await waitTx(w, hash);
  if (tx.status !== 'success') throw new Error(`createAccount(${adiUrl}) reverted (tx ${hash})`);
  return { address, created: true, tx };
}

/** The `proof` argument of executeGovernanceProofDirect. */
export interface AnchorProofArg {
  commitmentRoot: Hex;
  operationId: Hex;
  ledgerTxHash: Hex;
  leafCount: bigint;
  leafIndex: bigint;
  /** unix seconds after which the account's consume() refuses the leaf */
  deadline: bigint;
  /** gas the account must give the call (0: none), bound by the leaf */
  gasLimit: bigint;
  merkleProof: readonly Hex[];
}

/** The proof for leg `legIndex` of a planned anchor (formulas.planAnchor). */
export function proofForLeg(plan: AnchorPlan, legIndex: number): AnchorProofArg {
  const p = plan.proofs[legIndex];
  if (!p) throw new Error(`anchor has no leg ${legIndex}`);
  return {
    commitmentRoot: plan.commitmentRoot,
    operationId: plan.operationId,
    ledgerTxHash: plan.ledgerTxHash,
    leafCount: plan.leafCount,
    leafIndex: p.leafIndex,
    deadline: p.deadline,
    gasLimit: p.gasLimit,
    merkleProof: p.merkleProof,
  };
}

/**
 * Sends AbstractAccount.executeGovernanceProofDirect(target, value, data, proof) and returns the transaction hash
 * without waiting for its receipt (the caller heartbeats while it waits).
 */
export function sendGovernanceProofDirect(
  w: ChainWriter,
  account: Address,
  call: { target: Address; value: bigint; data: Hex; proof: AnchorProofArg },
  opts: TxOptions = {},
): Promise<Hex> {
  return w.wallet.writeContract({
    address: account,
    abi: accountAbiWithAnchorErrors,
    functionName: 'executeGovernanceProofDirect',
    args: [call.target, call.value, call.data, { ...call.proof, merkleProof: [...call.proof.merkleProof] }],
    gas: opts.gas,
  });
}

/** executeGovernanceProofDirect, sent and mined: its transaction result. */
export async function executeGovernanceProofDirect(
  w: ChainWriter,
  account: Address,
  p: { target: Address; value: bigint; data: Hex; proof: AnchorProofArg },
  opts: TxOptions = {},
): Promise<TxResult> {
  return waitTx(w, await sendGovernanceProofDirect(w, account, p, opts));
}

/** Whether leaf `proof.leafIndex` of the anchor named by `proof` has been consumed on this chain. */
export async function isLegExecuted(c: ChainClients, proofAnchor: Address, proof: AnchorProofArg): Promise<boolean> {
  const id = computeAnchorId({
    chainId: BigInt(c.chain.id),
    anchor: proofAnchor,
    commitmentRoot: proof.commitmentRoot,
    operationId: proof.operationId,
    ledgerTxHash: proof.ledgerTxHash,
    leafCount: proof.leafCount,
  });
  return c.public.readContract({ address: proofAnchor, abi: proofAnchorAbi, functionName: 'isLeafUsed', args: [id, proof.leafIndex] });
}

/**
 * Idempotent executeGovernanceProofDirect for retries: if the leg's leaf is already consumed (an earlier
 * attempt was mined), nothing is sent and `alreadyExecuted` is true.
 */
export async function executeLeg(
  w: ChainWriter,
  p: { proofAnchor: Address; account: Address; target: Address; value: bigint; data: Hex; proof: AnchorProofArg },
  opts: TxOptions = {},
): Promise<{ alreadyExecuted: boolean; tx?: TxResult }> {
  if (await isLegExecuted(w, p.proofAnchor, p.proof)) return { alreadyExecuted: true };
  const tx = await executeGovernanceProofDirect(w, p.account, p, opts);
  return { alreadyExecuted: false, tx };
}

/**
 * The executeGovernanceProofDirect transaction that consumed leaf `leafIndex` of `anchorId` on `account`: its
 * Executed log, searched forward from the block where the anchor was proven (nothing can consume it earlier) in
 * spans of `maxRange` blocks. undefined if there is none (yet).
 */
export async function findExecutionTx(
  c: ChainClients,
  p: { proofAnchor: Address; account: Address; anchorId: Hex; leafIndex: bigint; maxRange?: number },
): Promise<Hex | undefined> {
  const { provenBlock } = await readAnchorState(c, p.proofAnchor, p.anchorId);
  if (!provenBlock) return undefined;
  const [log] = await scanLogs(
    c,
    provenBlock,
    async (fromBlock, toBlock) =>
      (
        await c.public.getContractEvents({
          address: p.account,
          abi: accountAbiWithAnchorErrors,
          eventName: 'Executed',
          args: { anchorId: p.anchorId },
          fromBlock,
          toBlock,
        })
      ).filter((l) => l.args.leafIndex === p.leafIndex),
    { maxRange: p.maxRange, firstMatch: true },
  );
  return log?.transactionHash ?? undefined;
}

/** The transaction that deployed `account` (AccountFactory's AccountCreated log, in the block the deployed account recorded). */
export async function findAccountDeploymentTx(c: ChainClients, accountFactory: Address, account: Address): Promise<Hex | undefined> {
  const block = await c.public.readContract({ address: account, abi: abstractAccountAbi, functionName: 'deployedBlock' });
  const logs = await c.public.getContractEvents({
    address: accountFactory,
    abi: accountFactoryAbi,
    eventName: 'AccountCreated',
    args: { account },
    fromBlock: block,
    toBlock: block,
  });
  return logs[0]?.transactionHash ?? undefined;
}
