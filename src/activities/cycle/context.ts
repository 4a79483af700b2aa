/**
 * What every step of the proof cycle shares, built once per worker: the dependencies, the intent and its cycle on a
 * chain as stored (the parsed intent cached), the validators' quorum client per chain (cached while the on-chain set
 * is unchanged), and the cycle's named failures. The steps themselves are factories over this context
 * (signature.ts, quorum.ts, chain-steps.ts, finalize.ts).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Address, Hex } from 'viem';
import type { AnchorProofArg } from '../../chain/account.js';
import { readValidatorSet } from '../../chain/anchor.js';
import { waitForReceipt, type ChainClients, type ChainWriter } from '../../chain/clients.js';
import type { Db } from '../../db/client.js';
import {
  CYCLE_STAGES,
  ensureIntentChain,
  getIntent,
  getIntentWithChains,
  updateIntentChain,
  type ChainChange,
  type CycleStage,
  type IntentDocument,
  type IntentRow,
  type VersionedChainRow,
} from '../../db/intents.js';
import type { PreparedIntentTx } from '../../db/schema.js';
import { signatureOnLedger, tx, type LedgerClient, type LedgerTransportError } from '../../ledger/index.js';
import type { Logger } from '../../log.js';
import type { IntentFailure } from '../../protocol/failures.js';
import { parseIntentEntries, planIntentAnchor, type CanonicalIntent, type IntentAnchorPlan } from '../../protocol/intent/index.js';
import { SEND_TOKENS, type TransferDocument } from '../../protocol/intent/transfer.js';
import { createQuorumClient, QuorumUnreachableError, type QuorumClient } from '../../validator/quorum.js';
import type { ChainAccess } from '../chain-access.js';
import { heartbeating } from '../heartbeat.js';
import { batchPlanning } from './batch-plan.js';

/** Sends executeGovernanceProofDirect for one leg and returns the transaction hash (tests inject a tampering one). */
export type SendExecution = (w: ChainWriter, account: Address, call: { target: Address; value: bigint; data: Hex; proof: AnchorProofArg }) => Promise<Hex>;

export interface IntentActivityDeps {
  db: Db;
  ledger: LedgerClient;
  access: ChainAccess;
  /** validator i of the on-chain set answers at validatorUrls[i] */
  validatorUrls: readonly string[];
  /** secret: the Ed25519 seed (hex) requests to the validators are signed with (VALIDATOR_CLIENT_KEY) */
  validatorClientSeed?: string;
  quorumTimeouts?: { attestTimeoutMs?: number; observeTimeoutMs?: number; writeTimeoutMs?: number };
  /** how a leg's executeGovernanceProofDirect is sent; chain/account.ts sendGovernanceProofDirect by default */
  sendExecution?: SendExecution;
  logger?: Logger;
}

export interface IntentStepInput {
  intentId: string;
  chain: string;
}
export interface LegStepInput extends IntentStepInput {
  legId: string;
}

/** A ledger that cannot be reached right now: retryable (the workflow retries a few times, then answers 502). */
export function ledgerUnavailable(e: LedgerTransportError): ApplicationFailure {
  return ApplicationFailure.retryable(`ledger unreachable: ${e.message}`, 'LedgerUnavailable');
}

/** A failure of the cycle that no retry can fix (the workflows list every IntentFailure as non-retryable). */
export function cycleFailure(type: IntentFailure, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, type);
}

/** Refusals that a later attempt can overcome (the validator saw the ledger or chain too early). */
const TRANSIENT_REFUSALS = new Set(['INTENT_PENDING', 'INTENT_NOT_FOUND', 'OBSERVE_TIMEOUT', 'RPC_UNAVAILABLE', 'REORG', 'NO_QUORUM', 'NOT_YET_VALID']);

function describeOutcomes(e: QuorumUnreachableError): string {
  const refused = e.outcomes.filter((o) => o.status === 'refused');
  const reasons = [...new Set(refused.map((o) => `${o.code}: ${o.reason}`))];
  return reasons.length ? reasons.join('; ') : e.message;
}

export type CycleContext = ReturnType<typeof createCycleContext>;

