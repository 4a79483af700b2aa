/**
 * Housekeeping, run hourly by a Temporal Schedule (see src/temporal/schedules.ts): removes idempotency records past
 * their retention and closed rate-limit windows. Deterministic orchestration only; the deletes are activities.
 */
import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { StoreActivities, PurgeResult } from '../activities/store.js';
import { StageKey } from './search-attributes.js';

const { purgeExpired } = proxyActivities<StoreActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

export async function maintenanceWorkflow(input: { now?: string } = {}): Promise<PurgeResult> {
  upsertSearchAttributes([{ key: StageKey, value: 'purging' }]);
  const result = await purgeExpired(input.now);
  upsertSearchAttributes([{ key: StageKey, value: 'done' }]);
  return result;
}
