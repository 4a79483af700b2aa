/**
 * The organization's identities as pages (GET /v1/identities, GET /v1/portfolio): newest first over (created_at, id),
 * by offset or after a keyset position, with the counts a list's `pagination.total` and the portfolio's totals cover
 * (every identity the filters match, not the page).
 */
import { and, count, desc, eq, ne, type SQL } from 'drizzle-orm';
import type { Db } from './client.js';
import type { IdentityRow, IdentityStatus } from './identities.js';
import { olderThan, type RowPage } from './pagination.js';
import { chainAccounts, identities } from './schema.js';

export interface IdentityFilter {
  /** only this status; without it, every status but retired */
  status?: IdentityStatus;
  /** only this identity (the portfolio narrowed to one) */
  id?: string;
}

function where(orgId: string, f: IdentityFilter): SQL {
  const conds = [eq(identities.orgId, orgId)];
  conds.push(f.status ? eq(identities.status, f.status) : ne(identities.status, 'retired'));
  if (f.id) conds.push(eq(identities.id, f.id));
  return and(...conds)!;
}

/** `page.limit` rows of the filter, newest first, from `page.offset` or after `page.after`. */
export async function listOrgIdentityPage(db: Db, orgId: string, f: IdentityFilter, page: RowPage): Promise<IdentityRow[]> {
  const w = page.after ? and(where(orgId, f), olderThan(identities.createdAt, identities.id, page.after))! : where(orgId, f);
  return db
    .select()
    .from(identities)
    .where(w)
    .orderBy(desc(identities.createdAt), desc(identities.id))
    .limit(page.limit)
    .offset(page.after ? 0 : (page.offset ?? 0));
}

/** How many identities the filter matches, and how many chain accounts they hold. */
export async function countOrgIdentities(db: Db, orgId: string, f: IdentityFilter): Promise<{ identities: number; chainAccounts: number }> {
  const [[ids], [accounts]] = await Promise.all([
    db.select({ n: count() }).from(identities).where(where(orgId, f)),
    db
      .select({ n: count() })
      .from(chainAccounts)
      .innerJoin(identities, eq(identities.id, chainAccounts.identityId))
      .where(and(where(orgId, f), ne(identities.status, 'creating'))),
  ]);
  return { identities: ids!.n, chainAccounts: accounts!.n };
}
