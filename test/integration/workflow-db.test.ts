/**
 * A workflow started through the API's Temporal client runs on the worker and writes to the database, on both
 * database drivers: the maintenance workflow purges expired idempotency records and closed rate-limit windows.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { idempotencyKeys, organizations, rateLimitCounters } from '../../src/db/schema.js';
import { StageKey } from '../../src/workflows/search-attributes.js';
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
      orgId: org.id, key, method: 'POST', path: '/v1/identity', requestHash: 'h', state: 'completed', expiresAt,
    });
    await database.db.insert(idempotencyKeys).values([
      row('old', new Date(now - 60_000)),
      row('fresh', new Date(now + 24 * 3600_000)),
    ]);
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
    expect(result).toEqual({ idempotencyKeys: 1, rateLimitWindows: 1 });

    const keys = await database.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.orgId, org.id));
    expect(keys.map((k) => k.key)).toEqual(['fresh']);
    const windows = await database.db.select().from(rateLimitCounters);
    expect(windows).toHaveLength(1);
    expect(windows[0].count).toBe(2);

    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(StageKey)).toBe('done');
  });
});
