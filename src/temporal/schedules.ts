/** Temporal Schedules the gateway owns; created idempotently at worker start. */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { ensureWebhookDispatcher } from './webhooks.js';

export const MAINTENANCE_SCHEDULE_ID = 'gateway-maintenance';
export const PENDING_DISCOVERY_SCHEDULE_ID = 'pending-discovery';

export async function ensureSchedules(client: Client, taskQueue: string, opts: { pendingScanIntervalSeconds?: number } = {}): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: MAINTENANCE_SCHEDULE_ID,
      spec: { intervals: [{ every: '1 hour' }] },
      action: { type: 'startWorkflow', workflowType: 'maintenanceWorkflow', taskQueue, args: [{}], workflowId: 'maintenance' },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  try {
    await client.schedule.create({
      scheduleId: PENDING_DISCOVERY_SCHEDULE_ID,
      spec: { intervals: [{ every: `${opts.pendingScanIntervalSeconds ?? 45} seconds` }] },
      action: { type: 'startWorkflow', workflowType: 'pendingDiscoveryWorkflow', taskQueue, args: [], workflowId: 'pending-discovery' },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await ensureWebhookDispatcher(client, taskQueue);
}
