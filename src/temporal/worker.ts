/**
 * Worker bootstrap: the workflow bundle (src/workflows/index.ts) and the activity factories' output.
 * Used by src/bin/worker.ts (production), the devnet (same process as the API) and the tests; the first two build
 * it from config with createConfiguredWorker. Run from source (tsx, tests) it bundles the workflows once per process;
 * the compiled build (dist/) loads the bundle `npm run build` wrote next to it instead.
 */
import { existsSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import type { Duration } from '@temporalio/common';
import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  DefaultLogger,
  makeTelemetryFilterString,
  NativeConnection,
  Runtime,
  Worker,
  type ActivityInboundCallsInterceptor,
  type LogLevel as TemporalLogLevel,
  type State as WorkerState,
  type WorkflowBundleOption,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import type { WebhookActivities } from '../activities/webhooks.js';
import { workerActivityDeps } from '../activities/worker-deps.js';
import { blsReady } from '../chain/bls.js';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../log.js';
import { redactError } from '../net/redact.js';
import { webhookTaskQueue } from '../workflows/webhook-delivery.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** The compiled build (dist/src/temporal/worker.js) runs JavaScript: its workflows were bundled ahead of time. */
const RUNNING_COMPILED = import.meta.url.endsWith('.js');

/** The bundle `npm run build` writes: `dist/workflow-bundle.js`, two levels above this module in dist/. */
export const PREBUILT_BUNDLE_FILE = 'workflow-bundle.js';
const PREBUILT_BUNDLE_PATH = fileURLToPath(new URL(`../../${PREBUILT_BUNDLE_FILE}`, import.meta.url));

/**
 * Core's warning that a workflow task ran longer than 5 s. A proof cycle runs its steps as local activities, so a
 * quorum round that waits for the chain's confirmations holds its workflow task open (extended every 8 s) by design:
 * the warning would repeat every 8 s for every such round. Logged at debug.
 */
const LONG_WORKFLOW_TASK = /^\[TMPRL1104\]/;

const LEVELS: Record<TemporalLogLevel, 'debug' | 'info' | 'warn' | 'error'> = { TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };

/** The level of our logger an SDK log line is written at. */
export function sdkLogLevel(level: TemporalLogLevel, message: string): 'debug' | 'info' | 'warn' | 'error' {
  return level === 'WARN' && LONG_WORKFLOW_TASK.test(message) ? 'debug' : LEVELS[level];
}

/**
 * Install the Temporal Runtime once per process, routing the SDK's own log lines, the native core's included,
 * through our JSON logger. `shutdownSignals: []` when the caller orchestrates shutdown itself (the devnet, tests).
 */
export function installTemporalRuntime(logger: Logger, opts: { shutdownSignals?: NodeJS.Signals[] } = {}): void {
  const sdkLog = logger.child({ component: 'temporal-sdk' });
  try {
    Runtime.install({
      logger: new DefaultLogger('INFO', ({ level, message, meta }) => sdkLog[sdkLogLevel(level, message)](message, meta)),
      // core's default filter, its lines forwarded to the logger above instead of printed to stderr
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }), forward: {} } },
      shutdownSignals: opts.shutdownSignals,
    });
  } catch (err) {
    // A second install in the same process (tests) keeps the first runtime.
    if (!/already been (instantiated|installed)/.test((err as Error).message)) throw err;
  }
}

let cachedBundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** Bundle the workflow code (≈1–2 s); cached per process. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  cachedBundle ??= bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: quietBundlerLogger,
  });
  return cachedBundle;
}

/** What a worker runs: the prebuilt bundle in the compiled build, else a bundle made now (cached per process). */
async function workerWorkflowBundle(): Promise<WorkflowBundleOption> {
  if (!RUNNING_COMPILED) return workflowBundle();
  if (!existsSync(PREBUILT_BUNDLE_PATH)) throw new Error(`${PREBUILT_BUNDLE_PATH} is missing: run npm run build (it bundles the workflows)`);
  return { codePath: PREBUILT_BUNDLE_PATH };
}

const noop = () => {};
/** The bundler's logger: errors only. */
export const quietBundlerLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };

export interface GatewayWorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  /** every activity (createActivities); `attemptDelivery` is also served on the webhook task queue */
  activities: Pick<WebhookActivities, 'attemptDelivery'>;
  /** webhook attempts run at once (config.webhooks.maxConcurrentAttempts): the webhook worker's activity slots */
  maxConcurrentWebhookAttempts: number;
  logger?: Logger;
  /** how long in-flight activities may finish on shutdown */
  shutdownGraceTime?: Duration;
}

/**
 * The gateway's two workers in one process, on one connection: `main` serves every workflow and activity on the
 * task queue; `webhooks` serves only the webhook attempts on webhookTaskQueue(taskQueue), at most
 * `maxConcurrentWebhookAttempts` at once, so a burst of posts to slow receivers waits for its own slots instead of
 * taking the ones the proof cycle's activities need. They run, stop and fail together.
 */
export class GatewayWorker {
  constructor(
    readonly main: Worker,
    readonly webhooks: Worker,
  ) {}