/** A warning for a relayer nonce gap that a receipt wait filled (the transactions behind it could not be mined). */
function logGapFilled(logger: Logger | undefined, chainId: number) {
  return (g: { address: Hex; from: number; to: number; hash: Hex }) =>
    logger?.warn('relayer nonce gap filled with empty transfers', {
      chain_id: chainId,
      relayer: g.address,
      nonces: `${g.from}-${g.to - 1}`,
      waiting_tx: g.hash,
    });
}

/** A step's change of the chain cycle it loaded: updateIntentChain going on from the chains loadChain read. */
export function updateLoadedChain(db: Db, i: IntentStepInput, loaded: { chains: readonly VersionedChainRow[] }, change: ChainChange) {
  return updateIntentChain(db, i.intentId, i.chain, change, loaded.chains);
}

/** The canonical intent of a row, parsed once per intent (the last thousand kept). */
function intentParser(): (row: IntentRow) => CanonicalIntent {
  const parsed = new Map<string, CanonicalIntent>();
  return (row) => {
    let intent = parsed.get(row.id);
    if (!intent) {
      intent = parseIntentEntries((row.intent as IntentDocument).parts);
      if (parsed.size > 1000) parsed.delete(parsed.keys().next().value as string);
      parsed.set(row.id, intent);
    }
    return intent;
  };
}

