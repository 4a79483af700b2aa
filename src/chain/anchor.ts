/**
 * Typed helpers for the ProofAnchor transactions. Each write waits for the receipt and returns it.
 * By default viem estimates gas first, so a transaction that would revert throws a decoded
 * ContractFunctionExecutionError before anything is sent; pass `gas` to skip estimation and send anyway
 * (tests use that to put reverting transactions on chain).
 */
import { BaseError, ContractFunctionRevertedError, type Address, type Hex, type TransactionReceipt } from 'viem';
import { proofAnchorAbi } from './abi/index.js';
import { waitForReceipt, type ChainClients, type ChainWriter } from './clients.js';
import { anchorId as computeAnchorId, rotationMessage, validatorSetRoot } from './formulas.js';
import { validatorSetArgs, type ValidatorRegistration } from './deploy.js';

export interface TxOptions {
  /**
   * fixed gas limit; skips the pre-flight (the transaction is sent even if it will revert). Without it,
   * createAnchor and executeComprehensiveProof are simulated once with eth_call (a decoded revert throws)
   * and sent with a fixed limit (DEFAULT_GAS; unused gas is not charged), which avoids eth_estimateGas
   * re-running the pairing many times; executeGovernanceProofDirect is estimated (the target's cost is unknown).
   */
  gas?: bigint;
}

/** Gas limits used after a successful simulation (measured use: ~48k and ~160k for 7 validators). */
export const DEFAULT_GAS = { createAnchor: 150_000n, executeComprehensiveProof: 600_000n } as const;

export interface TxResult {
  txHash: Hex;
  receipt: TransactionReceipt;
  gasUsed: bigint;
  status: 'success' | 'reverted';
}

export type AnchorStatus = 'none' | 'created' | 'proven';

export interface AnchorState {
  status: AnchorStatus;
  leafCount: bigint;
  usedBitmap: bigint;
  /** block of createAnchor (its AnchorCreated log), 0n if none */
  createdBlock: bigint;
  /** block of executeComprehensiveProof (its AnchorProven log), 0n if not proven */
  provenBlock: bigint;
}

const STATUS: AnchorStatus[] = ['none', 'created', 'proven'];

export async function readAnchorState(c: ChainClients, anchor: Address, anchorId: Hex): Promise<AnchorState> {
  const [s, leafCount, usedBitmap, createdBlock, provenBlock] = await c.public.readContract({
    address: anchor,
    abi: proofAnchorAbi,
    functionName: 'anchorState',
    args: [anchorId],
  });
  return { status: STATUS[s] ?? 'none', leafCount, usedBitmap, createdBlock, provenBlock };
}

/**
 * The transaction that created (`AnchorCreated`) or proved (`AnchorProven`) an anchor, read from the one block the
 * contract recorded for that step; undefined while the step has not happened.
 */
export async function findAnchorTx(c: ChainClients, anchor: Address, anchorId: Hex, step: 'created' | 'proven'): Promise<Hex | undefined> {
  const s = await readAnchorState(c, anchor, anchorId);
  const block = step === 'created' ? s.createdBlock : s.provenBlock;
  if (!block) return undefined;
  const logs = await c.public.getContractEvents({
    address: anchor,
    abi: proofAnchorAbi,
    eventName: step === 'created' ? 'AnchorCreated' : 'AnchorProven',
    args: { anchorId },
    fromBlock: block,
    toBlock: block,
  });
  return logs[0]?.transactionHash ?? undefined;
}

export async function readValidatorSet(c: ChainClients, anchor: Address) {
  const [root, totalPower, thresholdNum, thresholdDen, publicKeys, powers, data] = await c.public.readContract({
    address: anchor,
    abi: proofAnchorAbi,
    functionName: 'validatorSet',
  });
  return { root, totalPower, thresholdNum, thresholdDen, publicKeys: [...publicKeys], powers: [...powers], data };
}

/** Name of the custom error a failed call reverted with (or its reason); undefined when it did not revert. */
export function revertErrorName(err: unknown): string | undefined {
  if (err instanceof BaseError) {
    const e = err.walk((x) => x instanceof ContractFunctionRevertedError);
    if (e instanceof ContractFunctionRevertedError) {
      if (e.data?.errorName) return e.data.errorName;
      // viem also reports a node's internal error (JSON-RPC -32603, e.g. an overloaded provider) as a revert, with
      // the node's message as its reason: a revert carries revert data ('0x' at least) or says it reverted
      if (e.raw !== undefined || /revert/i.test(e.reason ?? '')) return e.reason ?? 'reverted';
    }
  }
  return undefined;
}

/** The receipt of a sent transaction (clients.waitForReceipt: a dropped one releases its nonce and throws). */
export async function waitTx(w: ChainClients, txHash: Hex): Promise<TxResult> {
  const receipt = await waitForReceipt(w, txHash);
  return { txHash, receipt, gasUsed: receipt.gasUsed, status: receipt.status };
}

