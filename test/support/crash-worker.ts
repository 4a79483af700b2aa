/**
 * A gateway worker process that dies at one step, for crash tests (test/transaction/resilience.test.ts): the
 * production worker's workflows and activities, configured by the environment like `npm run worker`, except that
 * the activity named by CRASH_AFTER kills this process (SIGKILL) the moment its effect is done, before its result
 * reaches Temporal (an activity's completion, or the workflow task that records a local activity's); with
 * CRASH_AFTER_CALLS=n, the moment its n-th call's effect is done (several workflows at the same step).
 */
import type { Activities } from '../../src/activities/index.js';
import { createActivities } from '../../src/activities/index.js';
import { workerActivityDeps } from '../../src/activities/worker-deps.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { createLogger } from '../../src/log.js';
import { createGatewayWorker, installTemporalRuntime } from '../../src/temporal/worker.js';

const config = loadConfig();
const logger = createLogger('error', { process: 'crash-worker' });
installTemporalRuntime(logger, { shutdownSignals: [] });
const database = await openDatabase({ databaseUrl: config.databaseUrl });
const activities: Activities = createActivities({ db: database.db, webhooks: config.webhooks, logger, ...workerActivityDeps(config) });
const point = process.env.CRASH_AFTER as keyof Activities;
const real = activities[point] as ((...a: unknown[]) => Promise<unknown>) | undefined;
if (!real) throw new Error(`CRASH_AFTER: no activity named ${point}`);
const calls = Number(process.env.CRASH_AFTER_CALLS ?? '1');
let done = 0;
Object.assign(activities, {
  [point]: async (...args: unknown[]) => {
    const r = await real(...args);
    if (++done >= calls) process.kill(process.pid, 'SIGKILL');
    return r;
  },
});
const { worker } = await createGatewayWorker({
  address: config.temporal.address,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  activities,
  maxConcurrentWebhookAttempts: config.webhooks.maxConcurrentAttempts,
  logger,
});
await worker.run();
