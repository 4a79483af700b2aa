/** GET /v1/health against real dependencies: healthy, then 503 naming the dependency that went down; publicly only
 * up/down (reasons logged, URL credentials masked); probe results cached for HEALTH_CACHE_MS. */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { createApp } from '../../src/api/app.js';
import { HEALTH_CACHE_MS } from '../../src/api/routes/health.js';
import { createLogger } from '../../src/log.js';
import { startAnvil, type AnvilHandle } from '../../src/devnet/anvil.js';
import { ANVIL_DEV_KEY_0 } from '../../src/devnet/contracts.js';
import { startDevnetValidators, type DevnetValidators } from '../../src/devnet/validators.js';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import { openTestDatabase, quietLogger, testConfig, testTemporalClient } from '../support/env.js';

describe('GET /v1/health', () => {
  let anvil: AnvilHandle;
  let sim: LedgerSimHandle;
  let client: Client;
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let app: ReturnType<typeof createApp>;
  const clock = { ms: Date.now() };
  /** the next request probes afresh */
  const expireCache = () => (clock.ms += HEALTH_CACHE_MS);

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    sim = await startLedgerSim();
    const config = testConfig({
      LEDGER_URL: sim.url,
      CHAINS: JSON.stringify([{ name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: anvil.rpcUrl }]),
    });
    database = await openTestDatabase('pglite');
    client = await testTemporalClient(config);
    app = createApp({ config, database, temporal: client, logger: quietLogger, now: () => clock.ms });
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
    for (const check of Object.values(body.checks)) expect(check).toEqual({ status: 'up' });
  });

  it('answers 503 naming the chain that is down', async () => {
    await anvil.stop();
    expect((await app.request('/v1/health')).status).toBe(200); // the cached round still answers
    expireCache();
    const res = await app.request('/v1/health');
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body.status).toBe('unhealthy');
    expect(body.error).toBe('Unavailable: chain:ethereum-sepolia');
    expect(body.checks.database.status).toBe('up');
  });

  it('answers 503 naming the ledger when it is down', async () => {
    await sim.stop();
    expireCache();
    const body = await (await app.request('/v1/health')).json();
    expect(body.error).toBe('Unavailable: ledger, chain:ethereum-sepolia');
    expect(body.checks.ledger.status).toBe('down');
  });

  it('answers 503 naming the database when it is gone', async () => {
    await database.cleanup();
    expireCache();
    const body = await (await app.request('/v1/health')).json();
    expect(body.error).toMatch(/database/);
    expect(body.checks.database.status).toBe('down');
  });

  it('unknown routes are a 404 without a key too, before authentication (with a key: platform-auth.test.ts)', async () => {
    const res = await app.request('/v1/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'No route for GET /v1/nope', code: 'NOT_FOUND' });
  });
});

