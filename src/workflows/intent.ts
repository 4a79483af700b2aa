/**
 * intentWorkflow (`intent-<id>`): one transaction intent from prepare to proof.
 *
 *   signing_required   waits for the client's signature: the Update `submitSignature` (POST
 *                      /v1/transaction/{id}/signature). Its validator checks the intent's state, the signature's
 *                      form and the nominated key; the handler's submission step verifies the Ed25519 signature
 *                      over the hash_to_sign this workflow holds (natively, before anything is sent; the API has
 *                      checked it against the row already) and submits it to the ledger. Unsigned at expires_at
 *                      → expired. A submission the row records without the workflow (its Update dropped with a
 *                      killed sender) is found by a look at the row now and then (SIGNATURE_WATCH).
 *   submitted          follows the ledger transaction until the key page's threshold is met (co-signers sign
 *                      through /v1/sign) and it executes; rejected or expired on the ledger → failed. While
 *                      co-signatures are outstanding it looks at the ledger now and then between durable timers
 *                      (FOLLOW_BY_LOOKS), at once on the Signal `ledgerChanged` (sent after a co-signature).
 *   ledger-only        a token transfer (no chains): the ledger's receipt of the executed transaction is its
 *                      proof (finalizeLedgerIntent), no validator round; new runs only (patched).
 *   per chain          the chain cycle (runChainCycle, src/workflows/intent-chain.ts): attesting → anchoring →
 *                      executing → observing → recording. An intent over one chain runs it here; one over several
 *                      chains runs a child workflow `intent-<id>-<chain>` (intentChainWorkflow) per chain. Legs are
 *                      independent; no cross-chain atomicity.
 *   completed/failed   the proof (bundle + custody chain) is stored; the intent says which legs completed.
 *
 * Orchestration only; every effect is an idempotent activity (src/activities/intent.ts). Since CYCLE_LOCAL_STEPS the
 * short ones (the signature's submission, the proof at the end, a failure) are local activities, and since
 * FOLLOW_IN_SIGNATURE_TASK the first follow of the ledger transaction too: a single signer's intent runs from its
 * signature to its proof in one workflow task. Looks at a transaction waiting for co-signers are activities.
 */