  /**
   * Run both until both have stopped. When either stops (shutdown, a shutdown signal, a fatal error) the other is
   * shut down too; rejects with the first failure once both have stopped.
   */
  async run(): Promise<void> {
    const runs = [this.main, this.webhooks].map((w) => w.run().finally(() => this.shutdown()));
    const failed = (await Promise.allSettled(runs)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Start shutting down whichever of the two is running (each drains for its shutdownGraceTime); run() then resolves. */
  shutdown(): void {
    for (const w of [this.main, this.webhooks]) if (w.getState() === 'RUNNING') w.shutdown();
  }

  /** `RUNNING` while either worker runs, else the main worker's state. */
  getState(): WorkerState {
    return this.main.getState() === 'RUNNING' || this.webhooks.getState() === 'RUNNING' ? 'RUNNING' : this.main.getState();
  }
}

/**
 * How many workflows the worker keeps in its sticky cache. Left to the SDK the cache is sized from the V8 heap limit
 * (about 2,300 on a 4 GiB heap), so it holds every open intent — and an intent waits for its signature for up to an
 * hour with nothing to do — at about 1 MiB each: 400 open intents made the worker 550–700 MB. A workflow evicted
 * from the cache is replayed from its (short) history when its next task comes, which costs milliseconds; so the
 * cache only needs the workflows that are making progress, and how many of those a worker can move scales with its
 * cores: 100 per core (at least 100), and never more than a quarter of the machine's memory at 1 MiB each.
 */
export function workflowCacheSize(cores = availableParallelism(), memoryBytes = totalmem()): number {
  return Math.max(2, Math.min(Math.max(100, 100 * cores), Math.floor(memoryBytes / 4 / 2 ** 20)));
}

/**
 * How many workflows the worker moves at once: as many as it caches. A workflow task holds one of the worker's
 * workflow-task slots until it completes, its local activities included, and a proof cycle runs its steps as local
 * activities in one workflow task, so each cycle in progress holds a slot for seconds. The SDK's default of 40 slots
 * (the pollers waiting for tasks hold some of them) would let a worker run about 30 cycles at once whatever its
 * cores, with every other workflow task (a batch, the batcher, the next intent's signature) waiting behind them.
 * The local-activity slots match: a cycle runs one step at a time (an intent's legs observe side by side; steps
 * beyond the slots wait their turn).
 */
export function workflowCapacity(cores = availableParallelism(), memoryBytes = totalmem()) {
  const n = workflowCacheSize(cores, memoryBytes);
  return { maxCachedWorkflows: n, maxConcurrentWorkflowTaskExecutions: n, maxConcurrentLocalActivityExecutions: n };
}

// an activity's failure is kept in the workflow's history (and shown in the Temporal UI): no keys in its URLs
const redactFailures = (): { inbound: ActivityInboundCallsInterceptor } => ({
  inbound: { execute: (input, next) => next(input).catch((err: unknown) => Promise.reject(redactError(err))) },
});

export async function createGatewayWorker(opts: GatewayWorkerOptions): Promise<{ worker: GatewayWorker; connection: NativeConnection }> {
  await blsReady(); // quorum rounds verify signatures with the fast engine from the first activity on
  const connection = await NativeConnection.connect({ address: opts.address });
  const shutdownGraceTime = opts.shutdownGraceTime ?? '10s';
  let main: Worker | undefined;
  try {
    main = await Worker.create({
      connection,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
      workflowBundle: await workerWorkflowBundle(),
      // attemptDelivery stays registered here for attempts scheduled on this queue before attempts had their own
      activities: opts.activities,
      interceptors: { activity: [redactFailures] },
      ...workflowCapacity(),
      shutdownGraceTime,
    });
    const webhooks = await Worker.create({
      connection,
      namespace: opts.namespace,
      taskQueue: webhookTaskQueue(opts.taskQueue),
      activities: { attemptDelivery: opts.activities.attemptDelivery },
      maxConcurrentActivityTaskExecutions: opts.maxConcurrentWebhookAttempts,
      interceptors: { activity: [redactFailures] },
      shutdownGraceTime,
    });
    return { worker: new GatewayWorker(main, webhooks), connection };
  } catch (err) {
    // a worker holds the connection until it has run and stopped: let the main one go before closing
    if (main) await main.runUntil(Promise.resolve()).catch(() => {});
    await connection.close();
    throw err;
  }
}

/**
 * The gateway's worker as configured: every activity built over `db` from config (ledger, sponsor, chains, relayer,
 * validators, webhook settings), on the configured Temporal namespace and task queue.
 */
export function createConfiguredWorker(
  config: Config,
  opts: { db: Db; logger?: Logger; shutdownGraceTime?: Duration },
): Promise<{ worker: GatewayWorker; connection: NativeConnection }> {
  return createGatewayWorker({
    address: config.temporal.address,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    activities: createActivities({ db: opts.db, webhooks: config.webhooks, logger: opts.logger, ...workerActivityDeps(config) }),
    maxConcurrentWebhookAttempts: config.webhooks.maxConcurrentAttempts,
    logger: opts.logger,
    shutdownGraceTime: opts.shutdownGraceTime,
  });
}
