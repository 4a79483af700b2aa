/**
 * Observation, after execution: the execution's receipt and block read and proven (header hash, transactions and
 * receipts tries), confirmations waited, status 1, the executed call is the committed one, the expected events in
 * the proven logs, the expected state by eth_getProof -> a BLS signature over formulas.resultMessage.
 */
import { decodeFunctionData, getAddress, parseTransaction, type Address, type Hex } from 'viem';
import { abstractAccountAbi } from '../chain/abi/index.js';
import type { ChainClients } from '../chain/clients.js';
import { expectedEventEmitted, findExecutedEvent } from '../chain/effects/events.js';
import { createBlockTrieCache, fetchVerifiedBlock, proveReceipt, proveStorage, proveTransaction } from '../chain/effects/evm-proofs.js';
import { eventsHash, resultHash, resultMessage, type ExecutionResult, type ResultLog } from '../chain/formulas.js';
import type { IntentAnchorPlan, IntentLeg } from '../protocol/intent/index.js';
import type { ObserveRequest, ObserveResponse } from '../protocol/validator-wire.js';
import { sleep } from '../net/sleep.js';
import type { BatchPlanning } from './batch.js';
import { type NodeContext, setBounded } from './context.js';
import { proofStep, refuse } from './refusal.js';

/**
 * How the executed transaction is bound to the committed call. 'calldata': it calls the identity's account with
 * executeGovernanceProofDirect of exactly the leg's call and this leaf's proof (refused when it does not). 'event':
 * it ran through another contract, and only the account's Executed event ties it to the leaf.
 */
function bindExecutedCall(
  rawTx: Hex,
  account: Address,
  leg: IntentLeg,
  plan: IntentAnchorPlan,
  leafIndex: number,
  k: number,
): { callBinding: 'calldata' | 'event'; to: Address | null | undefined } {
  let callBinding: 'calldata' | 'event' = 'event';
  const parsed = parseTransaction(rawTx);
  if (parsed.to && getAddress(parsed.to) === getAddress(account)) {
    const d = (() => {
      try {
        return decodeFunctionData({ abi: abstractAccountAbi, data: parsed.data ?? '0x' });
      } catch {
        return refuse('CALL_MISMATCH', 'execution transaction does not call an account function');
      }
    })();
    if (d!.functionName !== 'executeGovernanceProofDirect') refuse('CALL_MISMATCH', `execution transaction calls ${d!.functionName}`);
    const [target, value, data, proof] = d!.args as unknown as [
      Address,
      bigint,
      Hex,
      { commitmentRoot: Hex; operationId: Hex; ledgerTxHash: Hex; leafCount: bigint; leafIndex: bigint; deadline: bigint; gasLimit: bigint },
    ];
    if (getAddress(target) !== getAddress(leg.target) || value !== leg.value || data.toLowerCase() !== leg.data.toLowerCase()) {
      refuse('CALL_MISMATCH', `executed call (${target}, ${value}, ${data.slice(0, 74)}) is not the committed one of leg ${leg.legId}`);
    }
    if (
      proof.commitmentRoot.toLowerCase() !== plan.commitmentRoot.toLowerCase() ||
      proof.operationId.toLowerCase() !== plan.operationId.toLowerCase() ||
      proof.ledgerTxHash.toLowerCase() !== plan.ledgerTxHash.toLowerCase() ||
      proof.leafCount !== plan.leafCount ||
      proof.leafIndex !== BigInt(leafIndex) ||
      proof.deadline !== plan.proofs[k]!.deadline ||
      proof.gasLimit !== plan.proofs[k]!.gasLimit
    ) {
      refuse('CALL_MISMATCH', 'execution used a proof for another anchor or leaf');
    }
    callBinding = 'calldata';
  }
  return { callBinding, to: parsed.to };
}

