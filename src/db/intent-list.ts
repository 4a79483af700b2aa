/** The organization's intents as a list page (GET /v1/transactions): newest first, by offset or after a cursor. */
import { and, count, desc, eq } from 'drizzle-orm';
import type { Db } from './client.js';
import { intentViewJson, type IntentViewRow } from './intents.js';
import { olderThan, type RowPage } from './pagination.js';
import { intents } from './schema.js';

export interface IntentListFilter {
  status?: string;
  identityId?: string;
}

/**
 * A page of the organization's intents, newest first: `page.limit` rows from `page.offset` or after `page.after`,
 * and how many intents match the filter in all.
 */
export async function listOrgIntentPage(
  db: Db,
  orgId: string,
  f: IntentListFilter,
  page: RowPage,
): Promise<{ rows: { id: string; createdAt: Date; view: IntentViewRow }[]; total: number }> {
  const conds = [eq(intents.orgId, orgId)];
  if (f.status) conds.push(eq(intents.status, f.status));
  if (f.identityId) conds.push(eq(intents.identityId, f.identityId));
  const where = and(...conds);
  const rowsQuery = db
    .select({ id: intents.id, createdAt: intents.createdAt, view: intentViewJson })
    .from(intents)
    .where(page.after ? and(where, olderThan(intents.createdAt, intents.id, page.after)) : where)
    .orderBy(desc(intents.createdAt), desc(intents.id))
    .limit(page.limit)
    .offset(page.offset ?? 0);
  const [rows, [counted]] = await Promise.all([rowsQuery, db.select({ n: count() }).from(intents).where(where)]);
  return { rows, total: Number(counted?.n ?? 0) };
}
