/**
 * Worker bootstrap: bundles src/workflows/index.ts once and registers the activity factories' output.
 * Used by src/bin/worker.ts (production), the devnet (same process as the API) and the tests.
 */
import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type BundleOptions,
  type LogLevel as TemporalLogLevel,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { blsReady } from '../chain/bls.js';
import type { Logger } from '../log.js';
import { redactError } from '../net/redact.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/**
 * Install the Temporal Runtime once per process, routing the SDK's own log lines through our JSON logger.
 * `shutdownSignals: []` when the caller orchestrates shutdown itself (the devnet, tests).
 */
export function installTemporalRuntime(logger: Logger, opts: { shutdownSignals?: NodeJS.Signals[] } = {}): void {
  const levels: Record<TemporalLogLevel, 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error',
  };
  const sdkLog = logger.child({ component: 'temporal-sdk' });
  try {
    Runtime.install({
      logger: new DefaultLogger('INFO', ({ level, message, meta }) => sdkLog[levels[level]](message, meta)),
      shutdownSignals: opts.shutdownSignals,
    });
  } catch (err) {
    // A second install in the same process (tests) keeps the first runtime.
    if (!/already been (instantiated|installed)/.test((err as Error).message)) throw err;
  }
}

/**
 * Modules the reusable V8 context evaluates once and shares across workflow runs, instead of once per run. Only
 * pure code belongs here: the workflows' Ed25519 verification (the signature Update's validator). Evaluated per run,
 * its module set-up and the base point's precomputed table cost the workflow thread about 30 ms per intent; the only
 * state it keeps is that table, a cache whose contents never change a result.
 */
const SHARED_WORKFLOW_MODULES = ['@noble/curves/ed25519.js'];

let cachedBundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** Bundle the workflow code (≈1–2 s); cached per process. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  cachedBundle ??= bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    preloadModules: SHARED_WORKFLOW_MODULES,
    webpackConfigHook: keepNobleSideEffects,
    logger: quietBundlerLogger,
  });
  return cachedBundle;
}

/** noble declares `sideEffects: false`, so webpack would drop the preload's bare `require` of it. */
const keepNobleSideEffects: NonNullable<BundleOptions['webpackConfigHook']> = (config) => {
  const rules = [...(config.module?.rules ?? []), { test: /[\\/]@noble[\\/]/, sideEffects: true }];
  return { ...config, module: { ...config.module, rules } };
};

const noop = () => {};
const quietBundlerLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };

export interface GatewayWorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  activities: object;
  logger?: Logger;
  /** how long in-flight activities may finish on shutdown */
  shutdownGraceTime?: string;
}

export async function createGatewayWorker(opts: GatewayWorkerOptions): Promise<{ worker: Worker; connection: NativeConnection }> {
  await blsReady(); // quorum rounds verify signatures with the fast engine from the first activity on
  const connection = await NativeConnection.connect({ address: opts.address });
  try {
    const worker = await Worker.create({
      connection,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
      workflowBundle: await workflowBundle(),
      activities: opts.activities,
      // an activity's failure is kept in the workflow's history (and shown in the Temporal UI): no keys in its URLs
      interceptors: { activity: [() => ({ inbound: { execute: (input, next) => next(input).catch((err: unknown) => Promise.reject(redactError(err))) } })] },
      shutdownGraceTime: opts.shutdownGraceTime ?? '10s',
    });
    return { worker, connection };
  } catch (err) {
    await connection.close();
    throw err;
  }
}