/** The leg's expected events among the proven logs, and its expected state by storage proofs at the block. */
async function checkExpectedEffects(
  pub: ChainClients['public'],
  p: {
    leg: IntentLeg;
    logs: readonly ResultLog[];
    callBinding: 'calldata' | 'event';
    to: Address | null | undefined;
    account: Address;
    blockNumber: bigint;
    stateRoot: Hex;
  },
): Promise<void> {
  const { leg, logs, callBinding, to, account, blockNumber, stateRoot } = p;
  if (callBinding === 'event' && leg.expectedEvents.length) {
    // a contract that ran the execution can emit in the same transaction, before or after it, whatever it likes:
    // its receipt's logs cannot be told apart from the committed call's, so no expected event can be attested
    refuse(
      'INDIRECT_EXECUTION',
      `execution ran through contract ${to ?? '(creation)'}, not a transaction to ${account}: the expected events of leg ${leg.legId} cannot be attributed to the committed call`,
    );
  }
  for (const ev of leg.expectedEvents) {
    if (!expectedEventEmitted(logs, ev))
      refuse(
        'EVENT_NOT_EMITTED',
        `expected event not emitted: ${ev.topic0} from ${ev.contract}${ev.topics ? ` with topics ${JSON.stringify(ev.topics)}` : ''}`,
      );
  }
  if (leg.expectedState.length) {
    const byAccount = new Map<Address, typeof leg.expectedState>();
    for (const s of leg.expectedState) byAccount.set(s.account, [...(byAccount.get(s.account) ?? []), s]);
    for (const [acct, items] of byAccount) {
      const values = await proofStep(`state proof for ${acct}`, () =>
        proveStorage(pub, { account: acct, slots: items.map((s) => s.slot), blockNumber, stateRoot }),
      );
      items.forEach((s, i) => {
        if (values[i]!.toLowerCase() !== s.value.toLowerCase()) {
          refuse('STATE_MISMATCH', `state slot ${s.slot} of ${acct} is ${values[i]} after execution, expected ${s.value}`);
        }
      });
    }
  }
}

export interface Observation {
  observe(req: ObserveRequest): Promise<ObserveResponse>;
  /** Drops the cached observation of this request (its block is no longer the chain's). */
  forget(req: ObserveRequest): void;
}

