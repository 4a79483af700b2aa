/** Production API process: one Temporal client, one database pool, no state of its own (scale out freely). */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createApp } from '../api/app.js';
import { listen } from '../net/server.js';
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/client.js';
import { createLogger } from '../log.js';
import { apiLedgerClient } from '../services/deps.js';
import { connectTemporalClient } from '../temporal/client.js';

async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'api' });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const temporal = await connectTemporalClient(config.temporal);
  boundHeapGrowth(config.api.heapGrowingPercent);
  const server = await listen(createApp({ config, database, temporal, ledger: apiLedgerClient(config), logger }), config.api.host, config.api.port);
  logger.info('api listening', {
    url: server.url,
    temporal: config.temporal.address,
    ...(config.temporal.uiUrl ? { temporal_ui: config.temporal.uiUrl } : {}),
  });
  // SIGTERM/SIGINT: stop accepting, let requests in flight answer (at most SHUTDOWN_GRACE_MS, then their
  // connections are cut), and only then close Temporal and the database those requests use.
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info('api shutting down', { signal, grace_ms: config.shutdownGraceMs });
    let code = 0;
    try {
      await server.close({ graceMs: config.shutdownGraceMs });
      await temporal.connection.close();
      await database.close();
    } catch (err) {
      logger.error('api shutdown failed', { error: err });
      code = 1;
    }
    process.exit(code);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/**
 * Requests leave short-lived garbage that outlives a scavenge or two (a request waits on Postgres and the ledger),
 * so it reaches the old space, which V8 lets grow to a multiple of the live heap before a full GC: the API's
 * resident memory under load would be about three times what it holds. A fixed growth factor collects sooner at
 * a small CPU cost. 0 leaves V8's heuristics (and any --heap-growing-percent given to node) alone.
 */
function boundHeapGrowth(percent: number): void {
  if (percent <= 0) return;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  // V8 sets the old space's limit from the factor only at a full GC; the first one would come late (its initial
  // limit is a fraction of the maximum heap), so one is run now, with the modules loaded, to set it
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  setFlagsFromString('--no-expose-gc');
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : `api failed: ${(err as Error).stack}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
