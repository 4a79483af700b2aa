/**
 * The signature Update of intentWorkflow against a real Temporal server, its activities stubbed: what a signature
 * sent again hears. While the first submission is still running it is "in flight" (retry), not "already signed":
 * that submission can still fail (the ledger unreachable) and a client told "already signed" would never send the
 * signature again, so the intent would wait unsigned until it expired (the cluster test's API kill found it). Once
 * the submission went through, the same signature is "already signed" also after the workflow moved on, never
 * "intent closed" (a client retrying after a killed API process lost its answer). A signature that does not verify
 * over the hash the workflow holds is refused by the submission step (InvalidSignature), and the intent takes the
 * right one after it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CycleContext } from '../../src/activities/cycle/context.js';
import { signatureSteps } from '../../src/activities/cycle/signature.js';
import { connectTemporalClient } from '../../src/temporal/client.js';
import { workflowBundle } from '../../src/temporal/worker.js';
import { intentProgressQuery, submitSignatureUpdate, type IntentWorkflowInput } from '../../src/workflows/intent.js';

const taskQueue = `sig-update-${randomUUID()}`;
let connection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let client: Awaited<ReturnType<typeof connectTemporalClient>>;

/** A promise with its resolve outside. */
function gate<T = void>() {
  let open!: (v: T) => void;
  const p = new Promise<T>((r) => (open = r));
  return { p, open };
}
const submission = gate<'fail' | 'ok'>();
const delivered = gate();
let submits = 0;

// the real step's signature check (it throws InvalidSignature before it needs anything; past it, the empty
// context it is given makes it throw a TypeError, and the stub goes on)
const realStep = signatureSteps({} as CycleContext).submitIntentSignature;

const activities = {
  async submitIntentSignature(i: { intentId: string; signature: string; publicKey?: string; hashToSign?: string }) {
    await realStep(i).catch((e: unknown) => {
      if (e instanceof ApplicationFailure) throw e;
    });
    submits++;
    if (submits === 1 && (await submission.p) === 'fail') throw ApplicationFailure.nonRetryable('ledger unreachable', 'LedgerDown');
    return { txId: 'tx-1', txHash: 'ab'.repeat(32) };
  },
  async recordedSubmission() {
    return undefined;
  },
  // as the real step: delivered once the gate opens, pending when its wait ends first
  async followIntentTransaction(i: { waitMs: number }) {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<'pending'>((r) => (timer = setTimeout(() => r('pending'), i.waitMs)));
    const state = await Promise.race([delivered.p.then(() => 'delivered' as const), waited]);
    clearTimeout(timer);
    return { state, signatures: 1 };
  },
  async finalizeIntent() {
    return { status: 'completed' };
  },
};

beforeAll(async () => {
  connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  worker = await Worker.create({
    connection,
    namespace: inject('temporalNamespace'),
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
  });
  running = worker.run();
  client = await connectTemporalClient({ address: inject('temporalAddress'), namespace: inject('temporalNamespace') });
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
});

async function rejection(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    return ((err as WorkflowUpdateFailedError).cause as ApplicationFailure).type ?? undefined;
  }
}

/** An unsigned intent's workflow over no chains, its signer's key and hash_to_sign. */
async function startIntent() {
  const secret = ed25519.utils.randomSecretKey();
  const publicKey = Buffer.from(ed25519.getPublicKey(secret)).toString('hex');
  const hash = randomBytes(32);
  const input: IntentWorkflowInput = {
    intentId: randomUUID(),
    orgId: 'org',
    identityId: 'identity',
    signerPublicKey: publicKey,
    hashToSign: hash.toString('hex'),
    expiresAtMs: Date.now() + 120_000,
    chains: [],
  };
  const handle = await client.workflow.start('intentWorkflow', { workflowId: `intent-${input.intentId}`, taskQueue, args: [input] });
  return { handle, publicKey, hash, signOver: (bytes: Uint8Array) => Buffer.from(ed25519.sign(bytes, secret)).toString('hex') };
}

describe('intentWorkflow signature Update: the same signature sent again', () => {
  it('is in flight while the first submission runs, and already signed (not closed) after it went through', async () => {
    const { handle, publicKey, signOver, hash } = await startIntent();
    const signature = signOver(hash);
    const send = () => handle.executeUpdate(submitSignatureUpdate, { args: [{ signature, publicKey }] });

    const first = rejection(send());
    for (let i = 0; submits === 0 && i < 200; i++) await new Promise((r) => setTimeout(r, 50));
    expect(submits).toBe(1);
    expect(await rejection(send())).toBe('SignatureInFlight');
    submission.open('fail');
    expect(await first).toBe('LedgerUnavailable');

    // the client that heard "in flight" sends it again: this submission goes through
    expect(await rejection(send())).toBeUndefined();
    for (let i = 0; (await handle.query(intentProgressQuery)).stage !== 'submitted' && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await handle.query(intentProgressQuery)).stage).toBe('submitted');
    expect(await rejection(send())).toBe('AlreadySigned');
    delivered.open();
    expect(await handle.result()).toMatchObject({ status: 'completed' });
  }, 120_000);

  it('a signature over other bytes is InvalidSignature from the submission step; the right one then goes through', async () => {
    const { handle, publicKey, signOver, hash } = await startIntent();
    const send = (signed: Uint8Array) => handle.executeUpdate(submitSignatureUpdate, { args: [{ signature: signOver(signed), publicKey }] });
    const before = submits;
    expect(await rejection(send(randomBytes(32)))).toBe('InvalidSignature');
    expect(submits).toBe(before);
    expect((await handle.query(intentProgressQuery)).stage).toBe('signing_required');
    expect(await rejection(send(hash))).toBeUndefined();
    expect(await handle.result()).toMatchObject({ status: 'completed' });
  }, 120_000);
});
