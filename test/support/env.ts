/** Shared test wiring: the run's Temporal server and Postgres (from global setup), databases, workers, the app. */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import type { Client } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { createActivities, type Activities, type ActivityDeps } from '../../src/activities/index.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { createLogger, type Logger } from '../../src/log.js';
import { connectTemporalClient } from '../../src/temporal/client.js';
import { createGatewayWorker, installTemporalRuntime } from '../../src/temporal/worker.js';
import { createScratchDatabase } from '../../src/devnet/postgres.js';

export type DbKind = 'pglite' | 'postgres';

/** The database kinds this run can test: PGlite always, Postgres when the setup found one. */
export function dbKinds(): DbKind[] {
  return inject('postgresUrl') ? ['pglite', 'postgres'] : ['pglite'];
}

/**
 * A fresh database: PGlite in memory, or a scratch database on the run's Postgres (or on `serverUrl`), whose `url`
 * other processes (a worker process) can open.
 */
export async function openTestDatabase(
  kind: DbKind,
  serverUrl: string = inject('postgresUrl'),
): Promise<Database & { url?: string; cleanup(): Promise<void> }> {
  if (kind === 'pglite') {
    const database = await openDatabase({ pgliteDir: 'memory' });
    return { ...database, cleanup: () => database.close() };
  }
  const scratch = await createScratchDatabase(serverUrl);
  const database = await openDatabase({ databaseUrl: scratch.url });
  return {
    ...database,
    url: scratch.url,
    cleanup: async () => {
      await database.close();
      await scratch.drop();
    },
  };
}

export const quietLogger: Logger = createLogger('error');

/** Config for tests: the run's Temporal server and a task queue of the caller's own. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    API_PORT: '0',
    LOG_LEVEL: 'error',
    // test receivers listen on loopback; tests of the URL rules pass 'false'
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    ...env,
  });
}

/** The gateway's workers on the config's task queue (and its webhook queue); `extra` adds activity dependencies (ledger, chains, sponsor, ...). */
export async function startTestWorker(
  config: Config,
  database: Pick<Database, 'db'>,
  extra: Partial<ActivityDeps> = {},
  opts: { shutdownGraceTime?: Duration; wrap?: (activities: Activities) => Activities } = {},
) {
  installTemporalRuntime(quietLogger, { shutdownSignals: [] });
  const activities = createActivities({ db: database.db, webhooks: config.webhooks, ...extra });
  const { worker, connection } = await createGatewayWorker({
    address: config.temporal.address,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    activities: opts.wrap ? opts.wrap(activities) : activities,
    maxConcurrentWebhookAttempts: config.webhooks.maxConcurrentAttempts,
    shutdownGraceTime: opts.shutdownGraceTime,
  });
  const running = worker.run();
  return {
    worker,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

export function testTemporalClient(config: Config): Promise<Client> {
  return connectTemporalClient(config.temporal);
}
