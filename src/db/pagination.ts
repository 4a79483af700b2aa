/**
 * Keyset pagination in SQL, over the (created_at, id) order the API's cursors name: newest first for most lists,
 * oldest first for the few that read in that order (the pending inbox, API keys).
 */
import { and, eq, gt, lt, or, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

export interface KeysetPosition {
  createdAt: Date;
  id: string;
}

/** Rows after `cursor` in newest-first order: created earlier, or at the same instant with a smaller id. */
export function olderThan(createdAt: AnyPgColumn, id: AnyPgColumn, cursor: KeysetPosition): SQL {
  return or(lt(createdAt, cursor.createdAt), and(eq(createdAt, cursor.createdAt), lt(id, cursor.id)))!;
}

/** Rows after `cursor` in oldest-first order: created later, or at the same instant with a larger id. */
export function newerThan(createdAt: AnyPgColumn, id: AnyPgColumn, cursor: KeysetPosition): SQL {
  return or(gt(createdAt, cursor.createdAt), and(eq(createdAt, cursor.createdAt), gt(id, cursor.id)))!;
}

/**
 * What a list query reads: `limit` rows (the caller asks for one to spare) from `offset`, or after the keyset
 * position `after` (then offset is null).
 */
export interface RowPage<P = KeysetPosition> {
  limit: number;
  offset: number | null;
  after?: P;
}
