/**
 * Housekeeping, run hourly by a Temporal Schedule (see src/temporal/schedules.ts): removes idempotency records past
 * their retention and closed rate-limit windows, and resumes identities left `creating` without a running
 * workflow. Deterministic orchestration only; the work is activities.
 */
import { patched, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { MaintenanceActivities, PurgeResult } from '../activities/maintenance.js';
import { StageKey } from './search-attributes.js';

const { purgeExpired } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

const { resumeStalledIdentities } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

export interface MaintenanceResult extends PurgeResult {
  /** identities whose provisioning was started / marked failed (absent in runs of earlier versions) */
  identitiesResumed?: number;
  identitiesFailed?: number;
}

export async function maintenanceWorkflow(input: { now?: string } = {}): Promise<MaintenanceResult> {
  upsertSearchAttributes([{ key: StageKey, value: 'purging' }]);
  const result: MaintenanceResult = await purgeExpired(input.now);
  if (patched('resume-stalled-identities')) {
    upsertSearchAttributes([{ key: StageKey, value: 'resuming_identities' }]);
    const r = await resumeStalledIdentities(input.now);
    result.identitiesResumed = r.started;
    result.identitiesFailed = r.failed;
  }
  upsertSearchAttributes([{ key: StageKey, value: 'done' }]);
  return result;
}
