/**
 * ensureSchedules against the run's Temporal server: a schedule that exists already is brought in line with the
 * config (interval, task queue), one that matches is left alone, a paused one stays paused.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { ensureSchedules, MAINTENANCE_SCHEDULE_ID, PENDING_DISCOVERY_SCHEDULE_ID } from '../../src/temporal/schedules.js';
import { stopWebhookDispatcher } from '../../src/temporal/webhooks.js';
import { testConfig, testTemporalClient } from '../support/env.js';

describe('ensureSchedules', () => {
  let client: Client;
  const q1 = `test-sched-${randomUUID()}`;
  const q2 = `test-sched-${randomUUID()}`;
  const ids = [MAINTENANCE_SCHEDULE_ID, PENDING_DISCOVERY_SCHEDULE_ID];
  const drop = async () => {
    for (const id of ids)
      await client.schedule
        .getHandle(id)
        .delete()
        .catch(() => {});
    for (const wf of ['maintenance', 'pending-discovery'])
      await client.workflow
        .getHandle(wf)
        .terminate('test cleanup')
        .catch(() => {});
    for (const q of [q1, q2]) await stopWebhookDispatcher(client, q);
  };
  beforeAll(async () => {
    client = await testTemporalClient(testConfig());
    await drop();
  });
  afterAll(async () => {
    await drop();
    await client.connection.close();
  });
  const describeSchedule = (id: string) => client.schedule.getHandle(id).describe();

  it('updates an existing schedule whose interval or task queue changed, and only then', async () => {
    expect(await ensureSchedules(client, q1, { pendingScanIntervalSeconds: 45 })).toEqual({
      [MAINTENANCE_SCHEDULE_ID]: 'created',
      [PENDING_DISCOVERY_SCHEDULE_ID]: 'created',
    });
    expect(await ensureSchedules(client, q1, { pendingScanIntervalSeconds: 45 })).toEqual({
      [MAINTENANCE_SCHEDULE_ID]: 'unchanged',
      [PENDING_DISCOVERY_SCHEDULE_ID]: 'unchanged',
    });
    expect((await describeSchedule(PENDING_DISCOVERY_SCHEDULE_ID)).info.lastUpdatedAt).toBeUndefined();

    // PENDING_SCAN_INTERVAL_SECONDS changed: only pending discovery follows (failed before: the 45 s schedule stayed)
    const logged: unknown[] = [];
    const r = await ensureSchedules(client, q1, { pendingScanIntervalSeconds: 60, log: (msg, f) => logged.push({ msg, ...f }) });
    expect(r).toEqual({ [MAINTENANCE_SCHEDULE_ID]: 'unchanged', [PENDING_DISCOVERY_SCHEDULE_ID]: 'updated' });
    expect(logged).toEqual([expect.objectContaining({ schedule_id: PENDING_DISCOVERY_SCHEDULE_ID, changes: ['interval 45s -> 60s'] })]);
    let d = await describeSchedule(PENDING_DISCOVERY_SCHEDULE_ID);
    expect(d.spec.intervals?.map((i) => Number(i.every))).toEqual([60_000]);
    expect(d.action).toMatchObject({ workflowType: 'pendingDiscoveryWorkflow', taskQueue: q1, workflowId: 'pending-discovery' });

    // a new task queue: both schedules start their workflows there now; a paused schedule stays paused
    await client.schedule.getHandle(MAINTENANCE_SCHEDULE_ID).pause('operator pause');
    expect(await ensureSchedules(client, q2, { pendingScanIntervalSeconds: 60 })).toEqual({
      [MAINTENANCE_SCHEDULE_ID]: 'updated',
      [PENDING_DISCOVERY_SCHEDULE_ID]: 'updated',
    });
    for (const id of ids) expect((await describeSchedule(id)).action.taskQueue).toBe(q2);
    d = await describeSchedule(MAINTENANCE_SCHEDULE_ID);
    expect(d.spec.intervals?.map((i) => Number(i.every))).toEqual([3_600_000]);
    expect(d.state.paused).toBe(true);
    expect(d.action.args).toEqual([{}]);
    expect(await ensureSchedules(client, q2, { pendingScanIntervalSeconds: 60 })).toEqual({
      [MAINTENANCE_SCHEDULE_ID]: 'unchanged',
      [PENDING_DISCOVERY_SCHEDULE_ID]: 'unchanged',
    });
  });
});
