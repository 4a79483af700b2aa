/**
 * A workflow started through the API's Temporal client runs on the worker and writes to the database, on both
 * database drivers: the maintenance workflow purges expired idempotency records and closed rate-limit windows.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { identities, idempotencyKeys, organizations, rateLimitCounters } from '../../src/db/schema.js';
import { identityUrls } from '../../src/identity/keys.js';
import { IdentityIdKey, StageKey } from '../../src/workflows/search-attributes.js';
import { dbKinds, openTestDatabase, startTestWorker, testConfig, testTemporalClient } from '../support/env.js';

describe.each(dbKinds())('workflow → worker → database (%s)', (kind) => {
  const config = testConfig();
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let client: Client;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    worker = await startTestWorker(config, database);
    client = await testTemporalClient(config);
  });
  afterAll(async () => {
    await client?.connection.close();
    await worker?.stop();
    await database?.cleanup();
  });

  it('migrations created the tables', async () => {
    const [org] = await database.db.insert(organizations).values({ name: 'acme' }).returning();
    expect(org.identityQuota).toBeGreaterThan(0);
    expect(typeof org.creditGrant).toBe('bigint');
  });

  it('maintenanceWorkflow deletes exactly the expired rows', async () => {
    const [org] = await database.db.insert(organizations).values({ name: 'maint' }).returning();
    const now = Date.now();
    const row = (key: string, expiresAt: Date) => ({
      orgId: org.id,
      key,
      method: 'POST',
      path: '/v1/identity',
      requestHash: 'h',
      state: 'completed',
      expiresAt,
    });
    await database.db.insert(idempotencyKeys).values([row('old', new Date(now - 60_000)), row('fresh', new Date(now + 24 * 3600_000))]);
    await database.db.insert(rateLimitCounters).values([
      { bucket: 'key:a', windowStart: new Date(now - 10 * 60_000), count: 5 },
      { bucket: 'key:a', windowStart: new Date(now - 30_000), count: 2 },
    ]);

    const workflowId = `maintenance-test-${randomUUID()}`;
    const handle = await client.workflow.start('maintenanceWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId,
      args: [{}],
    });
    const result = await handle.result();
    expect(result).toEqual({ idempotencyKeys: 1, rateLimitWindows: 1, identitiesResumed: 0, identitiesFailed: 0 });

    const keys = await database.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.orgId, org.id));
    expect(keys.map((k) => k.key)).toEqual(['fresh']);
    const windows = await database.db.select().from(rateLimitCounters);
    expect(windows).toHaveLength(1);
    expect(windows[0].count).toBe(2);

    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(StageKey)).toBe('done');
  });

  it('maintenanceWorkflow starts the workflow of an identity left creating without one, and fails one whose workflow ended', async () => {
    const [org] = await database.db.insert(organizations).values({ name: 'stalled', creditsUsed: 30n }).returning();
    const row = (name: string, createdAt: Date) => ({
      id: randomUUID(),
      orgId: org.id,
      name,
      ...identityUrls(name, 'acme'),
      publicKey: null,
      publicKeyHash: 'ab'.repeat(32),
      requestedChains: ['ethereum-sepolia'],
      requestedCredits: 10n,
      status: 'creating',
      stage: 'queued',
      createdAt,
    });
    const old = new Date(Date.now() - 20 * 60_000);
    const [orphan, ended, young] = [row('orphan-stalled-id', old), row('ended-stalled-id', old), row('young-stalled-id', new Date())];
    await database.db.insert(identities).values([orphan, ended, young]);
    // `ended` had a workflow that was terminated before it recorded anything
    const endedHandle = await client.workflow.start('identityWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `identity-${ended.id}`,
      args: [{}],
    });
    await endedHandle.terminate('test: an operator stopped it');

    const result = await client.workflow.execute('maintenanceWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `maintenance-test-${randomUUID()}`,
      args: [{}],
    });
    expect(result).toMatchObject({ identitiesResumed: 1, identitiesFailed: 1 });

    const resumed = client.workflow.getHandle(`identity-${orphan.id}`);
    try {
      const d = await resumed.describe();
      expect(d.status.name).toBe('RUNNING');
      expect(d.typedSearchAttributes.get(IdentityIdKey)).toBe(orphan.id);
      const started = await resumed.fetchHistory();
      const input = started.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      expect(JSON.parse(Buffer.from(input.data!).toString())).toMatchObject({
        identityId: orphan.id,
        adiUrl: orphan.adiUrl,
        chains: ['ethereum-sepolia'],
        credits: '10',
      });
    } finally {
      await resumed.terminate('test done');
    }
    const rows = await database.db.select().from(identities).where(eq(identities.orgId, org.id));
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(ended.id)).toMatchObject({ status: 'failed', errorMessage: 'provisioning ended without a result (workflow terminated)' });
    expect(byId.get(orphan.id)!.status).toBe('creating');
    expect(byId.get(young.id)!.status).toBe('creating');
    await expect(client.workflow.getHandle(`identity-${young.id}`).describe()).rejects.toThrow();
    // the failed one bought no credits: its 10 go back to the grant
    const [o] = await database.db.select().from(organizations).where(eq(organizations.id, org.id));
    expect(o!.creditsUsed).toBe(20n);
  });
});