describe('GET /v1/health: what the public sees and how often it probes', () => {
  let rpcHits = 0;
  let rpc: Server;
  let client: Client;
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let app: ReturnType<typeof createApp>;
  const lines: string[] = [];
  const clock = { ms: Date.now() };

  beforeAll(async () => {
    // a chain RPC that counts its calls and fails every one (the ledger's URL with credentials fails before sending)
    rpc = createServer((_req, res) => {
      rpcHits++;
      res.writeHead(500).end('boom');
    });
    await new Promise<void>((r) => rpc.listen(0, '127.0.0.1', r));
    const port = (rpc.address() as AddressInfo).port;
    const config = testConfig({
      LEDGER_URL: `http://operator:s3cret-pass@127.0.0.1:${port}/v3`,
      CHAINS: JSON.stringify([{ name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: `http://127.0.0.1:${port}` }]),
    });
    database = await openTestDatabase('pglite');
    client = await testTemporalClient(config);
    const logger = createLogger('warn', {}, (line) => lines.push(line));
    app = createApp({ config, database, temporal: client, logger, now: () => clock.ms });
  });
  afterAll(async () => {
    await new Promise((r) => rpc?.close(r));
    await client?.connection.close();
    await database?.cleanup();
  });

  it('shows only up/down per dependency; the reason is logged with URL credentials masked', async () => {
    const res = await app.request('/v1/health');
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(text).not.toContain('s3cret');
    expect(text).not.toContain('127.0.0.1');
    expect(JSON.parse(text)).toEqual({
      status: 'unhealthy',
      error: 'Unavailable: ledger, chain:ethereum-sepolia',
      checks: { database: { status: 'up' }, temporal: { status: 'up' }, ledger: { status: 'down' }, 'chain:ethereum-sepolia': { status: 'down' } },
    });
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'health check failed');
    expect(logged).toMatchObject({ level: 'warn', dependency: 'ledger', reason: expect.stringContaining('//***@127.0.0.1') });
    expect(lines.join('\n')).not.toContain('s3cret');
  });

  it(`probes at most once per ${HEALTH_CACHE_MS} ms, however many callers ask`, async () => {
    clock.ms += HEALTH_CACHE_MS;
    const before = rpcHits;
    const answers = await Promise.all(Array.from({ length: 20 }, () => app.request('/v1/health')));
    expect(answers.every((r) => r.status === 503)).toBe(true);
    for (let i = 0; i < 5; i++) await app.request('/v1/health');
    const oneRound = rpcHits - before;
    expect(oneRound).toBeGreaterThan(0);
    clock.ms += HEALTH_CACHE_MS - 1;
    await app.request('/v1/health');
    expect(rpcHits - before).toBe(oneRound);
    clock.ms += 1;
    await app.request('/v1/health');
    expect(rpcHits - before).toBe(2 * oneRound);
  });
});

describe('GET /v1/health: the validators and the Temporal namespace', () => {
  let anvil: AnvilHandle;
  let sim: LedgerSimHandle;
  let validators: DevnetValidators;
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  const clients: Client[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'pgw-health-'));
  const clock = { ms: Date.now() };
  const appWith = async (env: Record<string, string>) => {
    const config = testConfig({
      LEDGER_URL: sim.url,
      CHAINS: JSON.stringify([{ name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: anvil.rpcUrl }]),
      VALIDATOR_URLS: validators.validators.map((v) => v.url).join(','),
      ...env,
    });
    const client = await testTemporalClient(config);
    clients.push(client);
    return createApp({ config, database, temporal: client, logger: quietLogger, now: () => clock.ms });
  };

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    sim = await startLedgerSim();
    validators = await startDevnetValidators({
      dataDir,
      ledgerUrl: sim.url,
      chains: [{ name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: anvil.rpcUrl, confirmations: 1 }],
      deployerKey: ANVIL_DEV_KEY_0,
    });
    database = await openTestDatabase('pglite');
  });
  afterAll(async () => {
    for (const c of clients) await c.connection.close();
    await validators?.stop();
    await anvil?.stop();
    await sim?.stop();
    await database?.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('validators are up while 2/3 of them answer, down below that', async () => {
    const app = await appWith({});
    const healthy = await (await app.request('/v1/health')).json();
    expect(healthy.status).toBe('healthy');
    expect(healthy.checks.validators).toEqual({ status: 'up' });
    await validators.stopValidator(0);
    await validators.stopValidator(1);
    clock.ms += HEALTH_CACHE_MS;
    expect((await app.request('/v1/health')).status).toBe(200); // 5 of 7 still make a quorum
    await validators.stopValidator(2);
    clock.ms += HEALTH_CACHE_MS;
    const res = await app.request('/v1/health');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'Unavailable: validators', checks: { validators: { status: 'down' }, ledger: { status: 'up' } } });
    for (const i of [0, 1, 2]) await validators.startValidator(i);
  });

  it('Temporal is down when its frontend answers but does not know the namespace', async () => {
    const app = await appWith({ TEMPORAL_NAMESPACE: `no-such-namespace-${Date.now()}` });
    const res = await app.request('/v1/health');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'Unavailable: temporal', checks: { temporal: { status: 'down' }, validators: { status: 'up' } } });
  });
});
