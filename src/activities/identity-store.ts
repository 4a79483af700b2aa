/** Database activities of identity provisioning: the row's final state, and the repair of stalled rows. */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { and, asc, eq, lt } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { markIdentityActive, markIdentityFailed, setIdentityStage, type ProvisioningStage } from '../db/identities.js';
import { identities } from '../db/schema.js';
import { identityWorkflowId, startIdentityWorkflow } from '../identity/start.js';

/** A row `creating` for this long without a running workflow is stalled (provisioning normally takes seconds). */
export const STALLED_IDENTITY_MS = 10 * 60 * 1000;

export function createIdentityStoreActivities(db: Db) {
  return {
    async recordIdentityStage(identityId: string, stage: ProvisioningStage): Promise<void> {
      await setIdentityStage(db, identityId, stage);
    },
    /** creating -> active with the page's credit balance (whole credits, decimal string). */
    async markIdentityActive(identityId: string, creditBalance: string): Promise<void> {
      await markIdentityActive(db, identityId, BigInt(creditBalance));
    },
    /**
     * creating -> failed with the reason; gives the credits back to the organization when none were bought. (A
     * third argument, a refund flag, came from workflows of earlier versions; the row's own record decides now.)
     */
    async markIdentityFailed(identityId: string, message: string): Promise<void> {
      await markIdentityFailed(db, identityId, message);
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
      const rows = await db
        .select()
        .from(identities)
        .where(and(eq(identities.status, 'creating'), lt(identities.createdAt, cutoff)))
        .orderBy(asc(identities.createdAt))
        .limit(500);
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
export type IdentityStoreActivities = ReturnType<typeof createIdentityStoreActivities>;
