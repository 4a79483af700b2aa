/**
 * Temporal Schedules the gateway owns; made to match the config at worker (and devnet) start: created when absent,
 * updated when their interval or action (workflow type, task queue, workflow id, args, overlap policy) differ from
 * what the config asks for, left alone otherwise. With them, the task queue's two long-running loops: the webhook
 * dispatcher and the expiry sweep of unsigned intents.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleDescription } from '@temporalio/client';
import { maintenanceWorkflow } from '../workflows/maintenance.js';
import { pendingDiscoveryWorkflow } from '../workflows/pending-discovery.js';
import { ensureIntentExpiry } from './intents.js';
import { ensureWebhookDispatcher } from './webhooks.js';

export const MAINTENANCE_SCHEDULE_ID = 'gateway-maintenance';
export const PENDING_DISCOVERY_SCHEDULE_ID = 'pending-discovery';

/** What one schedule should be. */
export interface DesiredSchedule {
  scheduleId: string;
  everySeconds: number;
  workflowType: string;
  workflowId: string;
  taskQueue: string;
  args: unknown[];
  overlap: ScheduleOverlapPolicy;
}

export type EnsureOutcome = 'created' | 'updated' | 'unchanged';

export function gatewaySchedules(taskQueue: string, opts: { pendingScanIntervalSeconds?: number } = {}): DesiredSchedule[] {
  return [
    {
      scheduleId: MAINTENANCE_SCHEDULE_ID,
      everySeconds: 3600,
      workflowType: maintenanceWorkflow.name,
      workflowId: 'maintenance',
      taskQueue,
      args: [{}],
      overlap: ScheduleOverlapPolicy.SKIP,
    },
    {
      scheduleId: PENDING_DISCOVERY_SCHEDULE_ID,
      everySeconds: opts.pendingScanIntervalSeconds ?? 45,
      workflowType: pendingDiscoveryWorkflow.name,
      workflowId: 'pending-discovery',
      taskQueue,
      args: [],
      overlap: ScheduleOverlapPolicy.SKIP,
    },
  ];
}

/** The differences between an existing schedule and the desired one, e.g. ['interval 45s -> 60s']; [] = matches. */
export function scheduleDrift(d: ScheduleDescription, want: DesiredSchedule): string[] {
  const drift: string[] = [];
  const intervals = d.spec.intervals ?? [];
  const everyMs = want.everySeconds * 1000;
  const sameSpec =
    intervals.length === 1 &&
    Number(intervals[0]!.every) === everyMs &&
    !Number(intervals[0]!.offset ?? 0) &&
    !d.spec.calendars?.length &&
    !d.spec.skip?.length;
  if (!sameSpec) drift.push(`interval ${intervals.map((i) => `${Number(i.every) / 1000}s`).join(',') || 'none'} -> ${want.everySeconds}s`);
  const a = d.action;
  if (a.workflowType !== want.workflowType) drift.push(`workflow type ${a.workflowType} -> ${want.workflowType}`);
  if (a.taskQueue !== want.taskQueue) drift.push(`task queue ${a.taskQueue} -> ${want.taskQueue}`);
  if (a.workflowId !== want.workflowId) drift.push(`workflow id ${a.workflowId} -> ${want.workflowId}`);
  if (JSON.stringify(a.args ?? []) !== JSON.stringify(want.args)) drift.push(`args ${JSON.stringify(a.args ?? [])} -> ${JSON.stringify(want.args)}`);
  if (d.policies.overlap !== want.overlap) drift.push(`overlap ${d.policies.overlap} -> ${want.overlap}`);
  return drift;
}

/** Create the schedule, or bring an existing one in line with `want` (its paused state and notes are kept). */
export async function ensureSchedule(
  client: Client,
  want: DesiredSchedule,
  log?: (msg: string, fields: Record<string, unknown>) => void,
): Promise<EnsureOutcome> {
  const spec = { intervals: [{ every: want.everySeconds * 1000 }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: want.workflowType,
    taskQueue: want.taskQueue,
    args: want.args,
    workflowId: want.workflowId,
  };
  try {
    await client.schedule.create({ scheduleId: want.scheduleId, spec, action, policies: { overlap: want.overlap } });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(want.scheduleId);
  const drift = scheduleDrift(await handle.describe(), want);
  if (drift.length === 0) return 'unchanged';
  await handle.update((prev) => ({ ...prev, spec, action, policies: { ...prev.policies, overlap: want.overlap } }));
  log?.('schedule updated to match the config', { schedule_id: want.scheduleId, changes: drift });
  return 'updated';
}

export async function ensureSchedules(
  client: Client,
  taskQueue: string,
  opts: { pendingScanIntervalSeconds?: number; log?: (msg: string, fields: Record<string, unknown>) => void } = {},
): Promise<Record<string, EnsureOutcome>> {
  const outcomes: Record<string, EnsureOutcome> = {};
  for (const s of gatewaySchedules(taskQueue, opts)) outcomes[s.scheduleId] = await ensureSchedule(client, s, opts.log);
  await ensureWebhookDispatcher(client, taskQueue);
  await ensureIntentExpiry(client, taskQueue);
  return outcomes;
}
