/**
 * A worker process killed (SIGKILL) right after each batching step's effect, before Temporal hears of it: joining
 * the batcher, the batch's attestation round, createAnchor and executeComprehensiveProof of the batch. The next
 * worker process takes each step over; the batch's intents (two identities) complete with one anchor, one proof
 * of it and each leg executed once. Needs PostgreSQL (the killed workers and the test share the database).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { proofAnchorAbi, testTargetAbi } from '../../src/chain/abi/index.js';
import { accountAbiWithAnchorErrors } from '../../src/chain/account.js';
import {
  api,
  arg,
  createCycleIdentity,
  deployTestTarget,
  prepare,
  recordLeg,
  SEPOLIA,
  sign,
  startCycleBench,
  startCycleWorker,
  waitIntent,
  type CycleBench,
} from '../transaction/support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const hasPostgres = !!inject('postgresUrl');
const POINTS = ['joinBatch', 'attestBatch', 'createBatchAnchor', 'proveBatchAnchor'] as const;

let b: CycleBench;
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (!hasPostgres) return;
  process.env.BATCH_WINDOW_MS = '3000';
  b = await startCycleBench();
}, 300_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  delete process.env.BATCH_WINDOW_MS;
  await b?.stop();
});

/**
 * A worker process (test/support/crash-worker.ts) that kills itself after `point`'s effect (`calls` times: a step
 * every member takes); resolves once it did.
 */
async function crashAt(point: string, calls = 1): Promise<void> {
  const c = b.app.config;
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/crash-worker.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...b.dn.env,
      DATABASE_URL: b.app.database.url!,
      TEMPORAL_ADDRESS: c.temporal.address,
      TEMPORAL_NAMESPACE: c.temporal.namespace,
      TEMPORAL_TASK_QUEUE: c.temporal.taskQueue,
      LOG_LEVEL: 'error',
      CRASH_AFTER: point,
      CRASH_AFTER_CALLS: String(calls),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<NodeJS.Signals | number | null>((r) => child.once('exit', (code, signal) => r(signal ?? code)));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 120_000)));
  const how = await Promise.race([exit, timeout]).finally(() => clearTimeout(timer));
  if (how === 'timeout') {
    child.kill('SIGKILL');
    throw new Error(`never reached ${point}:\n${out.slice(-3000)}`);
  }
  if (how !== 'SIGKILL') throw new Error(`the worker exited (${how}) before ${point}:\n${out.slice(-3000)}`);
}

describe.skipIf(!hasPostgres)('worker killed at every batching step', () => {
  it('each step survives a worker death; one batch anchor, each leg executed once', { timeout: 900_000 }, async () => {
    const second = await createCycleIdentity(b);
    const who = [b, { ...b, identity: second }];
    const targets = [await deployTestTarget(b.wallets[SEPOLIA.name]!), await deployTestTarget(b.wallets[SEPOLIA.name]!)];
    const w = b.wallets[SEPOLIA.name]!;
    const start = await w.public.getBlockNumber();
    await b.worker!.stop();
    b.worker = undefined;
    const prepared = [];
    for (const [k, x] of who.entries())
      prepared.push(await prepare(x, [recordLeg(x, SEPOLIA, arg(`crash-batch-${k}`), {}, '0', targets[k])], { proof_class: 'batched' }));
    const submissions = prepared.map((p, k) =>
      api(who[k]!, 'POST', `/v1/transaction/${p.intent_id}/signature`, {
        signature: sign(p.signing_data.hash_to_sign, who[k]!.identity.key.secretKey),
        public_key: who[k]!.identity.key.publicKey,
      }),
    );
    // both members join before the first worker dies, so they share the batch whatever the order of their joins
    for (const point of POINTS) await crashAt(point, point === 'joinBatch' ? who.length : 1);
    b.worker = await startCycleWorker(b.app);
    for (const s of await Promise.all(submissions)) expect(s.status).toBe(200);
    const done = await Promise.all(prepared.map((p) => waitIntent(b, p.intent_id, undefined, 300_000)));
    for (const d of done) expect(d.status, JSON.stringify(d.error_message)).toBe('completed');

    // one anchor holds both intents' legs, created and proven once; each leg executed once
    const anchorId = done[0].legs[0].anchor_id;
    expect(done[1].legs[0].anchor_id).toBe(anchorId);
    const proofAnchor = b.dn.validators!.contracts.proofAnchor;
    for (const eventName of ['AnchorCreated', 'AnchorProven'] as const) {
      const logs = await w.public.getContractEvents({ address: proofAnchor, abi: proofAnchorAbi, eventName, fromBlock: start });
      expect(
        logs.map((l) => l.args.anchorId),
        eventName,
      ).toEqual([anchorId]);
    }
    for (const [k, x] of who.entries()) {
      const executed = await w.public.getContractEvents({
        address: x.identity.account,
        abi: accountAbiWithAnchorErrors,
        eventName: 'Executed',
        args: { anchorId },
        fromBlock: start,
      });
      expect(executed).toHaveLength(1);
      expect(await w.public.readContract({ address: targets[k]!, abi: testTargetAbi, functionName: 'calls' })).toBe(1n);
    }
  });
});