export function createCycleContext(deps: IntentActivityDeps) {
  const { db, ledger, access } = deps;
  const parsedIntent = intentParser();
  const quorums = new Map<string, { root: Hex; client: QuorumClient; checkedAt: number }>();

  async function loadIntent(intentId: string): Promise<{ row: IntentRow; intent: CanonicalIntent }> {
    const row = await getIntent(db, intentId);
    if (!row) throw cycleFailure('IntentNotFound', `intent ${intentId} not found`);
    return { row, intent: parsedIntent(row) };
  }

  /**
   * The intent's row and the body of its ledger transaction, as prepared: the canonical intent's WriteData, or the
   * SendTokens of a ledger token transfer.
   */
  async function preparedBody(intentId: string): Promise<{ row: IntentRow; body: ReturnType<typeof tx.writeData> | ReturnType<typeof tx.sendTokens> }> {
    const row = await getIntent(db, intentId);
    if (!row) throw cycleFailure('IntentNotFound', `intent ${intentId} not found`);
    if (row.intentType === SEND_TOKENS) {
      const d = row.intent as TransferDocument;
      return { row, body: tx.sendTokens([{ url: d.to, amount: BigInt(d.amount) }]) };
    }
    return { row, body: tx.writeData((await loadIntent(intentId)).intent.parts) };
  }

  /**
   * The intent, its cycle on `chain` (created on first use: anchor plan and leaves) and the anchor plan. `stage`
   * moves the cycle forward to that stage (never back) before the caller's step runs, so GET shows it at once.
   */
  async function loadChain(intentId: string, chain: string, stage?: CycleStage) {
    const found = await getIntentWithChains(db, intentId);
    if (!found) throw cycleFailure('IntentNotFound', `intent ${intentId} not found`);
    const { row, chains } = found;
    const intent = parsedIntent(row);
    if (!row.txHash || !row.ledgerTxId) throw cycleFailure('IntentNotSubmitted', `intent ${intentId} was never submitted`);
    const e = access.entry(chain);
    let plan = planIntentAnchor(intent, { chainId: BigInt(e.chainId), proofAnchor: e.contracts.proofAnchor, ledgerTxHash: row.txHash });
    const c =
      chains.find((r) => r.chain === chain) ??
      (await ensureIntentChain(db, intentId, chain, {
        chain,
        chainId: String(e.chainId),
        proofAnchor: e.contracts.proofAnchor,
        anchorId: plan.anchorId,
        commitmentRoot: plan.commitmentRoot,
        leafCount: plan.leafCount.toString(),
        legs: plan.legs.map((l, k) => ({ legId: l.legId, leafIndex: k })),
      }));
    // a batched intent's legs, once its batch is attested, are leaves of the batch's anchor
    const batch = c.record.batch;
    if (batch?.anchorId && batch.members) plan = (await batchPlanOf(chain, batch)).members[batch.members.findIndex((m) => m.intentId === intentId)]!;
    if (stage && CYCLE_STAGES.indexOf(c.stage as CycleStage) < CYCLE_STAGES.indexOf(stage)) {
      await updateIntentChain(db, intentId, chain, { stage }, chains);
    }
    // `chains` as they stand after the stage move: the starting point of the step's own update (updateIntentChain's `known`)
    return { row, intent, record: c.record, plan, entry: e, ledgerTxId: row.ledgerTxId, chains };
  }

  const { batchPlanOf, batchRef } = batchPlanning(access, loadIntent);

  /** The quorum client of a chain: keys and powers as ProofAnchor holds them, validator i at validatorUrls[i]. */
  async function quorumFor(chain: string, r: ChainClients, proofAnchor: Address): Promise<{ client: QuorumClient; root: Hex }> {
    const cached = quorums.get(chain);
    if (cached && Date.now() - cached.checkedAt < 60_000) return cached;
    const set = await readValidatorSet(r, proofAnchor);
    if (cached && cached.root === set.root) {
      cached.checkedAt = Date.now();
      return cached;
    }
    if (deps.validatorUrls.length < set.publicKeys.length) {
      throw cycleFailure(
        'ChainNotConfigured',
        `${set.publicKeys.length} validators are registered on ${chain} but only ${deps.validatorUrls.length} VALIDATOR_URLS are configured`,
      );
    }
    if (!deps.validatorClientSeed) throw cycleFailure('ChainNotConfigured', 'VALIDATOR_CLIENT_KEY is not set: the validators answer signed requests only');
    const client = createQuorumClient({
      clientKey: deps.validatorClientSeed,
      validators: set.publicKeys.map((publicKey, index) => ({ index, url: deps.validatorUrls[index]!, publicKey, power: set.powers[index] })),
      thresholdNum: set.thresholdNum,
      thresholdDen: set.thresholdDen,
      settle: 'quorum',
      // a loaded validator answers late rather than never: a timed-out round is retried whole, which only adds load
      attestTimeoutMs: 30_000,
      ...deps.quorumTimeouts,
    });
    const out = { client, root: set.root, checkedAt: Date.now() };
    quorums.set(chain, out);
    return out;
  }

  /** A quorum failure: permanent when the validators that refused for good leave too little power for a quorum. */
  function quorumFailure(e: unknown, q: QuorumClient, what: 'AttestationRefused' | 'ObservationRefused'): Error {
    if (!(e instanceof QuorumUnreachableError)) return e as Error;
    const total = q.validators.reduce((a, v) => a + (v.power ?? 100n), 0n);
    const refusedForGood = e.outcomes
      .filter((o) => o.status === 'refused' && !TRANSIENT_REFUSALS.has(o.code ?? ''))
      .reduce((a, o) => a + (q.validators.find((v) => v.index === o.index)?.power ?? 100n), 0n);
    if (total - refusedForGood < e.requiredPower) return cycleFailure(what, `validators refused: ${describeOutcomes(e)}`);
    return new Error(`${e.message} (will retry)`);
  }

  /** The transaction of a step found on chain (a retry after a crash between sending it and recording it). */
  async function foundTx(what: string, hash: Promise<Hex | undefined>): Promise<Hex> {
    const h = await hash;
    if (!h) throw new Error(`${what} not found on chain`);
    return h;
  }

  function waitReceipt(r: ChainClients, hash: Hex) {
    return heartbeating(waitForReceipt(r, hash, { onGapFilled: logGapFilled(deps.logger, r.chain.id) }));
  }

  /**
   * The prepared transaction as the ledger holds it (pending or executed) with the nominated key's signature. The
   * question is whether the submission reached the ledger, so a signature a later page change voided still says
   * yes: the transaction is there (initiated by this key) and is followed like any other.
   */
  async function heldByLedger(p: PreparedIntentTx): Promise<{ txId: string; txHash: string } | undefined> {
    const on = await signatureOnLedger(ledger, p);
    return on?.recorded ? { txId: on.tx.txId, txHash: on.tx.txHash } : undefined;
  }

  function legOf(plan: IntentAnchorPlan, legId: string) {
    const i = plan.legs.findIndex((l) => l.legId === legId);
    if (i < 0) throw cycleFailure('LegNotOnChain', `leg ${legId} is not on this chain`);
    return { leg: plan.legs[i]!, index: i };
  }

  return {
    db,
    ledger,
    access,
    deps,
    loadIntent,
    preparedBody,
    loadChain,
    batchPlanOf,
    batchRef,
    quorumFor,
    quorumFailure,
    foundTx,
    waitReceipt,
    heldByLedger,
    legOf,
  };
}
