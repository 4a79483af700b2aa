/**
 * The pending inbox's writes outside the scan: the identities (of every organization) a ledger transaction involves,
 * closing a finished transaction's actions everywhere, and storing the state a live read found.
 */
import { and, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import type { IdentityRow } from './identities.js';
import { identities, pendingActions } from './schema.js';

/**
 * Active identities, of every organization, whose ADI is one of `adiUrls` or whose key book is one of `bookUrls`
 * (compared lower-case: the ledger's URLs are case-insensitive).
 */
export async function identitiesInvolving(db: Db, q: { adiUrls: string[]; bookUrls: string[] }): Promise<IdentityRow[]> {
  const adis = q.adiUrls.map((u) => u.toLowerCase());
  const books = q.bookUrls.map((u) => u.toLowerCase());
  const conds = [];
  if (adis.length) conds.push(inArray(sql`lower(${identities.adiUrl})`, adis));
  if (books.length) conds.push(inArray(sql`lower(${identities.bookUrl})`, books));
  if (!conds.length) return [];
  return db
    .select()
    .from(identities)
    .where(and(eq(identities.status, 'active'), or(...conds)));
}

/** Close every open action of the transaction `txHash`, in every organization; the number closed. */
export async function closePendingTx(db: Db, txHash: string, status: 'executed' | 'rejected' | 'expired'): Promise<number> {
  const rows = await db
    .update(pendingActions)
    .set({ status, isReady: status === 'executed', resolvedAt: new Date(), updatedAt: new Date() })
    .where(and(eq(pendingActions.txHash, txHash), isNull(pendingActions.resolvedAt)))
    .returning({ id: pendingActions.id });
  return rows.length;
}

/** The live part of an open action, as a read of the ledger found it. */
export interface PendingActionState {
  status: string;
  collectedSignatures: number;
  threshold: number;
  userHasSigned: boolean;
  awaitingAuthorities: string[];
  isReady: boolean;
}

/** Store what a live read found of an open action (a closed one is left as it is); the time written, if it was. */
export async function storePendingActionState(db: Db, id: string, s: PendingActionState): Promise<Date | undefined> {
  const at = new Date();
  const [r] = await db
    .update(pendingActions)
    .set({ ...s, updatedAt: at })
    .where(and(eq(pendingActions.id, id), isNull(pendingActions.resolvedAt)))
    .returning({ id: pendingActions.id });
  return r ? at : undefined;
}
