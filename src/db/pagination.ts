/** Keyset pagination in SQL, over the newest-first (created_at, id) order the API's cursors name. */
import { and, eq, lt, or, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/** Rows after `cursor` in newest-first order: created earlier, or at the same instant with a smaller id. */
export function olderThan(createdAt: AnyPgColumn, id: AnyPgColumn, cursor: { createdAt: Date; id: string }): SQL {
  return or(lt(createdAt, cursor.createdAt), and(eq(createdAt, cursor.createdAt), lt(id, cursor.id)))!;
}
