/**
 * Cost of the shared platform path (API-key lookup + Postgres rate-limit upsert + metrics + request log) on an
 * authenticated read, GET /v1/admin/api-keys, served over HTTP by one API process.
 * Database: BENCH_DATABASE_URL (Postgres) if set, else in-memory PGlite. Prints a table and a JSON line.
 */
import autocannon from 'autocannon';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../src/api/app.js';
import { listen } from '../src/net/server.js';
import { loadConfig } from '../src/config.js';
import { createApiKey } from '../src/db/api-keys.js';
import { openDatabase } from '../src/db/client.js';
import { createOrganization } from '../src/db/organizations.js';
import { createLogger } from '../src/log.js';

async function main() {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const config = loadConfig({ API_PORT: '0', LOG_LEVEL: 'error', RATE_LIMIT_IP_RPM: '1000000' }); // never throttles the run;
  const database = await openDatabase(databaseUrl ? { databaseUrl } : { pgliteDir: 'memory' });
  // the route measured never calls Temporal: a lazy connection that is never used
  const temporal = new Client({ connection: Connection.lazy({ address: config.temporal.address }) });
  const server = await listen(createApp({ config, database, temporal, logger: createLogger('error') }), '127.0.0.1', 0);
  const org = await createOrganization(database.db, { name: 'bench' });
  const { rawKey } = await createApiKey(database.db, { orgId: org.id, name: 'bench', isAdmin: true, rateLimitRpm: 1_000_000 });

  const cases: { name: string; path: string; headers: Record<string, string> }[] = [
    { name: 'GET /portal, no key (IP counter upsert only)', path: '/portal', headers: {} },
    { name: 'GET /v1/admin/api-keys (key lookup + counter + list)', path: '/v1/admin/api-keys', headers: { 'X-API-Key': rawKey } },
  ];
  const rows = [];
  for (const c of cases) {
    for (const connections of [1, 20]) {
      const r = await autocannon({ url: `${server.url}${c.path}`, connections, duration: 5, headers: c.headers });
      rows.push({
        case: `${c.name} [${database.driver}, ${connections} conn]`,
        requests_per_s: Math.round(r.requests.average),
        p50_ms: r.latency.p50,
        p99_ms: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors,
      });
    }
  }
  await new Promise((r) => setTimeout(r, 1000)); // let the last in-flight requests finish before closing
  console.table(rows);
  console.log(JSON.stringify({ bench: 'platform-auth', rows }));
  await server.close();
  await database.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
