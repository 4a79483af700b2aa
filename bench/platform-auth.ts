/**
 * Cost of the shared platform path (API-key lookup + Postgres rate-limit upsert + metrics + request log) on an
 * authenticated read, GET /v1/admin/api-keys, served over HTTP by one API process.
 * Database: BENCH_DATABASE_URL (Postgres) if set, else in-memory PGlite. Prints a table and a JSON line.
 */
import autocannon from 'autocannon';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../src/api/app.js';
import { listen } from '../src/api/server.js';
import { loadConfig } from '../src/config.js';
import { createApiKey } from '../src/db/api-keys.js';
import { openDatabase } from '../src/db/client.js';
import { createOrganization } from '../src/db/organizations.js';
import { createLogger } from '../src/log.js';

async function main() {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const config = loadConfig({ API_PORT: '0', LOG_LEVEL: 'error' });
  const database = await openDatabase(databaseUrl ? { databaseUrl } : { pgliteDir: 'memory' });
  // the route measured never calls Temporal: a lazy connection that is never used
  const temporal = new Client({ connection: Connection.lazy({ address: config.temporal.address }) });
  const server = await listen(createApp({ config, database, temporal, logger: createLogger('error') }), '127.0.0.1', 0);
  const org = await createOrganization(database.db, { name: 'bench' });
  const { rawKey } = await createApiKey(database.db, { orgId: org.id, name: 'bench', isAdmin: true, rateLimitRpm: 10_000_000 });

  const run = (path: string, headers: Record<string, string>) =>
    autocannon({ url: `${server.url}${path}`, connections: 20, duration: 8, headers });
  const authed = await run('/v1/admin/api-keys', { 'X-API-Key': rawKey });
  const rows = [
    {
      case: `GET /v1/admin/api-keys (${database.driver})`,
      requests_per_s: Math.round(authed.requests.average),
      p50_ms: authed.latency.p50,
      p99_ms: authed.latency.p99,
      non2xx: authed.non2xx,
      errors: authed.errors,
    },
  ];
  console.table(rows);
  console.log(JSON.stringify({ bench: 'platform-auth', rows }));
  await server.close();
  await database.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