import {
  ApplicationFailure,
  condition,
  defineQuery,
  defineUpdate,
  executeChild,
  patched,
  proxyActivities,
  proxyLocalActivities,
  type RetryPolicy,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { IntentActivities } from '../activities/intent.js';
import type { RefreshedSigningData } from '../activities/cycle/signing-data.js';
import { EXPIRED_UNSIGNED, NON_RETRYABLE_INTENT_ERRORS, type SignatureRejection } from '../protocol/failures.js';
import { signatureFormatProblem } from '../protocol/signature.js';
import type { ProofClass } from '../protocol/proof-class.js';
import { innermostFailure } from './failure.js';
import { CYCLE_LOCAL_STEPS, intentChainWorkflow, runChainCycle } from './intent-chain.js';
import { ledgerChangedSignal } from './ledger-changed.js';
import { IdentityIdKey, IntentIdKey, OrgIdKey, StageKey } from './search-attributes.js';

export interface IntentWorkflowInput {
  intentId: string;
  orgId: string;
  identityId: string;
  /** hex Ed25519 key nominated to sign */
  signerPublicKey: string;
  /** hex, 32 bytes: what the signature covers */
  hashToSign: string;
  /** unix ms: an unsigned intent expires then */
  expiresAtMs: number;
  /** chains of the intent in leg order, with their legs */
  chains: { chain: string; legIds: string[] }[];
  /**
   * a ledger-only intent (a sendTokens token transfer, no chains): once the ledger executed it, its proof is the
   * ledger's receipt (finalizeLedgerIntent) and no validator round runs
   */
  ledgerOnly?: boolean;
  /**
   * the class the client signed (runs started since the field; older ones ask the batcher's join step, which reads
   * it from the row): a standard intent's chain cycle then skips that step
   */
  proofClass?: ProofClass;
}

/** Ledger-only intents end with finalizeLedgerIntent after the ledger executes them (new runs only take this path). */
export const LEDGER_ONLY_INTENT = 'ledger-only-intent';

/**
 * An intent over a single chain runs its chain cycle in its own workflow instead of a child (new runs only take this
 * path): no child to start and hear back from, so half the workflow tasks of a cycle (4 instead of 8) and one
 * workflow execution less for Temporal to keep. An intent over several chains keeps one child per chain, each with its own
 * history and stage in the Temporal UI.
 */
export const INLINE_CHAIN_CYCLE = 'inline-chain-cycle';

/** An unsigned intent's workflow looks for a submission recorded without it (new runs only take this path). */
export const SIGNATURE_WATCH = 'signature-watch';

/** the first look 2 s after the workflow starts waiting, then twice as long between looks, at most 5 minutes */
const WATCH_FIRST_MS = 2_000;
const WATCH_MAX_MS = 300_000;

/**
 * Patch id (0.4.0 runs): the ledger transaction followed first in a local activity for a few seconds (a single
 * signer's transaction is executed by then, so the cycle went on in the same workflow task), then as an activity that
 * heartbeats while co-signatures are outstanding. Newer runs follow it by the activity alone (ANSWER_SIGNATURE_FIRST).
 */
export const FOLLOW_LOCAL_FIRST = 'follow-local-first';
const FOLLOW_LOCAL_MS = 5_000;

/**
 * Patch id: the ledger transaction is followed by an activity again (FOLLOW_LOCAL_FIRST no more), so the workflow
 * task that ran the signature's Update ends as soon as the signature is submitted. An Update's answer is sent when
 * its workflow task completes, and local activities keep one task open from the signature to the proof: POST
 * .../signature answered only when the whole cycle had run (or when the task was extended, every 8 s). A 1 ms timer
 * would end the task too, but on the dev server here it added about 0.9 s to the cycle. Newer runs follow locally
 * again, the API answering from the row (FOLLOW_IN_SIGNATURE_TASK).
 */
export const ANSWER_SIGNATURE_FIRST = 'answer-signature-first';

/**
 * Patch id: a transaction still pending after the first follow (co-signatures outstanding, possibly for days) is
 * looked at by a short activity between durable timers, at once when the Signal `ledgerChanged` says a co-signature
 * landed. Before, one activity after another waited 30 s each: every such intent held one of the worker's activity
 * slots for as long as its co-signers took (a hundred of them starved every other activity of a worker), and a wait
 * of days outgrew the history's limit.
 */
export const FOLLOW_BY_LOOKS = 'follow-by-looks';
/** how long the first follow (an activity, in runs before FOLLOW_IN_SIGNATURE_TASK) waits for the ledger to execute the transaction */
const FOLLOW_FIRST_MS = 10_000;

/**
 * Patch id: the first follow is a local activity again, so a single signer's whole cycle runs in the workflow task
 * that ran the signature's Update, without an activity task and a second workflow task. The Update is answered
 * only when that task completes; the API answers the signature as soon as the submission step has marked the row
 * submitted (src/services/intents.ts firstAnswer). A transaction still pending after it is followed by looks.
 */
export const FOLLOW_IN_SIGNATURE_TASK = 'follow-in-signature-task';
/**
 * The pause before the next look: 1 s, doubling up to a minute while the transaction is under an hour pending, up
 * to 5 minutes after (a week's wait then stays a few thousand looks); back to 1 s after a Signal.
 */
const LOOK_FIRST_PAUSE_MS = 1_000;
const LOOK_MAX_PAUSE_MS = 60_000;
const LOOK_MAX_PAUSE_LATER_MS = 300_000;
const LOOK_LATER_AFTER_MS = 3_600_000;

export interface IntentWorkflowResult {
  intentId: string;
  status: 'completed' | 'failed' | 'expired';
  proofId?: string;
  error?: string;
}

export interface SubmitSignatureArgs {
  /** 128 hex */
  signature: string;
  /** 64 hex */
  publicKey: string;
}
export interface SubmitSignatureResult {
  status: 'submitted';
  txId: string;
  txHash: string;
}

export interface IntentProgress {
  stage: string;
  txHash?: string;
  chains: Record<string, string>;
}

export const submitSignatureUpdate = defineUpdate<SubmitSignatureResult, [SubmitSignatureArgs]>('submitSignature');
/**
 * Fresh signing data for the unsigned intent (POST /v1/transaction/{id}/signing-data): the transaction prepared
 * again with a new timestamp and the page's current version; the next signature is verified against its hash.
 */
export const refreshSigningDataUpdate = defineUpdate<RefreshedSigningData, []>('refreshSigningData');
export const intentProgressQuery = defineQuery<IntentProgress>('progress');

const retry: RetryPolicy = {
  initialInterval: '250 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '10 seconds',
  nonRetryableErrorTypes: [...NON_RETRYABLE_INTENT_ERRORS],
};

/** The Update's ledger submission: a few quick attempts, then the client hears 502 and may retry the same signature. */
const submitOptions = { startToCloseTimeout: '20 seconds', retry: { ...retry, maximumAttempts: 3, maximumInterval: '1 second' } } as const;
const submitActs = proxyActivities<IntentActivities>(submitOptions);
const submitLocal = proxyLocalActivities<IntentActivities>(submitOptions);
const acts = proxyActivities<IntentActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  scheduleToCloseTimeout: '2 hours',
  retry,
});
const local = proxyLocalActivities<IntentActivities>({
  startToCloseTimeout: '2 minutes',
  scheduleToCloseTimeout: '2 hours',
  localRetryThreshold: '10 seconds',
  retry,
});

