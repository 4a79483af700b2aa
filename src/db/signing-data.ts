/**
 * Fresh signing data for an intent, a sign request or a governance operation that is still waiting for its
 * signature: the prepared transaction (new timestamp, current key page version, so a new hash to sign) replaces the
 * stored one. Only a record still signing_required is changed; the answer says whether it was.
 */
import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from './client.js';
import type { IntentRow } from './intents.js';
import type { GovernanceOpRow } from './governance.js';
import { governanceOps, intents, signRequests, type PreparedIntentTx, type SigningData } from './schema.js';

/** Replace an unsigned intent's prepared transaction and signing data; undefined when it is no longer signing_required. */
export async function replaceIntentSigningData(
  db: Db,
  id: string,
  p: { prepared: PreparedIntentTx; signingData: SigningData },
): Promise<IntentRow | undefined> {
  const [row] = await db
    .update(intents)
    .set({ prepared: p.prepared, signingData: p.signingData, updatedAt: new Date() })
    .where(and(eq(intents.id, id), eq(intents.status, 'signing_required'), isNull(intents.ledgerTxId)))
    .returning();
  return row;
}

/** Replace an open sign request's prepared signature; false when it is claimed, spent or gone. */
export async function replaceSignRequestPrepared(db: Db, orgId: string, id: string, prepared: Record<string, unknown>): Promise<boolean> {
  const rows = await db
    .update(signRequests)
    .set({ prepared })
    .where(and(eq(signRequests.id, id), eq(signRequests.orgId, orgId), eq(signRequests.status, 'signing_required')))
    .returning({ id: signRequests.id });
  return rows.length > 0;
}

/** Replace an unsigned governance operation's prepared transaction; undefined when it is no longer signing_required. */
export async function replaceGovernancePrepared(
  db: Db,
  id: string,
  p: { prepared: Record<string, unknown>; txHash: string; txId: string; signerUrl: string; keyPageVersion: number; signerThreshold: number | null },
): Promise<GovernanceOpRow | undefined> {
  const [row] = await db
    .update(governanceOps)
    .set({ ...p, updatedAt: new Date() })
    .where(and(eq(governanceOps.id, id), eq(governanceOps.status, 'signing_required')))
    .returning();
  return row;
}
