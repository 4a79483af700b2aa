/**
 * Keys in URLs do not leave the process. RPC providers put their key in the URL's path or query and a LEDGER_URL may
 * hold user:password@; viem's errors quote the whole RPC URL and the ledger client's quote the ledger's. They used to
 * reach the worker's log lines (the Temporal SDK logs a failed activity's error) and the API's answers
 * (GET /v1/portfolio credit_error, GET /v1/governance/{id} ledger_error) as they were.
 */
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerApiError } from '../../src/services/signing.js';
import type { ApiError } from '../../src/api/errors.js';
import { createChainClients } from '../../src/chain/clients.js';
import { loadConfig } from '../../src/config.js';
import { insertGovernanceOp } from '../../src/db/governance.js';
import { identities } from '../../src/db/schema.js';
import { LedgerTransportError } from '../../src/ledger/errors.js';
import { createLogger } from '../../src/log.js';
import { redactUrls, registerSecretUrls } from '../../src/net/redact.js';
import { proofStep, ValidatorRefusal } from '../../src/validator/refusal.js';
import { maintenanceWorkflow } from '../../src/workflows/maintenance.js';
import { openTestDatabase, startTestWorker, testConfig, testTemporalClient } from '../support/env.js';
import { createTestOrgAndKey, insertTestIdentity, startTestApp, type TestApp } from '../support/platform.js';

describe('redactUrls', () => {
  it('masks credentials everywhere, path and query of the dependency URLs, queries elsewhere', () => {
    registerSecretUrls(['https://eth-sepolia.g.alchemy.example/v2/KEY1']);
    expect(redactUrls('URL: https://eth-sepolia.g.alchemy.example/v2/KEY1\nRequest body: {}')).toBe(
      'URL: https://eth-sepolia.g.alchemy.example/***\nRequest body: {}',
    );
    // the same origin with another path (and the default port spelled out) is the same provider
    expect(redactUrls('(https://eth-sepolia.g.alchemy.example:443/v2/OTHER?x=1).')).toBe('(https://eth-sepolia.g.alchemy.example:443/***).');
    expect(redactUrls('ledger http://gw:s3cr3t@ledger.example:26660/v3 unreachable', ['http://ledger.example:26660'])).toBe(
      'ledger http://***@ledger.example:26660/*** unreachable',
    );
    // not a dependency: the path stays (it names the endpoint), credentials and the query go
    expect(redactUrls('POST https://u:p@hooks.example/a/b?token=T1 failed')).toBe('POST https://***@hooks.example/a/b?*** failed');
    expect(redactUrls('https://gw.example/v1/health and wss://node.example')).toBe('https://gw.example/v1/health and wss://node.example');
    expect(redactUrls('acc://alice.acme/book/1 has no key')).toBe('acc://alice.acme/book/1 has no key');
  });
});

describe('ledger errors answered by the co-signing routes', () => {
  it('a 502 LEDGER_UNAVAILABLE quotes the ledger without its credentials or path', () => {
    registerSecretUrls(['http://ledger.example:26660']);
    const err = ledgerApiError(
      new LedgerTransportError('ledger http://gw:s3cr3t-token@ledger.example:26660/v3 unreachable: fetch failed'),
      'pending transaction',
    ) as ApiError;
    expect(err.status).toBe(502);
    expect(err.message).toBe(
      'pending transaction: the ledger network did not answer (ledger http://***@ledger.example:26660/*** unreachable: fetch failed); retry',
    );
  });
});

describe("a validator's refusals", () => {
  it("name no key of the node's own RPC or ledger URLs (a refusal reaches the gateway and its clients)", async () => {
    registerSecretUrls(['https://polygon-amoy.rpc.example/v3/NODE-KEY']);
    const refusal: unknown = await proofStep<void>('receipt of 0xabc', async () => {
      throw Object.assign(new Error('HTTP request failed.\n\nURL: https://polygon-amoy.rpc.example/v3/NODE-KEY'), {
        details: 'fetch failed at https://polygon-amoy.rpc.example/v3/NODE-KEY',
      });
    }).catch((e: unknown) => e);
    if (!(refusal instanceof ValidatorRefusal)) throw new Error(`expected a ValidatorRefusal, got ${String(refusal)}`);
    expect(refusal.code).toBe('RPC_UNAVAILABLE');
    expect(refusal.message).toBe('receipt of 0xabc: RPC error: HTTP request failed. fetch failed at https://polygon-amoy.rpc.example/***');
    expect(new ValidatorRefusal('INTENT_NOT_FOUND', 'ledger http://op:pw@ledger.node.example/v3?key=K down').message).toBe(
      'ledger http://***@ledger.node.example/v3?*** down',
    );
  });
});