export interface CreateAnchorArgs {
  commitmentRoot: Hex;
  operationId: Hex;
  ledgerTxHash: Hex;
  leafCount: bigint;
}

/**
 * createAnchor, idempotent: if the (content-addressed) anchor already exists nothing is sent and
 * `tx` is undefined.
 */
export async function createAnchor(
  w: ChainWriter,
  anchor: Address,
  a: CreateAnchorArgs,
  opts: TxOptions = {},
): Promise<{ anchorId: Hex; alreadyExisted: boolean; tx?: TxResult }> {
  const anchorId = computeAnchorId({
    chainId: BigInt(w.chain.id),
    anchor,
    commitmentRoot: a.commitmentRoot,
    operationId: a.operationId,
    ledgerTxHash: a.ledgerTxHash,
    leafCount: a.leafCount,
  });
  if (opts.gas === undefined && (await readAnchorState(w, anchor, anchorId)).status !== 'none') {
    return { anchorId, alreadyExisted: true };
  }
  try {
    const call = {
      address: anchor,
      abi: proofAnchorAbi,
      functionName: 'createAnchor',
      args: [a.commitmentRoot, a.operationId, a.ledgerTxHash, a.leafCount],
    } as const;
    if (opts.gas === undefined) await w.public.simulateContract({ ...call, account: w.account });
    const hash = await w.wallet.writeContract({ ...call, gas: opts.gas ?? DEFAULT_GAS.createAnchor });
    return { anchorId, alreadyExisted: false, tx: await waitTx(w, hash) };
  } catch (err) {
    if (revertErrorName(err) === 'AnchorAlreadyExists') return { anchorId, alreadyExisted: true };
    throw err;
  }
}

/** executeComprehensiveProof; idempotent: an already proven anchor returns `alreadyProven` without a tx. */
export async function executeComprehensiveProof(
  w: ChainWriter,
  anchor: Address,
  p: { anchorId: Hex; signerBitmap: bigint; signature: Hex },
  opts: TxOptions = {},
): Promise<{ alreadyProven: boolean; tx?: TxResult }> {
  if (opts.gas === undefined && (await readAnchorState(w, anchor, p.anchorId)).status === 'proven') {
    return { alreadyProven: true };
  }
  try {
    const call = {
      address: anchor,
      abi: proofAnchorAbi,
      functionName: 'executeComprehensiveProof',
      args: [p.anchorId, p.signerBitmap, p.signature],
    } as const;
    if (opts.gas === undefined) await w.public.simulateContract({ ...call, account: w.account });
    const hash = await w.wallet.writeContract({ ...call, gas: opts.gas ?? DEFAULT_GAS.executeComprehensiveProof });
    return { alreadyProven: false, tx: await waitTx(w, hash) };
  } catch (err) {
    if (revertErrorName(err) === 'AnchorAlreadyProven') return { alreadyProven: true };
    throw err;
  }
}

/**
 * The rotation to `next`: its set root and the message a quorum of the current set must sign
 * (formulas.rotationMessage over the current root and epoch read from the chain).
 */
export async function rotationFor(
  c: ChainClients,
  anchor: Address,
  next: { validators: readonly ValidatorRegistration[]; thresholdNum?: bigint; thresholdDen?: bigint },
): Promise<{ currentRoot: Hex; newRoot: Hex; epoch: bigint; message: Hex }> {
  const [current, epoch, chainId] = await Promise.all([
    readValidatorSet(c, anchor),
    c.public.readContract({ address: anchor, abi: proofAnchorAbi, functionName: 'setEpoch' }),
    c.public.getChainId(),
  ]);
  const newRoot = validatorSetRoot({
    publicKeys: next.validators.map((v) => v.publicKey),
    powers: next.validators.map((v) => v.power),
    thresholdNum: next.thresholdNum ?? 2n,
    thresholdDen: next.thresholdDen ?? 3n,
  });
  return {
    currentRoot: current.root,
    newRoot,
    epoch,
    message: rotationMessage({ chainId: BigInt(chainId), anchor, currentRoot: current.root, newRoot, epoch }),
  };
}

/** Replaces the validator set; `signerBitmap` + `signature`: a quorum of the current set over rotationFor(...).message. */
export async function rotateValidatorSet(
  w: ChainWriter,
  anchor: Address,
  p: { validators: readonly ValidatorRegistration[]; thresholdNum?: bigint; thresholdDen?: bigint; signerBitmap: bigint; signature: Hex },
  opts: TxOptions = {},
): Promise<TxResult> {
  const hash = await w.wallet.writeContract({
    address: anchor,
    abi: proofAnchorAbi,
    functionName: 'rotateValidatorSet',
    args: [...validatorSetArgs(p), p.signerBitmap, p.signature],
    gas: opts.gas,
  });
  return waitTx(w, hash);
}
