/**
 * Housekeeping activities of the maintenance workflow: purging expired records of our own database, and resuming
 * identities whose provisioning stalled. Factories close over their dependencies.
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Db } from '../db/client.js';
import { purgeExpiredIdempotencyKeys } from '../db/idempotency.js';
import { listCreatingBefore, markIdentityFailed } from '../db/identities.js';
import { purgeRateLimitWindowsBefore } from '../db/rate-limits.js';
import { identityWorkflowId, startIdentityWorkflow } from '../temporal/identities.js';

export interface PurgeResult {
  idempotencyKeys: number;
  rateLimitWindows: number;
}

/** A row `creating` for this long without a running workflow is stalled (provisioning normally takes seconds). */
export const STALLED_IDENTITY_MS = 10 * 60 * 1000;

export function createMaintenanceActivities(db: Db) {
  return {
    /**
     * Delete idempotency records past their 24-hour retention and rate-limit windows that have closed.
     * Both deletes are naturally idempotent, so a retry after a crash is harmless.
     */
    async purgeExpired(nowIso?: string): Promise<PurgeResult> {
      const now = nowIso ? new Date(nowIso) : new Date();
      const keys = await purgeExpiredIdempotencyKeys(db, now);
      // A window is at most a minute long; anything that started over two minutes ago is closed.
      const windows = await purgeRateLimitWindowsBefore(db, new Date(now.getTime() - 120_000));
      return { idempotencyKeys: keys, rateLimitWindows: windows };
    },

    /**
     * Rows `creating` for over STALLED_IDENTITY_MS: one whose workflow never started (the API stopped between
     * writing the row and starting it) gets it started now, from the row; one whose workflow ended without
     * recording a result (terminated, timed out) becomes failed, its credits returned if none were bought.
     * Running workflows are left alone. Idempotent: a start is refused for an id that exists.
     */
    async resumeStalledIdentities(nowIso?: string): Promise<{ started: number; failed: number }> {
      const { client, info } = Context.current();
      const cutoff = new Date((nowIso ? Date.parse(nowIso) : Date.now()) - STALLED_IDENTITY_MS);
      const rows = await listCreatingBefore(db, cutoff, 500);
      let started = 0;
      let failed = 0;
      for (const row of rows) {
        Context.current().heartbeat();
        const desc = await client.workflow
          .getHandle(identityWorkflowId(row.id))
          .describe()
          .catch((e: unknown) => {
            if (e instanceof WorkflowNotFoundError) return undefined;
            throw e;
          });
        if (!desc) {
          await startIdentityWorkflow(client, info.taskQueue, row);
          started++;
        } else if (desc.status.name !== 'RUNNING') {
          await markIdentityFailed(db, row.id, `provisioning ended without a result (workflow ${desc.status.name.toLowerCase()})`);
          failed++;
        }
      }
      return { started, failed };
    },
  };
}
export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
