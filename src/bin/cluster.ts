/**
 * `npm run cluster`: the production topology on this machine from the compiled build (src/devnet/cluster.ts):
 * 2 API processes, 2 worker processes and the 7 validators as processes, sharing PostgreSQL (DATABASE_URL, or a
 * local server started here when PostgreSQL is installed), a Temporal dev server, two anvil chains and the ledger
 * simulator. Prints the URLs; Ctrl-C stops everything. State (keys, chains, ledger, logs) lives in a fresh temporary
 * directory: every start is a new network.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../config.js';
import { formatClusterSummary, startCluster } from '../devnet/cluster.js';
import { startLocalPostgres } from '../devnet/postgres.js';
import { createLogger } from '../log.js';

async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'cluster' });
  const started = Date.now();
  let databaseUrl = config.databaseUrl;
  const pg = databaseUrl ? undefined : await startLocalPostgres();
  if (!databaseUrl) {
    if (!pg) throw new ConfigError([{ variable: 'DATABASE_URL', message: 'not set and no local PostgreSQL found: the processes share one Postgres database' }]);
    databaseUrl = pg.url;
  }
  const cluster = await startCluster({
    databaseUrl,
    dataDir: mkdtempSync(join(tmpdir(), 'gw-cluster-')),
    logger,
    apiPorts: [config.api.port, config.api.port + 1],
    temporalCliPath: config.temporal.cliPath,
  }).catch(async (err) => {
    await pg?.stop();
    throw err;
  });
  process.stdout.write(`${formatClusterSummary(cluster.rows)}  (started in ${((Date.now() - started) / 1000).toFixed(1)} s)\n\n`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping cluster', { signal });
    await cluster.stop();
    await pg?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : `cluster failed to start: ${(err as Error).stack}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
