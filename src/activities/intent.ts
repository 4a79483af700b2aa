/**
 * Activities of the proof cycle (DESIGN.md §3): submit the client's signature to the ledger, follow the intent's
 * ledger transaction, and per chain: attestation quorum → createAnchor → executeComprehensiveProof →
 * executeGovernanceProofDirect per leg → observation quorum → proof_result on the ledger; then the proof.
 *
 * Every step reads the ledger, the chain or its own record first and skips what is already done, so a retry
 * after a worker crash never sends a second transaction: the anchor is content-addressed (exists? proven?), a
 * leg's leaf is consumed exactly once on chain (isLeafUsed, then the Executed log names the transaction), and the
 * validators write a result once (they look it up on the ledger). Outputs are stored on the intent_chains row,
 * so the workflow history stays small and GET /v1/transaction/{id} shows each transaction as soon as it exists.
 */
import { ApplicationFailure } from '@temporalio/common';
import { BaseError, decodeErrorResult, type Address, type Hex } from 'viem';
import { accountAbiWithAnchorErrors, findExecutionTx, isLegExecuted, proofForLeg } from '../chain/account.js';
import { createAnchor, executeComprehensiveProof, findAnchorTx, readValidatorSet, revertErrorName } from '../chain/anchor.js';
import { waitForReceipt, type ChainClients, type ChainWriter } from '../chain/clients.js';
import { anchorMessage } from '../chain/formulas.js';
import type { Db } from '../db/client.js';
import type { PreparedIntentTx } from '../db/schema.js';
import {
  completeIntent,
  CYCLE_STAGES,
  ensureIntentChain,
  getIntent,
  getIntentChains,
  markIntentFailed,
  markIntentSubmitted,
  storePartialProof,
  updateIntentChain,
  type CycleStage,
  type IntentDocument,
  type IntentRow,
} from '../db/intents.js';
import { isNotFound, LedgerInputError, LedgerSubmitError, LedgerTransportError, signatureOnLedger, tx, type LedgerClient } from '../ledger/index.js';
import type { Logger } from '../log.js';
import { assembleBundle, serializeBundle } from '../proof/bundle.js';
import { custodyTrail } from '../proof/custody-trail.js';
import { quorumRecord, type ChainCycleRecord, type CycleRecord } from '../protocol/cycle-record.js';
import { parseIntentEntries, planIntentAnchor, type CanonicalIntent, type IntentAnchorPlan } from '../protocol/intent/index.js';
import { attestRequestFor, observeRequestFor } from '../protocol/validator-wire.js';
import { createQuorumClient, QuorumUnreachableError, type QuorumClient } from '../validator/quorum.js';
import type { ChainAccess } from './chain-access.js';
import { attemptDeadline, beat, heartbeating } from './heartbeat.js';

/** Refusals that a later attempt can overcome (the validator saw the ledger or chain too early). */
const TRANSIENT_REFUSALS = new Set(['INTENT_PENDING', 'INTENT_NOT_FOUND', 'OBSERVE_TIMEOUT', 'RPC_UNAVAILABLE', 'REORG', 'NO_QUORUM', 'NOT_YET_VALID']);


/** Sends executeGovernanceProofDirect for one leg and returns the transaction hash (tests inject a tampering one). */
export type SendExecution = (
  w: ChainWriter,
  account: Address,
  call: { target: Address; value: bigint; data: Hex; proof: ReturnType<typeof proofForLeg> },
) => Promise<Hex>;

export const sendExecution: SendExecution = (w, account, call) =>
  w.wallet.writeContract({
    address: account,
    abi: accountAbiWithAnchorErrors,
    functionName: 'executeGovernanceProofDirect',
    args: [call.target, call.value, call.data, { ...call.proof, merkleProof: [...call.proof.merkleProof] }],
  });

