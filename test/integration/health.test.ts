/** GET /v1/health against real dependencies: healthy, then 503 naming the dependency that went down. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { createApp } from '../../src/api/app.js';
import { startAnvil, type AnvilHandle } from '../../src/devnet/anvil.js';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import { openTestDatabase, quietLogger, testConfig, testTemporalClient } from '../support/env.js';

describe('GET /v1/health', () => {
  let anvil: AnvilHandle;
  let sim: LedgerSimHandle;
  let client: Client;
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    sim = await startLedgerSim();
    const config = testConfig({
      LEDGER_URL: sim.url,
      CHAINS: JSON.stringify([{ name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: anvil.rpcUrl }]),
    });
    database = await openTestDatabase('pglite');
    client = await testTemporalClient(config);
    app = createApp({ config, database, temporal: client, logger: quietLogger });
  });
  afterAll(async () => {
    await anvil?.stop();
    await sim?.stop();
    await client?.connection.close();
  });

  it('answers healthy without an API key, with a request id', async () => {
    const res = await app.request('/v1/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const body = await res.json();
    expect(body.status).toBe('healthy');
    expect(Object.keys(body.checks).sort()).toEqual(['chain:ethereum-sepolia', 'database', 'ledger', 'temporal']);
    for (const check of Object.values(body.checks) as { status: string }[]) expect(check.status).toBe('up');
  });

  it('answers 503 naming the chain that is down', async () => {
    await anvil.stop();
    const res = await app.request('/v1/health');
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body.status).toBe('unhealthy');
    expect(body.error).toBe('Unavailable: chain:ethereum-sepolia');
    expect(body.checks.database.status).toBe('up');
  });

  it('answers 503 naming the ledger when it is down', async () => {
    await sim.stop();
    const body = await (await app.request('/v1/health')).json();
    expect(body.error).toBe('Unavailable: ledger, chain:ethereum-sepolia');
    expect(body.checks.ledger.status).toBe('down');
  });

  it('answers 503 naming the database when it is gone', async () => {
    await database.cleanup();
    const body = await (await app.request('/v1/health')).json();
    expect(body.error).toMatch(/database/);
    expect(body.checks.database.status).toBe('down');
  });

  it('unknown routes need a key like every non-public path (the 404 with a key: platform-auth.test.ts)', async () => {
    const res = await app.request('/v1/nope');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Missing X-API-Key header', code: 'MISSING_API_KEY' });
  });
});
