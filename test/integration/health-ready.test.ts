/** GET /v1/health/ready: public readiness, 200 while the database and Temporal answer, else 503 naming which. */
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app.js';
import { HEALTH_CACHE_MS } from '../../src/api/routes/health.js';
import { openTestDatabase, quietLogger, testConfig, testTemporalClient } from '../support/env.js';

describe('GET /v1/health/ready', () => {
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  const clients: Client[] = [];
  const clock = { ms: Date.now() };
  const appWith = async (env: Record<string, string> = {}) => {
    // the ledger and the chain point nowhere: readiness does not depend on them
    const config = testConfig({
      LEDGER_URL: 'http://127.0.0.1:9/v3',
      CHAINS: JSON.stringify([{ name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: 'http://127.0.0.1:9' }]),
      ...env,
    });
    const client = await testTemporalClient(config);
    clients.push(client);
    return createApp({ config, database, temporal: client, logger: quietLogger, now: () => clock.ms });
  };
  beforeAll(async () => {
    database = await openTestDatabase('pglite');
  });
  afterAll(async () => {
    for (const c of clients) await c.connection.close();
    await database?.cleanup().catch(() => {});
  });

  it('is ready while the database and Temporal answer, whatever the ledger and chains do; no key needed', async () => {
    const app = await appWith();
    const res = await app.request('/v1/health/ready');
    expect(res.headers.get('x-ratelimit-limit')).toBeTruthy();
    expect(await res.json()).toEqual({ status: 'ready', checks: { database: { status: 'up' }, temporal: { status: 'up' } } });
    expect(res.status).toBe(200);
    expect((await app.request('/v1/health')).status).toBe(503); // the full health check sees the ledger down
  });

  it('is not ready when Temporal does not know the namespace', async () => {
    const app = await appWith({ TEMPORAL_NAMESPACE: `no-such-namespace-${Date.now()}` });
    const res = await app.request('/v1/health/ready');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: 'not_ready',
      error: 'Unavailable: temporal',
      checks: { database: { status: 'up' }, temporal: { status: 'down' } },
    });
  });

  it('is not ready once the database is gone (after the cached round)', async () => {
    const app = await appWith();
    expect((await app.request('/v1/health/ready')).status).toBe(200);
    await database.cleanup();
    expect((await app.request('/v1/health/ready')).status).toBe(200); // the cached round still answers
    clock.ms += HEALTH_CACHE_MS;
    const res = await app.request('/v1/health/ready');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'not_ready', error: 'Unavailable: database', checks: { database: { status: 'down' } } });
  });
});
