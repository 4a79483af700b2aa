/**
 * Production worker process (run N replicas): all workflows and activities on one task queue, and the webhook
 * attempts on that queue's `-webhooks` queue with their own bounded slots (src/temporal/worker.ts).
 */
import { assertWorkerDependencies, ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/client.js';
import { gatewayKeyFromSeed } from '../protocol/validator-auth.js';
import { createLogger } from '../log.js';
import { connectTemporalClient } from '../temporal/client.js';
import { ensureSchedules } from '../temporal/schedules.js';
import { createConfiguredWorker, installTemporalRuntime } from '../temporal/worker.js';
import { webhookTaskQueue } from '../workflows/webhook-delivery.js';

async function main() {
  const config = loadConfig();
  // every workflow shares one task queue: a worker missing a dependency would take work it can only fail at
  assertWorkerDependencies(config);
  const logger = createLogger(config.logLevel, { process: 'worker' });
  // Default shutdown signals: SIGINT/SIGTERM drain the worker, then run() resolves.
  installTemporalRuntime(logger);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const client = await connectTemporalClient(config.temporal);
  await ensureSchedules(client, config.temporal.taskQueue, {
    pendingScanIntervalSeconds: config.pendingScanIntervalSeconds,
    log: (msg, fields) => logger.info(msg, fields),
  });
  await client.connection.close();
  const { worker, connection } = await createConfiguredWorker(config, { db: database.db, logger, shutdownGraceTime: `${config.shutdownGraceMs}ms` });
  logger.info('worker running', {
    task_queue: config.temporal.taskQueue,
    webhook_task_queue: webhookTaskQueue(config.temporal.taskQueue),
    webhook_max_concurrent_attempts: config.webhooks.maxConcurrentAttempts,
    namespace: config.temporal.namespace,
    // the public half, for the validators' TRUSTED_GATEWAY_KEYS
    validator_client_public_key: gatewayKeyFromSeed(config.validatorClientSeed!).publicKey,
    ...(config.temporal.uiUrl ? { temporal_ui: config.temporal.uiUrl } : {}),
  });
  await worker.run();
  await connection.close();
  await database.close();
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : `worker failed: ${(err as Error).stack}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
