/**
 * A workflow task holds a workflow-task slot of its worker until it completes, its local activities included, and a
 * proof cycle runs its steps as local activities in one workflow task. The gateway's worker takes as many workflow
 * tasks (and local activities) at once as it caches workflows; with the SDK's defaults (the control case) it held
 * fewer than 40 cycles in progress whatever its size (31 here: the 40 slots include those the pollers hold).
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createGatewayWorker, installTemporalRuntime, quietBundlerLogger, workflowCapacity } from '../../src/temporal/worker.js';
import { quietLogger } from '../support/env.js';
import type { HoldActivities } from '../support/capacity-workflow.js';

const GiB = 2 ** 30;
const address = inject('temporalAddress');
const namespace = inject('temporalNamespace');
let bundle: WorkflowBundleWithSourceMap;
let connection: NativeConnection;
let clientConnection: Connection;
let client: Client;

beforeAll(async () => {
  installTemporalRuntime(quietLogger, { shutdownSignals: [] });
  bundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../support/capacity-workflow.ts', import.meta.url)),
    logger: quietBundlerLogger,
  });
  connection = await NativeConnection.connect({ address });
  clientConnection = await Connection.connect({ address });
  client = new Client({ connection: clientConnection, namespace });
}, 120_000);

afterAll(async () => {
  await clientConnection?.close();
  await connection?.close();
});

/**
 * Starts `n` workflows whose local activities all wait until `n` of them run at once, or until `settleMs` has passed
 * with no new one starting; answers the most that ran at once.
 */
async function mostAtOnce(n: number, options: Partial<WorkerOptions>, settleMs = 2_000): Promise<number> {
  const taskQueue = `capacity-${randomUUID()}`;
  let running = 0;
  let most = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let quiet: NodeJS.Timeout | undefined;
  const activities: HoldActivities = {
    async hold() {
      most = Math.max(most, ++running);
      clearTimeout(quiet);
      if (running >= n) release();
      else quiet = setTimeout(release, settleMs);
      await released;
      running--;
    },
  };
  const worker = await Worker.create({ connection, namespace, taskQueue, workflowBundle: bundle, activities, ...options });
  return worker.runUntil(async () => {
    const handles = await Promise.all(
      Array.from({ length: n }, (_, i) => client.workflow.start('holdWorkflow', { taskQueue, workflowId: `${taskQueue}-${i}` })),
    );
    await Promise.all(handles.map((h) => h.result()));
    return most;
  });
}

describe('the worker takes as many workflows at once as it caches', () => {
  it('60 cycles in progress at once with the gateway worker capacity', async () => {
    const capacity = workflowCapacity(2, 24 * GiB);
    expect(capacity).toEqual({ maxCachedWorkflows: 200, maxConcurrentWorkflowTaskExecutions: 200, maxConcurrentLocalActivityExecutions: 200 });
    expect(await mostAtOnce(60, capacity)).toBe(60);
  }, 60_000);

  it('control: at most 40 with the SDK defaults (40 slots, some of them held by the pollers waiting for tasks)', async () => {
    expect(await mostAtOnce(60, { maxCachedWorkflows: 200 })).toBeLessThanOrEqual(40);
  }, 60_000);

  it("the gateway's worker is created with that capacity", async () => {
    const { worker, connection: own } = await createGatewayWorker({
      address,
      namespace,
      taskQueue: `capacity-${randomUUID()}`,
      activities: { attemptDelivery: async () => ({}) as never },
      maxConcurrentWebhookAttempts: 1,
    });
    try {
      const { maxCachedWorkflows, maxConcurrentWorkflowTaskExecutions, maxConcurrentLocalActivityExecutions } = workflowCapacity();
      const { options } = worker.main;
      expect(options.maxCachedWorkflows).toBe(maxCachedWorkflows);
      expect(options.tuner.workflowTaskSlotSupplier).toMatchObject({ type: 'fixed-size', numSlots: maxConcurrentWorkflowTaskExecutions });
      expect(options.tuner.localActivityTaskSlotSupplier).toMatchObject({ type: 'fixed-size', numSlots: maxConcurrentLocalActivityExecutions });
    } finally {
      await Promise.all([worker.main, worker.webhooks].map((w) => w.runUntil(Promise.resolve())));
      await own.close();
    }
  }, 120_000);
});
