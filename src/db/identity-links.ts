/**
 * Chains linked to an active identity after its creation (PATCH /v1/identity/{id} link_chains): the chains it asks
 * for are its `requested_chains`; those without a chain account yet are being linked. The link's outcome is written
 * with its event (`identity.chain_linked`, `identity.chain_link_failed`), each once.
 */
import { and, eq, sql } from 'drizzle-orm';
import { chainAccountPayload } from '../webhooks/stored-forms.js';
import type { Db } from './client.js';
import { recordEvent, type DbOrTx } from './events.js';
import type { IdentityRow } from './identities.js';
import { chainAccounts, events, identities } from './schema.js';

/**
 * Add chains to an active identity's requested chains (each once, in the order given), atomically: the chains it
 * requested but has no account on yet are the ones being linked. Undefined when the identity is not active.
 */
export async function addRequestedChains(db: Db, orgId: string, id: string, chains: string[]): Promise<IdentityRow | undefined> {
  const [row] = await db
    .update(identities)
    .set({
      requestedChains: sql`${identities.requestedChains} || (select coalesce(jsonb_agg(t.c order by t.n), '[]'::jsonb) from jsonb_array_elements_text(${JSON.stringify(chains)}::jsonb) with ordinality as t(c, n) where not (${identities.requestedChains} ? t.c))`,
      updatedAt: new Date(),
    })
    .where(and(eq(identities.orgId, orgId), eq(identities.id, id), eq(identities.status, 'active')))
    .returning();
  return row;
}

/** Take a chain off the identity's requested chains unless its account exists there; the row when it was taken off. */
async function dropUnlinkedChain(tx: DbOrTx, id: string, chain: string): Promise<IdentityRow | undefined> {
  const [row] = await tx
    .update(identities)
    .set({ requestedChains: sql`${identities.requestedChains} - ${chain}::text`, updatedAt: new Date() })
    .where(
      and(
        eq(identities.id, id),
        sql`${identities.requestedChains} ? ${chain}::text`,
        sql`not exists (select 1 from ${chainAccounts} where ${chainAccounts.identityId} = ${id} and ${chainAccounts.chain} = ${chain})`,
      ),
    )
    .returning();
  return row;
}

/** Undo the request to link a chain whose workflow did not start (nothing ran for it). */
export async function removeUnlinkedChain(db: Db, id: string, chain: string): Promise<void> {
  await dropUnlinkedChain(db, id, chain);
}

/**
 * The `identity.chain_linked` event of a chain account recorded after creation, written once per identity and
 * chain (a retried call finds it and writes nothing). Throws when the account is not recorded.
 */
export async function recordChainLinked(db: Db, id: string, chain: string): Promise<void> {
  await db.transaction(async (tx) => {
    // the row lock serialises concurrent attempts for one identity, so the check below cannot race
    const [row] = await tx.select().from(identities).where(eq(identities.id, id)).for('update');
    if (!row) return;
    const [acc] = await tx
      .select()
      .from(chainAccounts)
      .where(and(eq(chainAccounts.identityId, id), eq(chainAccounts.chain, chain)));
    if (!acc) throw new Error(`identity ${id} has no account recorded on ${chain}`);
    const [seen] = await tx
      .select({ id: events.id })
      .from(events)
      .where(and(eq(events.resourceId, id), eq(events.type, 'identity.chain_linked'), sql`${events.data}->'chain_account'->>'chain' = ${chain}`))
      .limit(1);
    if (seen) return;
    await recordEvent(tx, {
      orgId: row.orgId,
      type: 'identity.chain_linked',
      resourceId: row.id,
      data: {
        identity_id: row.id,
        adi_url: row.adiUrl,
        chain_account: chainAccountPayload({ chain, evmChainId: acc.chainId, address: acc.address, deploymentTx: acc.deploymentTx }),
      },
    });
  });
}

/**
 * A link that failed for good: the chain leaves the requested chains (unless its account exists after all) and an
 * `identity.chain_link_failed` event says why, both once (a retried call finds the chain gone and writes nothing).
 */
export async function markChainLinkFailed(db: Db, id: string, chain: string, message: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await dropUnlinkedChain(tx, id, chain);
    if (!row) return;
    await recordEvent(tx, {
      orgId: row.orgId,
      type: 'identity.chain_link_failed',
      resourceId: row.id,
      data: { identity_id: row.id, adi_url: row.adiUrl, chain, error: message.slice(0, 2000) },
    });
  });
}