describe('log lines', () => {
  it('a failing RPC call logged as the Temporal SDK logs a failed activity shows no provider key', async () => {
    const rpcUrl = 'http://127.0.0.1:9/v2/SECRET-PROVIDER-KEY';
    const config = loadConfig({ CHAINS: JSON.stringify([{ name: 'ethereum-sepolia', chainId: 11155111, rpcUrl }]) });
    const chain = config.chains[0]!;
    const error = await createChainClients({ rpcUrl: chain.rpcUrl, chainId: chain.chainId })
      .public.getBalance({ address: '0x000000000000000000000000000000000000dEaD' })
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(error?.message).toContain('SECRET-PROVIDER-KEY'); // what viem puts in its error
    const lines: string[] = [];
    const log = createLogger('info', { process: 'worker' }, (l) => lines.push(l)).child({ component: 'temporal-sdk' });
    log.warn('Activity failed', { error, durationMs: 3 });
    log.warn(`Activity failed: ${error!.message}`, { failure: error!.message, nested: { errors: [error] } });
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).not.toContain('SECRET-PROVIDER-KEY');
      expect(line).toContain('http://127.0.0.1:9/***');
    }
    expect(JSON.parse(lines[0]!).error).toMatchObject({ name: 'HttpRequestError', message: expect.stringContaining('HTTP request failed') });
  });
});

describe('activity failures kept by Temporal', () => {
  it("a failing activity's message, stack and causes reach the workflow history with the keys masked", { timeout: 60_000 }, async () => {
    registerSecretUrls(['https://rpc.provider.example']);
    const config = testConfig();
    const database = await openTestDatabase('pglite');
    const worker = await startTestWorker(
      config,
      database,
      {},
      {
        wrap: (a) => ({
          ...a,
          purgeExpired: async () => {
            const cause = new Error('fetch to https://rpc.provider.example/v2/CAUSE-KEY-1 refused');
            throw ApplicationFailure.create({
              message: 'RPC https://rpc.provider.example/v2/MSG-KEY-2 failed; hook https://u:p@hooks.example/h?token=Q-KEY-3',
              nonRetryable: true,
              cause,
            });
          },
        }),
      },
    );
    const client = await testTemporalClient(config);
    try {
      const handle = await client.workflow.start(maintenanceWorkflow, {
        taskQueue: config.temporal.taskQueue,
        workflowId: `redact-${randomUUID()}`,
        args: [{}],
      });
      await expect(handle.result()).rejects.toThrow();
      const history = JSON.stringify(await handle.fetchHistory());
      for (const k of ['CAUSE-KEY-1', 'MSG-KEY-2', 'Q-KEY-3', 'u:p@']) expect(history).not.toContain(k);
      expect(history).toContain('https://rpc.provider.example/***');
      expect(history).toContain('https://***@hooks.example/h?***');
    } finally {
      await client.connection.close();
      await worker.stop();
      await database.cleanup();
    }
  });
});

describe('API answers', () => {
  const LEDGER_URL = 'http://gw:s3cr3t-token@127.0.0.1:1/LEDGER-PATH-KEY';
  let t: TestApp;
  let key: string;
  let identityId: string;
  let opId: string;

  beforeAll(async () => {
    t = await startTestApp('pglite', { env: { LEDGER_URL } });
    const k = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 100_000 });
    key = k.key;
    const urls = await insertTestIdentity(t.db, k.orgId, 'redact', t.config.adiSuffix);
    identityId = urls.id;
    await t.db.update(identities).set({ status: 'active' }).where(eq(identities.id, identityId));
    const op = await insertGovernanceOp(t.db, {
      orgId: k.orgId,
      identityId,
      kind: 'key_page',
      operations: [],
      status: 'pending_signatures',
      principal: urls.keyPageUrl,
      signerUrl: urls.keyPageUrl,
      txHash: 'ab'.repeat(32),
      txId: `acc://${'ab'.repeat(32)}@${urls.keyPageUrl.slice(6)}`,
      prepared: {},
      keyPageVersion: 1,
      signedKeys: ['22'.repeat(32)],
    });
    opId = op.id;
  });
  afterAll(async () => t?.close());

  const noSecrets = (text: string) => {
    expect(text).not.toContain('s3cr3t-token');
    expect(text).not.toContain('LEDGER-PATH-KEY');
    expect(text).toContain('http://***@127.0.0.1:1/***');
  };

  it('GET /v1/portfolio credit_error names the ledger without its credentials or path', async () => {
    const r = await t.call(`/v1/portfolio?identity=${identityId}`, { key });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { identities: { credit_balance: number | null; credit_error?: string }[] };
    expect(body.identities[0]).toMatchObject({ credit_balance: null, credit_error: expect.stringContaining('unreachable') });
    noSecrets(body.identities[0]!.credit_error!);
  });

  it('GET /v1/governance/{id} ledger_error names the ledger without its credentials or path', async () => {
    const r = await t.call(`/v1/governance/${opId}`, { key });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { ledger_error?: string };
    expect(body.ledger_error).toEqual(expect.stringContaining('unreachable'));
    noSecrets(body.ledger_error!);
  });
});
