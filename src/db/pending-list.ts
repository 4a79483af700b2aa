/**
 * The organization's open pending actions as a list page (GET /v1/pending): oldest discovered first, by offset or
 * after a cursor, with the stats over every action the filters match.
 */
import { and, asc, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { URGENT_WITHIN_MS } from './governance.js';
import { newerThan, type RowPage } from './pagination.js';
import { identities, pendingActions } from './schema.js';

export interface PendingListFilter {
  identityIds?: string[];
  category?: string;
  status?: string;
  now: Date;
}

export interface PendingStats {
  total: number;
  urgent: number;
  governance: number;
  transactions: number;
  awaiting_others: number;
}

/**
 * A page of open actions, oldest discovered first (`page.limit` rows from `page.offset` or after the (discovered_at,
 * id) position `page.after`), with the stats over every open action the filters match (`stats.total` is the list's
 * total). Urgent: expiring within URGENT_WITHIN_MS of `now`.
 */
export async function listPendingActionPage(db: Db, orgId: string, f: PendingListFilter, page: RowPage) {
  const conds = [eq(pendingActions.orgId, orgId), isNull(pendingActions.resolvedAt)];
  if (f.identityIds) conds.push(inArray(pendingActions.identityId, f.identityIds.length ? f.identityIds : ['00000000-0000-0000-0000-000000000000']));
  if (f.category) conds.push(eq(pendingActions.category, f.category));
  if (f.status) conds.push(eq(pendingActions.status, f.status));
  const where = and(...conds);
  const urgentBefore = new Date(f.now.getTime() + URGENT_WITHIN_MS);
  const [rows, [stats]] = await Promise.all([
    db
      .select({
        action: pendingActions,
        identityUrl: identities.adiUrl,
        identity: {
          id: identities.id,
          orgId: identities.orgId,
          adiUrl: identities.adiUrl,
          bookUrl: identities.bookUrl,
          keyPageUrl: identities.keyPageUrl,
          publicKey: identities.publicKey,
        },
      })
      .from(pendingActions)
      .innerJoin(identities, eq(identities.id, pendingActions.identityId))
      .where(page.after ? and(where, newerThan(pendingActions.discoveredAt, pendingActions.id, page.after)) : where)
      .orderBy(asc(pendingActions.discoveredAt), asc(pendingActions.id))
      .limit(page.limit)
      .offset(page.offset ?? 0),
    db
      .select({
        total: count(),
        urgent: sql<number>`count(*) filter (where ${pendingActions.expiresAt} is not null and ${pendingActions.expiresAt} < ${urgentBefore.toISOString()}::timestamptz)`,
        governance: sql<number>`count(*) filter (where ${pendingActions.category} = 'governance')`,
        transactions: sql<number>`count(*) filter (where ${pendingActions.category} = 'transactions')`,
        awaitingOthers: sql<number>`count(*) filter (where ${pendingActions.status} = 'awaiting_others')`,
      })
      .from(pendingActions)
      .where(where),
  ]);
  const out: PendingStats = {
    total: Number(stats?.total ?? 0),
    urgent: Number(stats?.urgent ?? 0),
    governance: Number(stats?.governance ?? 0),
    transactions: Number(stats?.transactions ?? 0),
    awaiting_others: Number(stats?.awaitingOthers ?? 0),
  };
  return { rows, total: out.total, stats: out };
}
