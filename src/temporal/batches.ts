/** Client-side handle on the per-chain batcher workflow (the joinBatch activity of a batched intent's chain cycle). */
import type { Client } from '@temporalio/client';
import { type BatcherInput, batcherWorkflow, joinBatchSignal } from '../workflows/batch.js';

type BatchJoin = NonNullable<BatcherInput['waiting']>[number];

/** Hands a member to its chain's batcher, starting the batcher when none runs. */
export async function joinBatcher(client: Client, taskQueue: string, workflowId: string, input: BatcherInput, join: BatchJoin): Promise<void> {
  await client.workflow.signalWithStart(batcherWorkflow, {
    workflowId,
    taskQueue,
    args: [input],
    signal: joinBatchSignal,
    signalArgs: [join],
  });
}