function reject(type: SignatureRejection, message: string): never {
  throw ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** What the next signature must cover, and whether fresh signing data is being (or was) prepared. */
interface SigningState {
  hashToSign: string;
  refreshing: boolean;
  refreshed: boolean;
}

/**
 * The Update `refreshSigningData`: while the intent waits for its signature, its transaction is prepared again
 * (refreshIntentSigningData) and the next signature is verified against the new hash. `refuseClosed` throws the
 * rejection of an intent that takes no signature any more.
 */
function handleSigningDataRefresh(input: IntentWorkflowInput, submit: typeof submitActs, sig: SigningState, refuseClosed: () => void): void {
  setHandler(
    refreshSigningDataUpdate,
    async () => {
      sig.refreshing = true;
      try {
        const r = await submit.refreshIntentSigningData({ intentId: input.intentId });
        sig.hashToSign = r.hashToSign;
        sig.refreshed = true;
        return r;
      } catch (err) {
        const f = innermostFailure(err);
        if (f.type === 'IntentClosed' || f.type === 'SignatureRejected') reject(f.type, f.message);
        reject('LedgerUnavailable', `the ledger could not be reached to prepare fresh signing data (${f.message}); retry`);
      } finally {
        sig.refreshing = false;
      }
    },
    {
      validator: () => {
        refuseClosed();
        if (sig.refreshing) reject('SignatureInFlight', 'fresh signing data is already being prepared for this intent; retry');
        if (Date.now() >= input.expiresAtMs) reject('IntentExpired', 'intent expired before it was signed; prepare a new one');
      },
    },
  );
}

/**
 * Waits until the intent is signed or expires; true when signed. Temporal drops an Update whose sender was killed
 * before the workflow recorded it, while the Update's submission step may have marked the row submitted already: the
 * row is looked at now and then (`look`), and a submission found there is this workflow's (`adopt`). A client sending
 * the signature again hands it over sooner.
 */
async function waitForSignature(
  input: IntentWorkflowInput,
  look: () => Promise<{ txId: string; txHash: string } | undefined>,
  s: { signed: () => boolean; submitting: () => boolean; adopt: (found: { txId: string; txHash: string }) => void },
): Promise<boolean> {
  const untilExpiry = () => Math.max(1, input.expiresAtMs - Date.now());
  if (!patched(SIGNATURE_WATCH)) return condition(s.signed, untilExpiry());
  for (let every = WATCH_FIRST_MS; Date.now() < input.expiresAtMs; every = Math.min(every * 2, WATCH_MAX_MS)) {
    if (await condition(s.signed, Math.min(every, untilExpiry()))) return true;
    if (s.submitting() || Date.now() >= input.expiresAtMs) continue;
    const found = await look();
    if (found && !s.signed()) s.adopt(found);
    if (s.signed()) return true;
  }
  return s.signed();
}

type Followed = { state: 'delivered' | 'failed'; reason?: string };

/** Until the ledger executed or refused the intent's transaction; pending while co-signatures are outstanding. */
async function followLedgerTransaction(intentId: string, localSteps: boolean): Promise<Followed> {
  if (localSteps && patched(FOLLOW_IN_SIGNATURE_TASK)) return followByLooks(intentId, true);
  const localFirst = !patched(ANSWER_SIGNATURE_FIRST) && localSteps && patched(FOLLOW_LOCAL_FIRST);
  if (patched(FOLLOW_BY_LOOKS)) return followByLooks(intentId, false);
  for (let first = true; ; first = false) {
    const r =
      first && localFirst
        ? await local.followIntentTransaction({ intentId, waitMs: FOLLOW_LOCAL_MS })
        : await acts.followIntentTransaction({ intentId, waitMs: 30_000 });
    // pending: the ledger expires the transaction at its first major block after expires_at
    if (r.state !== 'pending') return { state: r.state, reason: r.reason };
  }
}

/**
 * One follow (a local one of FOLLOW_LOCAL_MS, or an activity of FOLLOW_FIRST_MS in older runs), then one look at a
 * time: no activity runs (and no worker slot is held) while the workflow waits between looks. The Signal
 * `ledgerChanged` (a co-signature landed; one sent earlier was kept for this handler) ends the pause; it is forgotten
 * before each look, so one during a look brings the next look at once.
 */
async function followByLooks(intentId: string, localFirst: boolean): Promise<Followed> {
  const changed = { seen: false };
  setHandler(ledgerChangedSignal, () => {
    changed.seen = true;
  });
  const since = Date.now();
  let r = localFirst
    ? await local.followIntentTransaction({ intentId, waitMs: FOLLOW_LOCAL_MS })
    : await acts.followIntentTransaction({ intentId, waitMs: FOLLOW_FIRST_MS });
  for (let pause = LOOK_FIRST_PAUSE_MS; r.state === 'pending'; ) {
    // pending: the ledger expires the transaction at its first major block after expires_at
    const woken = await condition(() => changed.seen, pause);
    changed.seen = false;
    r = await acts.followIntentTransaction({ intentId, waitMs: 0 });
    const max = Date.now() - since < LOOK_LATER_AFTER_MS ? LOOK_MAX_PAUSE_MS : LOOK_MAX_PAUSE_LATER_MS;
    pause = woken ? LOOK_FIRST_PAUSE_MS : Math.min(pause * 2, max);
  }
  return { state: r.state, reason: r.reason };
}

export async function intentWorkflow(input: IntentWorkflowInput): Promise<IntentWorkflowResult> {
  const localSteps = patched(CYCLE_LOCAL_STEPS);
  const submit = localSteps ? submitLocal : submitActs;
  const short = localSteps ? local : acts;
  const progress: IntentProgress = { stage: 'signing_required', chains: {} };
  let submitting = false;
  let submitted: SubmitSignatureResult | undefined;
  // what the signature must cover: prepare's hash_to_sign, or the latest fresh signing data's
  const sig: SigningState = { hashToSign: input.hashToSign, refreshing: false, refreshed: false };
  let ended = false;
  setHandler(intentProgressQuery, () => progress);
  const step = (stage: string) => {
    progress.stage = stage;
    upsertSearchAttributes([{ key: StageKey, value: stage }]);
  };

  setHandler(
    submitSignatureUpdate,
    async ({ signature, publicKey }) => {
      submitting = true;
      try {
        const r = await submit.submitIntentSignature({
          intentId: input.intentId,
          signature: signature.toLowerCase(),
          publicKey: publicKey.toLowerCase(),
          hashToSign: sig.hashToSign,
        });
        submitted = { status: 'submitted', txId: r.txId, txHash: r.txHash };
        progress.txHash = r.txHash;
        return submitted;
      } catch (err) {
        const f = innermostFailure(err);
        if (f.type === 'InvalidSignature') {
          const latest = sig.refreshed ? ' (the signing data was refreshed: sign the latest hash_to_sign, GET /v1/transaction/{id} shows it)' : '';
          reject(f.type, `${f.message}${latest}`);
        }
        if (f.type === 'SignatureRejected' || f.type === 'SigningDataChanged') reject(f.type, f.message);
        if (f.type === 'SigningDataStale') throw ApplicationFailure.create({ type: f.type, message: f.message, nonRetryable: true, details: f.details });
        reject('LedgerUnavailable', `the ledger could not take the signature right now (${f.message}); retry the same signature`);
      } finally {
        submitting = false;
      }
    },
    {
      validator: ({ signature, publicKey }) => {
        // signed first: a signature sent again after its answer was lost (a killed API process) is told it went
        // through, also once the workflow has moved on from the signature. A submission still running is not yet
        // "already signed": it can fail (the ledger unreachable), and a client told so would never send it again,
        // leaving the intent unsigned until it expires; it hears "in flight" and sends the signature again.
        if (submitted) reject('AlreadySigned', 'intent already signed; read the intent for its status');
        if (submitting) reject('SignatureInFlight', 'a signature for this intent is being submitted; send it again after Retry-After');
        if (ended) reject('IntentClosed', `intent is ${progress.stage}; it takes no signature`);
        if (sig.refreshing) reject('SignatureInFlight', 'fresh signing data is being prepared for this intent; sign the hash_to_sign it answers');
        const malformed = signatureFormatProblem(signature, publicKey);
        if (malformed) reject('InvalidInput', malformed.message);
        if (publicKey.toLowerCase() !== input.signerPublicKey.toLowerCase()) {
          reject('WrongSigner', `public_key: hash_to_sign is bound to the nominated key ${input.signerPublicKey}; sign with that key`);
        }
        if (Date.now() >= input.expiresAtMs) reject('IntentExpired', 'intent expired before it was signed; prepare a new one');
      },
    },
  );

  handleSigningDataRefresh(input, submit, sig, () => {
    if (submitted || submitting) reject('AlreadySigned', 'intent already signed; read the intent for its status');
    if (ended) reject('IntentClosed', `intent is ${progress.stage}; it takes no new signing data`);
  });

  const finish = (r: IntentWorkflowResult): IntentWorkflowResult => {
    ended = true;
    step(r.status === 'completed' ? 'completed' : 'failed');
    return r;
  };

  // ------------------------------------------------------------------ signature
  const signed = await waitForSignature(input, () => short.recordedSubmission({ intentId: input.intentId }), {
    signed: () => submitted !== undefined,
    submitting: () => submitting,
    adopt: (found) => {
      submitted = { status: 'submitted', ...found };
      progress.txHash = found.txHash;
    },
  });
  if (!signed) {
    // a submission in flight at the deadline decides
    await condition(() => !submitting);
    if (!submitted) {
      ended = true;
      // unless the ledger has it after all (an attempt whose answer was lost): then the cycle goes on
      const late = await short.failIntent({ intentId: input.intentId, status: 'expired', error: EXPIRED_UNSIGNED });
      if (!late?.submitted) return finish({ intentId: input.intentId, status: 'expired', error: EXPIRED_UNSIGNED });
      submitted = { status: 'submitted', ...late.submitted };
      progress.txHash = late.submitted.txHash;
    }
  }
  ended = true;
  step('submitted');

  // ------------------------------------------------------------------ the ledger executes it (threshold met)
  const followed = await followLedgerTransaction(input.intentId, localSteps);
  if (followed.state === 'failed') {
    await short.failIntent({ intentId: input.intentId, status: 'failed', error: followed.reason ?? 'the ledger did not execute the intent' });
    return finish({ intentId: input.intentId, status: 'failed', error: followed.reason });
  }

  // ------------------------------------------------------------------ a ledger-only intent: its receipt is its proof
  if (input.ledgerOnly && patched(LEDGER_ONLY_INTENT)) {
    step('recording');
    const r = await short.finalizeLedgerIntent({ intentId: input.intentId });
    return finish({ intentId: input.intentId, ...r });
  }

  // ------------------------------------------------------------------ the chain cycle: in this workflow for one chain, else one child per chain
  const single = input.chains.length === 1 && patched(INLINE_CHAIN_CYCLE);
  if (!single) step('attesting');
  const parent = workflowInfo().workflowId;
  await Promise.allSettled(
    input.chains.map(async (c) => {
      progress.chains[c.chain] = 'running';
      try {
        // the class only when the input has it: the child's input stays what older runs recorded
        const args = { intentId: input.intentId, chain: c.chain, legIds: c.legIds, ...(input.proofClass ? { proofClass: input.proofClass } : {}) };
        if (single) {
          await runChainCycle(args, { onStage: step, inline: true });
        } else {
          await executeChild(intentChainWorkflow, {
            workflowId: `${parent}-${c.chain}`,
            args: [args],
            typedSearchAttributes: [
              { key: OrgIdKey, value: input.orgId },
              { key: IdentityIdKey, value: input.identityId },
              { key: IntentIdKey, value: input.intentId },
              { key: StageKey, value: 'pending' },
            ],
          });
        }
        progress.chains[c.chain] = 'done';
      } catch (err) {
        progress.chains[c.chain] = 'failed';
        await short.failChainLegs({ intentId: input.intentId, chain: c.chain, legIds: c.legIds, error: innermostFailure(err).message });
      }
    }),
  );
  const r = await short.finalizeIntent({ intentId: input.intentId });
  return finish({ intentId: input.intentId, ...r });
}
