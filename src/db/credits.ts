/**
 * Credits bought for an identity's key page after its creation, charged to the organization's credit grant (the
 * same `credits_used` counter identity creation charges). The charge is one conditional update, so concurrent
 * purchases of one organization can never spend more than the grant; a purchase whose AddCredits the ledger never
 * executed gives its credits back once.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { identities, organizations } from './schema.js';

export type GrantCharge = { ok: true; remaining: bigint } | { ok: false; remaining: bigint };

/** Charge `credits` to the organization's grant if that many remain, atomically; the remaining credits either way. */
export async function chargeCreditGrant(db: Db, orgId: string, credits: bigint): Promise<GrantCharge> {
  const [charged] = await db
    .update(organizations)
    .set({ creditsUsed: sql`${organizations.creditsUsed} + ${credits.toString()}::bigint` })
    .where(and(eq(organizations.id, orgId), sql`${organizations.creditGrant} - ${organizations.creditsUsed} >= ${credits.toString()}::bigint`))
    .returning({ grant: organizations.creditGrant, used: organizations.creditsUsed });
  if (charged) return { ok: true, remaining: charged.grant - charged.used };
  const [org] = await db.select({ grant: organizations.creditGrant, used: organizations.creditsUsed }).from(organizations).where(eq(organizations.id, orgId));
  const remaining = org ? org.grant - org.used : 0n;
  return { ok: false, remaining: remaining < 0n ? 0n : remaining };
}

/** Give credits back to the grant (a purchase whose workflow never started). */
export async function returnCreditGrant(db: Db, orgId: string, credits: bigint): Promise<void> {
  await db
    .update(organizations)
    .set({ creditsUsed: sql`greatest(${organizations.creditsUsed} - ${credits.toString()}::bigint, 0)` })
    .where(eq(organizations.id, orgId));
}

/**
 * Give back the credits of a purchase that failed for good, once, and only when the ledger never executed its
 * AddCredits: the purchase's exactly-once record (`step` in the identity's ledger transactions, written before the
 * submission and kept once delivered) is absent. The refund is marked in the same transaction (`<step>:refunded`),
 * so a retried call refunds nothing more. True when credits were given back.
 */
export async function refundFailedPurchase(db: Db, p: { orgId: string; identityId: string; step: string; credits: bigint }): Promise<boolean> {
  const marker = `${p.step}:refunded`;
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(identities)
      .set({
        ledgerTxs: sql`${identities.ledgerTxs} || ${JSON.stringify({ [marker]: { txId: '', envelope: null, submittedAt: new Date().toISOString() } })}::jsonb`,
      })
      .where(and(eq(identities.id, p.identityId), sql`not (${identities.ledgerTxs} ? ${p.step})`, sql`not (${identities.ledgerTxs} ? ${marker})`))
      .returning({ id: identities.id });
    if (!row) return false;
    await tx
      .update(organizations)
      .set({ creditsUsed: sql`greatest(${organizations.creditsUsed} - ${p.credits.toString()}::bigint, 0)` })
      .where(eq(organizations.id, p.orgId));
    return true;
  });
}