export interface IntentActivityDeps {
  db: Db;
  ledger: LedgerClient;
  access: ChainAccess;
  /** validator i of the on-chain set answers at validatorUrls[i] */
  validatorUrls: readonly string[];
  quorumTimeouts?: { attestTimeoutMs?: number; observeTimeoutMs?: number; writeTimeoutMs?: number };
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

/** What the account's and the anchor's errors mean for a leg. */
const REVERT_MEANING: Record<string, string> = {
  InvalidMerkleProof: 'the runtime (chain id, target, value, calldata) does not match the anchored execution commitment',
  LeafAlreadyUsed: 'the proof was already used',
  AnchorNotProven: 'the anchor is not proven',
  AnchorNotFound: 'no such anchor',
  AnchorExpired: 'the intent expired (expires_at) before the leg could execute',
};

function revertData(e: unknown): Hex | undefined {
  const found = e instanceof BaseError ? e.walk((x) => typeof (x as { data?: unknown }).data === 'string') : undefined;
  const d = (found as { data?: unknown } | undefined)?.data;
  return typeof d === 'string' && d.startsWith('0x') && d.length >= 10 ? (d as Hex) : undefined;
}

/** The decoded custom error of a revert with its meaning, or the revert reason as viem reports it. */
function explainRevert(e: unknown): string {
  let name = revertErrorName(e);
  const data = revertData(e);
  if (!name && data) {
    try {
      name = decodeErrorResult({ abi: accountAbiWithAnchorErrors, data }).errorName;
    } catch {
      /* an error of the target contract, not ours */
    }
  }
  if (name) return REVERT_MEANING[name] ? `${name}: ${REVERT_MEANING[name]}` : name;
  return e instanceof BaseError ? e.shortMessage : String(e);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function describeOutcomes(e: QuorumUnreachableError): string {
  const refused = e.outcomes.filter((o) => o.status === 'refused');
  const reasons = [...new Set(refused.map((o) => `${o.code}: ${o.reason}`))];
  return reasons.length ? reasons.join('; ') : e.message;
}

export function createIntentActivities(deps: IntentActivityDeps) {
  const { db, ledger, access } = deps;
  const send = deps.sendExecution ?? sendExecution;
  const parsed = new Map<string, CanonicalIntent>();
  const quorums = new Map<string, { root: Hex; client: QuorumClient; checkedAt: number }>();

  async function loadIntent(intentId: string): Promise<{ row: IntentRow; intent: CanonicalIntent }> {
    const row = await getIntent(db, intentId);
    if (!row) throw ApplicationFailure.nonRetryable(`intent ${intentId} not found`, 'IntentNotFound');
    let intent = parsed.get(intentId);
    if (!intent) {
      intent = parseIntentEntries((row.intent as IntentDocument).parts);
      if (parsed.size > 1000) parsed.delete(parsed.keys().next().value as string);
      parsed.set(intentId, intent);
    }
    return { row, intent };
  }

  /**
   * The intent, its cycle on `chain` (created on first use: anchor plan and leaves) and the anchor plan. `stage`
   * moves the cycle forward to that stage (never back) before the caller's step runs, so GET shows it at once.
   */
  async function loadChain(intentId: string, chain: string, stage?: CycleStage) {
    const { row, intent } = await loadIntent(intentId);
    if (!row.txHash || !row.ledgerTxId) throw ApplicationFailure.nonRetryable(`intent ${intentId} was never submitted`, 'IntentNotFound');
    const e = access.entry(chain);
    const plan = planIntentAnchor(intent, { chainId: BigInt(e.chainId), proofAnchor: e.contracts.proofAnchor, ledgerTxHash: row.txHash });
    let c = (await getIntentChains(db, intentId)).find((r) => r.chain === chain);
    if (!c) {
      c = await ensureIntentChain(db, intentId, chain, {
        chain,
        chainId: String(e.chainId),
        proofAnchor: e.contracts.proofAnchor,
        anchorId: plan.anchorId,
        commitmentRoot: plan.commitmentRoot,
        leafCount: plan.leafCount.toString(),
        legs: plan.legs.map((l, k) => ({ legId: l.legId, leafIndex: k })),
      });
    }
    if (stage && CYCLE_STAGES.indexOf(c.stage as CycleStage) < CYCLE_STAGES.indexOf(stage)) {
      await updateIntentChain(db, intentId, chain, { stage });
    }
    return { row, intent, record: c.record, plan, entry: e, ledgerTxId: row.ledgerTxId };
  }

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
      throw ApplicationFailure.nonRetryable(
        `${set.publicKeys.length} validators are registered on ${chain} but only ${deps.validatorUrls.length} VALIDATOR_URLS are configured`,
        'ChainNotConfigured',
      );
    }
    const client = createQuorumClient({
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
    if (total - refusedForGood < e.requiredPower) {
      return ApplicationFailure.nonRetryable(`validators refused: ${describeOutcomes(e)}`, what);
    }
    return new Error(`${e.message} (will retry)`);
  }

  /** The transaction of a step found on chain (a retry after a crash between sending it and recording it). */
  async function foundTx(what: string, hash: Promise<Hex | undefined>): Promise<Hex> {
    const h = await hash;
    if (!h) throw new Error(`${what} not found on chain`);
    return h;
  }

  async function waitReceipt(r: ChainClients, hash: Hex) {
    return heartbeating(waitForReceipt(r, hash));
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
    if (i < 0) throw ApplicationFailure.nonRetryable(`leg ${legId} is not on this chain`, 'IntentNotFound');
    return { leg: plan.legs[i]!, index: i };
  }

  return {
    /**
     * The Update handler's step: rebuilds the prepared ledger transaction byte for byte (same timestamp and
     * signer version), attaches the client's signature and submits it. Idempotent: an intent already submitted
     * answers with its transaction. Transient ledger faults throw retryable errors (the workflow gives up after
     * a few and answers 502, the intent stays signing_required).
     */
    async submitIntentSignature(i: { intentId: string; signature: string }): Promise<{ txId: string; txHash: string }> {
      const deadline = attemptDeadline();
      const { row, intent } = await loadIntent(i.intentId);
      if (row.ledgerTxId && row.txHash) return { txId: row.ledgerTxId, txHash: row.txHash };
      const p = row.prepared;
      let prepared;
      try {
        prepared = await ledger.prepareExternalSignature({
          principal: p.principal,
          body: tx.writeData(intent.parts),
          txOptions: { memo: p.memo, expireAt: new Date(p.expireAt) },
          signerUrl: p.signerUrl,
          publicKey: p.publicKey,
          signerVersion: p.signerVersion,
          timestamp: p.timestamp,
        });
      } catch (e) {
        if (e instanceof LedgerInputError) throw ApplicationFailure.nonRetryable(`the signer is no longer valid: ${e.message}`, 'SignatureRejected');
        throw e;
      }
      if (prepared.hashToSign !== p.hashToSign || prepared.txHash !== p.txHash) {
        throw ApplicationFailure.nonRetryable('the prepared transaction could not be rebuilt identically; prepare a new intent', 'SigningDataChanged');
      }
      let submitted;
      try {
        submitted = await ledger.submitExternalSignature(prepared, i.signature);
      } catch (e) {
        if (e instanceof LedgerInputError || e instanceof LedgerSubmitError) {
          // An earlier attempt's submission may have reached the ledger and its answer been lost (a crash, a
          // timeout). On a page that needs more signatures the transaction then waits there with this key's
          // signature, and the ledger refuses the same signature again (its timestamp is used): that is submitted.
          const earlier = await heldByLedger(p).catch(() => undefined);
          if (earlier) submitted = earlier;
          else throw ApplicationFailure.nonRetryable(`the ledger refused the signature: ${e.message}`, 'SignatureRejected');
        } else throw e instanceof LedgerTransportError ? ApplicationFailure.retryable(`ledger unreachable: ${e.message}`, 'LedgerUnavailable') : e;
      }
      // An attempt past its timeout has been given up on (the client may have heard 502 and the intent must stay
      // open for the same signature): it does not mark the intent. A retry finds the transaction on the ledger.
      if (deadline !== undefined && Date.now() > deadline) throw new Error(`the submission attempt outlived its timeout; ${submitted.txId} is left for a retry to record`);
      await markIntentSubmitted(db, i.intentId, { txId: submitted.txId, txHash: submitted.txHash });
      return { txId: submitted.txId, txHash: submitted.txHash };
    },

    /**
     * Follows the intent's ledger transaction for up to `waitMs`: delivered (executed with its page's threshold
     * met), still pending (co-signatures outstanding), or failed (rejected, expired, out of credits...).
     */
    async followIntentTransaction(i: { intentId: string; waitMs: number }): Promise<{ state: 'delivered' | 'pending' | 'failed'; reason?: string; signatures: number }> {
      const row = await getIntent(db, i.intentId);
      if (!row?.ledgerTxId) throw ApplicationFailure.nonRetryable(`intent ${i.intentId} was never submitted`, 'IntentNotFound');
      const deadline = Date.now() + i.waitMs;
      for (;;) {
        const st = await ledger.getTransaction(row.ledgerTxId).catch((e) => {
          if (e instanceof LedgerTransportError || (e as { code?: string }).code === 'notFound') return undefined;
          throw e;
        });
        beat();
        if (st?.delivered) return { state: 'delivered', signatures: st.signatures.length };
        if (st?.failed) return { state: 'failed', reason: `ledger transaction ${st.status}${st.error ? `: ${st.error.message}` : ''}`, signatures: st.signatures.length };
        if (Date.now() > deadline) return { state: 'pending', signatures: st?.signatures.length ?? 0 };
        await sleep(50);
      }
    },

    /** Pre-execution quorum: every validator reads the intent from the ledger itself and BLS-signs the anchor. */
    async attestChain(i: IntentStepInput): Promise<{ signers: number[] }> {
      const c = await loadChain(i.intentId, i.chain, 'attesting');
      if (c.record.attestation) return { signers: c.record.attestation.signers };
      const r = access.reader(i.chain);
      const { client, root } = await quorumFor(i.chain, r, c.entry.contracts.proofAnchor);
      const message = anchorMessage({ chainId: BigInt(c.entry.chainId), anchor: c.plan.anchor, anchorId: c.plan.anchorId, validatorSetRoot: root });
      let q;
      try {
        q = await heartbeating(client.attest(attestRequestFor(c.ledgerTxId, i.chain, c.plan), { message }));
      } catch (e) {
        throw quorumFailure(e, client, 'AttestationRefused');
      }
      const authority = q.responses.values().next().value!.authority;
      await updateIntentChain(db, i.intentId, i.chain, {
        step: 'attested',
        record: (rec) => {
          rec.validatorSetRoot = root;
          rec.attestation = { ...quorumRecord(q), authority };
        },
      });
      return { signers: q.signers };
    },

    /** createAnchor, once: an existing anchor is found with its transaction. */
    async createChainAnchor(i: IntentStepInput): Promise<{ txHash: Hex; sent: boolean }> {
      const c = await loadChain(i.intentId, i.chain, 'anchoring');
      if (c.record.createAnchorTx) return { txHash: c.record.createAnchorTx, sent: false };
      const w = access.writer(i.chain);
      // An account that cannot pay its legs fails them here, before an anchor exists: a proven anchor whose legs
      // fail stays executable by anyone once the account is funded, until the intent's expires_at (the leaf's deadline).
      const need = c.plan.legs.reduce((a, l) => a + l.value, 0n);
      if (need > 0n) {
        const account = c.plan.legs[0]!.account;
        const balance = await w.public.getBalance({ address: account });
        if (balance < need) {
          throw ApplicationFailure.nonRetryable(`the account ${account} holds ${balance} wei but the legs on ${i.chain} send ${need} wei; nothing was anchored`, 'InsufficientFunds');
        }
      }
      const res = await heartbeating(
        createAnchor(w, c.plan.anchor, { commitmentRoot: c.plan.commitmentRoot, operationId: c.plan.operationId, ledgerTxHash: c.plan.ledgerTxHash, leafCount: c.plan.leafCount }),
      );
      if (res.tx && res.tx.status !== 'success') throw new Error(`createAnchor reverted (tx ${res.tx.txHash})`);
      const txHash = res.tx?.txHash ?? (await foundTx(`AnchorCreated log of anchor ${c.plan.anchorId}`, findAnchorTx(w, c.plan.anchor, c.plan.anchorId, 'created')));
      await updateIntentChain(db, i.intentId, i.chain, { record: (rec) => void (rec.createAnchorTx = txHash) });
      return { txHash, sent: !!res.tx };
    },

    /** executeComprehensiveProof with the aggregate, once: a proven anchor is found with its transaction. */
    async proveChainAnchor(i: IntentStepInput): Promise<{ txHash: Hex; sent: boolean }> {
      const c = await loadChain(i.intentId, i.chain);
      if (c.record.proveTx) return { txHash: c.record.proveTx, sent: false };
      const att = c.record.attestation;
      if (!att) throw ApplicationFailure.nonRetryable('no attestation recorded', 'IntentNotFound');
      const w = access.writer(i.chain);
      const res = await heartbeating(
        executeComprehensiveProof(w, c.plan.anchor, { anchorId: c.plan.anchorId, signerBitmap: BigInt(att.signerBitmap), signature: att.aggregateSignature }),
      );
      if (res.tx && res.tx.status !== 'success') throw new Error(`executeComprehensiveProof reverted (tx ${res.tx.txHash})`);
      const txHash = res.tx?.txHash ?? (await foundTx(`AnchorProven log of anchor ${c.plan.anchorId}`, findAnchorTx(w, c.plan.anchor, c.plan.anchorId, 'proven')));
      await updateIntentChain(db, i.intentId, i.chain, { step: 'anchored', record: (rec) => void (rec.proveTx = txHash) });
      return { txHash, sent: !!res.tx };
    },

    /**
     * executeGovernanceProofDirect for one leg, exactly once: a consumed leaf is found with its transaction. The
     * account must hold the value a native leg sends; a call that reverts fails the leg with the decoded reason.
     */
    async executeChainLeg(i: LegStepInput): Promise<{ txHash: Hex; sent: boolean }> {
      const c = await loadChain(i.intentId, i.chain, 'executing');
      const { leg, index } = legOf(c.plan, i.legId);
      const done = c.record.legs.find((l) => l.legId === i.legId)?.executionTx;
      if (done) return { txHash: done, sent: false };
      const w = access.writer(i.chain);
      const proof = proofForLeg(c.plan, index);
      // a proven leaf is executable by anyone until its deadline: a failed leg must say so, not just "not executed"
      const stillValid = `; its proof stays valid until ${new Date(Number(proof.deadline) * 1000).toISOString()} (the intent's expires_at): anyone may still run the leg before then if the call would succeed`;
      const record = async (txHash: Hex, sent: boolean) => {
        await updateIntentChain(db, i.intentId, i.chain, {
          step: 'executed',
          record: (rec) => {
            const l = rec.legs.find((x) => x.legId === i.legId)!;
            l.executionTx = txHash;
          },
        });
        return { txHash, sent };
      };
      const found = async () =>
        (await isLegExecuted(w, c.plan.anchor, proof))
          ? foundTx(
              `Executed log of anchor ${c.plan.anchorId} leaf ${proof.leafIndex} on ${leg.account}`,
              findExecutionTx(w, { proofAnchor: c.plan.anchor, account: leg.account, anchorId: c.plan.anchorId, leafIndex: proof.leafIndex, maxRange: access.entry(i.chain).logRangeBlocks }),
            )
          : undefined;
      const already = await found();
      if (already) return record(already, false);
      if (leg.value > 0n) {
        const balance = await w.public.getBalance({ address: leg.account });
        if (balance < leg.value) {
          throw ApplicationFailure.nonRetryable(`leg ${leg.legId}: the account ${leg.account} holds ${balance} wei but the leg sends ${leg.value} wei${stillValid}`, 'InsufficientFunds');
        }
      }
      let hash: Hex;
      try {
        hash = await send(w, leg.account, { target: leg.target, value: leg.value, data: leg.data, proof });
      } catch (e) {
        // a concurrent or earlier attempt consumed the leaf between the check and the send
        const again = await found();
        if (again) return record(again, false);
        if (revertErrorName(e) || revertData(e)) throw ApplicationFailure.nonRetryable(`leg ${leg.legId}: the account reverted the call (${explainRevert(e)})${stillValid}`, 'ExecutionReverted');
        throw e instanceof BaseError ? new Error(e.shortMessage) : e;
      }
      beat({ txHash: hash });
      const receipt = await waitReceipt(w, hash);
      if (receipt.status !== 'success') {
        const again = await found();
        if (again) return record(again, false);
        // replay the mined call on the state before its block to learn why it reverted
        const sent = await w.public.getTransaction({ hash });
        const why = await w.public
          .call({ to: sent.to ?? undefined, data: sent.input, value: sent.value, account: sent.from, blockNumber: receipt.blockNumber - 1n })
          .then(() => 'reverted', (e: unknown) => explainRevert(e));
        throw ApplicationFailure.nonRetryable(`leg ${leg.legId}: execution transaction ${hash} reverted on chain (${why}); nothing was executed${stillValid}`, 'ExecutionReverted');
      }
      return record(hash, true);
    },

    /** Post-execution quorum: validators read the receipt and block themselves and verify the committed effects. */
    async observeChainLeg(i: LegStepInput): Promise<{ resultHash: Hex }> {
      const c = await loadChain(i.intentId, i.chain, 'observing');
      const { index } = legOf(c.plan, i.legId);
      const l = c.record.legs.find((x) => x.legId === i.legId)!;
      if (l.observation) return { resultHash: l.observation.resultHash };
      if (!l.executionTx) throw ApplicationFailure.nonRetryable(`leg ${i.legId} has no execution`, 'IntentNotFound');
      const r = access.reader(i.chain);
      const { client, root } = await quorumFor(i.chain, r, c.entry.contracts.proofAnchor);
      let q;
      try {
        q = await heartbeating(
          client.observe(observeRequestFor(c.ledgerTxId, i.chain, c.plan.anchorId, index, l.executionTx), {
            chainId: BigInt(c.entry.chainId),
            proofAnchor: c.plan.anchor,
            validatorSetRoot: root,
          }),
        );
      } catch (e) {
        throw quorumFailure(e, client, 'ObservationRefused');
      }
      const first = q.responses.values().next().value!;
      await updateIntentChain(db, i.intentId, i.chain, {
        step: 'observed',
        record: (rec) => {
          rec.legs.find((x) => x.legId === i.legId)!.observation = {
            ...quorumRecord(q),
            resultHash: q.resultHash,
            confirmations: first.confirmations,
            checks: first.checks,
          };
        },
      });
      return { resultHash: q.resultHash };
    },

    /** The proof_result v2 record, written to the ledger by one of the signers (once; they check the ledger). */
    async recordChainLegResult(i: LegStepInput): Promise<{ resultId: Hex }> {
      const c = await loadChain(i.intentId, i.chain, 'recording');
      const { index } = legOf(c.plan, i.legId);
      const l = c.record.legs.find((x) => x.legId === i.legId)!;
      if (l.result) return { resultId: l.result.resultId };
      const o = l.observation;
      if (!o || !l.executionTx) throw ApplicationFailure.nonRetryable(`leg ${i.legId} was not observed`, 'IntentNotFound');
      const r = access.reader(i.chain);
      const { client } = await quorumFor(i.chain, r, c.entry.contracts.proofAnchor);
      const req = observeRequestFor(c.ledgerTxId, i.chain, c.plan.anchorId, index, l.executionTx);
      const w = await heartbeating(
        client.writeResult(req, { signers: o.signers, aggregateSignature: o.aggregateSignature, signerBitmap: BigInt(o.signerBitmap) }),
      );
      await updateIntentChain(db, i.intentId, i.chain, {
        step: 'recorded',
        record: (rec) => {
          rec.legs.find((x) => x.legId === i.legId)!.result = { resultId: w.resultId, resultsAccount: w.resultsAccount, txId: w.txId, writtenBy: w.writtenBy };
        },
      });
      return { resultId: w.resultId };
    },

    async failChainLegs(i: IntentStepInput & { legIds: string[]; error: string }): Promise<void> {
      // a chain whose cycle never started (its first step failed before the cycle was created) has nothing to
      // record: finalizeIntent counts its legs as failed
      if (!(await getIntentChains(db, i.intentId)).some((c) => c.chain === i.chain)) return;
      await updateIntentChain(db, i.intentId, i.chain, {
        record: (rec) => {
          for (const l of rec.legs) if (i.legIds.includes(l.legId) && !l.result) l.error = i.error;
        },
      });
    },

    /**
     * Ends the intent: with every leg recorded, the proof (bundle + custody) is stored and the intent completes;
     * otherwise it fails naming each failed leg (a partial proof of the completed legs is kept).
     */
    async finalizeIntent(i: { intentId: string }): Promise<{ status: 'completed' | 'failed'; proofId?: string; error?: string }> {
      const { row, intent } = await loadIntent(i.intentId);
      const chains = await getIntentChains(db, i.intentId);
      for (const c of chains) {
        const stage: CycleStage = c.record.legs.every((l) => l.result) ? 'completed' : 'failed';
        if (c.stage !== stage) await updateIntentChain(db, i.intentId, c.chain, { stage });
        c.stage = stage;
      }
      // every leg of the intent, so a chain whose cycle never started fails its legs instead of being left out
      const legs = intent.legs.map((il) => {
        const c = chains.find((x) => x.chain === il.chain);
        const l = c?.record.legs.find((x) => x.legId === il.legId);
        return { chain: il.chain, chainId: il.chainId.toString(), legId: il.legId, ...l, ...(c ? {} : { error: `no proof cycle ran on ${il.chain}` }) };
      });
      const done = legs.filter((l) => l.result && l.executionTx);
      const failed = legs.filter((l) => !(l.result && l.executionTx));
      let proofId: string | undefined;
      const cycle: CycleRecord = {
        intentId: row.id,
        adiUrl: intent.adiUrl,
        dataAccountUrl: row.prepared.principal,
        ledgerTxId: row.ledgerTxId ?? undefined,
        ledgerTxHash: row.txHash ?? undefined,
        chains: chains.map((c) => ({ ...c.record, legs: c.record.legs.filter((l) => l.result) })).filter((c) => c.legs.length),
        failedLegs: failed.map((l) => ({ legId: l.legId, chain: l.chain, reason: l.error ?? 'not completed' })),
      };
      const proof = async () => {
        const bundle = await heartbeating(assembleBundle({ ledger, chain: (name) => access.reader(name) }, cycle));
        const custody = custodyTrail({
          intentId: row.id,
          operationId: row.operationId,
          createdAt: row.createdAt.toISOString(),
          ledgerTxHash: row.txHash ?? undefined,
          chains: chains.map((c) => ({ chain: c.chain, record: c.record, stepTimes: c.stepTimes })),
          bundleHash: bundle.bundle_hash,
        });
        return { bundle: serializeBundle(bundle), bundleHash: bundle.bundle_hash, custody };
      };
      if (!failed.length && done.length) {
        proofId = await completeIntent(db, i.intentId, {
          proof: await proof(),
          executions: done.map((l) => ({ chain: l.chain, chain_id: l.chainId, leg_id: l.legId, tx_hash: l.executionTx! })),
        });
        return { status: 'completed', proofId };
      }
      if (done.length) proofId = await storePartialProof(db, i.intentId, await proof());
      const error =
        failed.map((l) => `leg ${l.legId} (${l.chain}) failed: ${l.error ?? 'not completed'}`).join('; ') +
        (done.length ? `; completed: ${done.map((l) => l.legId).join(', ')}` : '');
      const stage = chains.find((c) => c.stage === 'failed') ? 'failed' : row.stage;
      await markIntentFailed(db, i.intentId, { status: 'failed', stage, error, proofId });
      return { status: 'failed', proofId, error };
    },

    /**
     * Terminal failure before the cycle (expired unsigned, refused on the ledger). Expiry first makes sure the
     * signature never reached the ledger: an attempt whose answer was lost (the client heard 502) may have
     * submitted it, or still be running past its timeout and mark it submitted later. Then it is submitted, not
     * expired, and the answer says so (the workflow goes on with the cycle).
     */
    async failIntent(i: { intentId: string; status: 'failed' | 'expired'; error: string }): Promise<{ submitted?: { txId: string; txHash: string } } | void> {
      const row = await getIntent(db, i.intentId);
      if (i.status === 'expired' && row) {
        let held = row.ledgerTxId && row.txHash ? { txId: row.ledgerTxId, txHash: row.txHash } : undefined;
        if (!held) {
          try {
            held = await heldByLedger(row.prepared);
          } catch (e) {
            if (!isNotFound(e)) throw e instanceof LedgerTransportError ? ApplicationFailure.retryable(`ledger unreachable: ${e.message}`, 'LedgerUnavailable') : e;
          }
        }
        if (held) {
          await markIntentSubmitted(db, i.intentId, held);
          return { submitted: held };
        }
      }
      await markIntentFailed(db, i.intentId, { status: i.status, stage: row?.stage ?? 'signing_required', error: i.error });
    },
  };
}
export type IntentActivities = ReturnType<typeof createIntentActivities>;
export const INTENT_ACTIVITY_NAMES: (keyof IntentActivities)[] = [
  'submitIntentSignature',
  'followIntentTransaction',
  'attestChain',
  'createChainAnchor',
  'proveChainAnchor',
  'executeChainLeg',
  'observeChainLeg',
  'recordChainLegResult',
  'failChainLegs',
  'finalizeIntent',
  'failIntent',
];
