/** Database activities of identity provisioning: the row's stage and final state. */
import type { Db } from '../db/client.js';
import { markIdentityActive, markIdentityFailed, setIdentityStage, type ProvisioningStage } from '../db/identities.js';

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
  };
}
export type IdentityStoreActivities = ReturnType<typeof createIdentityStoreActivities>;