export function createObservation(ctx: NodeContext, batches: BatchPlanning): Observation {
  const { opts, keys, index, poll, chainCtx, loadIntent, validatorSet, signOnce } = ctx;
  // executions that share a block are proven from one transactions trie and one receipts trie
  const blockTries = createBlockTrieCache();
  const observations = new Map<string, ObserveResponse>();

  async function waitFor<T>(what: string, deadline: number, fn: () => Promise<T | undefined>): Promise<T> {
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > deadline) refuse('OBSERVE_TIMEOUT', `timed out waiting for ${what}`);
      await sleep(poll);
    }
  }

  const observationKey = (req: ObserveRequest) =>
    `${req.intentTxId.toLowerCase()}:${req.chain}:${req.batch ? `${req.batch.members.length}:` : ''}${String(req.anchorId).toLowerCase()}:${req.leafIndex}:${req.executionTxHash.toLowerCase()}`;

  async function observe(req: ObserveRequest): Promise<ObserveResponse> {
    const t0 = performance.now();
    if (!req || typeof req.intentTxId !== 'string' || typeof req.chain !== 'string' || typeof req.executionTxHash !== 'string') {
      refuse('BAD_REQUEST', 'intentTxId, chain, anchorId, leafIndex and executionTxHash are required');
    }
    // the intent and chain are part of the key: a result record is built from the request's intent and chain, so an
    // observation must never answer for another intent's request that names the same anchor, leaf and transaction
    const key = observationKey(req);
    const cached = observations.get(key);
    if (cached) return cached;
    const c = chainCtx(req.chain);
    const [loaded, set] = await Promise.all([loadIntent(req.intentTxId), validatorSet(c)]);
    const plan = await batches.memberPlanFor(loaded, c, req.batch, req.intentTxId);
    if (String(req.anchorId).toLowerCase() !== plan.anchorId.toLowerCase())
      refuse('ANCHOR_MISMATCH', `anchorId ${req.anchorId} is not the intent's anchor ${plan.anchorId}`);
    const leafIndex = Number(req.leafIndex);
    // the intent's leg at that leaf (of its own anchor: leg k is leaf k; of a batch: its proofs name the leaves)
    const k = Number.isSafeInteger(leafIndex) ? plan.proofs.findIndex((p) => p.leafIndex === BigInt(leafIndex)) : -1;
    const leg = plan.legs[k];
    if (!leg) refuse('NO_LEGS', `anchor has no leaf ${req.leafIndex} of this intent`);
    const chainId = BigInt(c.entry.chainId);
    const pub = c.clients.public;
    const deadline = Date.now() + (opts.observeTimeoutMs ?? 60_000);
    const txHash = req.executionTxHash.toLowerCase() as Hex;
    if (!/^0x[0-9a-f]{64}$/.test(txHash)) refuse('BAD_REQUEST', 'executionTxHash must be 32-byte hex');

    const receipt = await waitFor('the execution receipt', deadline, () => pub.getTransactionReceipt({ hash: txHash }).catch(() => undefined));
    const blockNumber = receipt.blockNumber;
    let confirmations = 0;
    await waitFor(`${c.entry.confirmations} confirmations`, deadline, async () => {
      // one eth_blockNumber per poll interval however many observations wait on this chain (viem shares the
      // answer and the request in flight), not one per observation; that shared number may predate the receipt
      // (then it counts as none yet)
      const latest = await pub.getBlockNumber({ cacheTime: poll });
      confirmations = Number(latest - blockNumber);
      if (confirmations < c.entry.confirmations) return undefined;
      if (opts.finality !== 'finalized') return true;
      // and, in 'finalized' mode, the finalized tag past the block
      const fin = await pub.getBlock({ blockTag: 'finalized' }).catch(() => undefined);
      return fin && fin.number !== null && fin.number >= blockNumber ? true : undefined;
    });
    const block = await proofStep('block header', () => fetchVerifiedBlock(pub, { number: blockNumber }));
    if (block.hash.toLowerCase() !== receipt.blockHash.toLowerCase())
      refuse('REORG', `block ${blockNumber} is now ${block.hash}, receipt says ${receipt.blockHash}`);
    const account = loaded.intent.account;
    const { raw: rawTx, txIndex } = await proofStep('transaction inclusion', () => proveTransaction(pub, block, txHash, blockTries));
    const proven = await proofStep('receipt inclusion', () => proveReceipt(pub, block, txIndex, blockTries));
    if (proven.status !== 1) refuse('EXECUTION_FAILED', `execution transaction ${txHash} reverted (status 0)`);
    // the executed call is exactly the committed one
    const { callBinding, to } = bindExecutedCall(rawTx, account, leg!, plan, leafIndex, k);
    const logs = proven.logs;
    const executed = findExecutedEvent(logs, { account, anchorId: plan.anchorId, leafIndex: BigInt(leafIndex), executionCommitment: leg!.executionCommitment });
    if (!executed)
      refuse('CALL_MISMATCH', `no Executed(${plan.anchorId}, ${leafIndex}, ${leg!.executionCommitment}) event from ${account} in the proven receipt`);
    await checkExpectedEffects(pub, { leg: leg!, logs, callBinding, to, account, blockNumber, stateRoot: block.stateRoot });

    const result: ExecutionResult = {
      chainId,
      txHash,
      blockNumber,
      blockHash: block.hash,
      transactionsRoot: block.transactionsRoot,
      receiptsRoot: block.receiptsRoot,
      stateRoot: block.stateRoot,
      status: 1,
      txIndex: BigInt(proven.txIndex),
      gasUsed: proven.gasUsed,
      eventsHash: eventsHash(logs),
      executionCommitment: leg!.executionCommitment,
    };
    const rh = resultHash(result);
    const message = resultMessage({
      chainId,
      anchor: plan.anchor,
      anchorId: plan.anchorId,
      leafIndex: BigInt(leafIndex),
      resultHash: rh,
      validatorSetRoot: set.root,
    });
    const signature = signOnce(message);
    const res: ObserveResponse = {
      ok: true,
      kind: 'observation',
      validatorIndex: index,
      publicKey: keys.bls.publicKey,
      anchorId: plan.anchorId,
      leafIndex: String(leafIndex),
      legId: leg!.legId,
      validatorSetRoot: set.root,
      resultHash: rh,
      message,
      signature,
      result: {
        chainId: chainId.toString(),
        txHash,
        blockNumber: blockNumber.toString(),
        blockHash: block.hash,
        blockTimestamp: BigInt(block.timestamp).toString(),
        transactionsRoot: block.transactionsRoot,
        receiptsRoot: block.receiptsRoot,
        stateRoot: block.stateRoot,
        status: 1,
        txIndex: String(proven.txIndex),
        gasUsed: proven.gasUsed.toString(),
        eventsHash: result.eventsHash,
        eventCount: logs.length,
        executionCommitment: leg!.executionCommitment,
      },
      confirmations,
      checks: { callBinding, expectedEvents: leg!.expectedEvents.length, expectedState: leg!.expectedState.length },
      elapsedMs: Math.round(performance.now() - t0),
    };
    setBounded(observations, key, res);
    return res;
  }

  return { observe, forget: (req) => observations.delete(observationKey(req)) };
}
