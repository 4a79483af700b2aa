/**
 * List pagination, in the two forms the API's lists take:
 *   - keyset (identities, transactions, portfolio): newest first over (created_at, id); `next_cursor` is an opaque
 *     cursor naming the last row shown, passed back as `cursor` for the next page;
 *   - offset (pending actions, webhook deliveries): `limit` and `offset`, with the total count.
 * The event log pages by event id (`starting_after`). Keyset lists and the event log read one row more than they
 * show: whether it came back says whether there is more.
 */
import { ApiError } from './errors.js';
import { UUID } from '../db/ids.js';

/** A keyset position: the (created_at, id) of the last row of the previous page. */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

/** what encodeCursor writes: Date#toISOString of a year 1970–9999 (no sign, no extended year) */
const ISO_INSTANT = /^(19[7-9]\d|[2-9]\d{3})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeCursor(r: CursorPosition): string {
  return Buffer.from(JSON.stringify({ t: r.createdAt.toISOString(), id: r.id })).toString('base64url');
}

/**
 * The position a cursor names; 400 VALIDATION_ERROR naming `cursor` for anything encodeCursor cannot have written
 * (a tampered or truncated cursor never reaches the database).
 */
export function decodeCursor(s: string): CursorPosition {
  try {
    const o = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { t?: unknown; id?: unknown };
    if (typeof o.t !== 'string' || !ISO_INSTANT.test(o.t) || typeof o.id !== 'string' || !UUID.test(o.id)) throw new Error('bad');
    const createdAt = new Date(o.t);
    if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== o.t) throw new Error('bad'); // e.g. 2020-02-31
    return { createdAt, id: o.id };
  } catch {
    throw new ApiError(400, 'VALIDATION_ERROR', 'cursor: not a cursor returned by this endpoint', { field: 'cursor' });
  }
}

/** The `cursor` query parameter as a position; none for the first page. */
export function cursorOf(cursor: string | undefined): CursorPosition | undefined {
  return cursor ? decodeCursor(cursor) : undefined;
}

/** The page of `rows` read with one row to spare (`limit + 1`), and whether there is more. */
export function pageOf<T>(rows: T[], limit: number): { page: T[]; hasMore: boolean } {
  return { page: rows.slice(0, limit), hasMore: rows.length > limit };
}

export interface CursorPagination {
  limit: number;
  has_more: boolean;
  next_cursor: string | null;
}

/** A keyset page of `rows` (read with one to spare) and its `pagination` object. */
export function keysetPage<T extends CursorPosition>(rows: T[], limit: number): { page: T[]; pagination: CursorPagination } {
  const { page, hasMore } = pageOf(rows, limit);
  return { page, pagination: { limit, has_more: hasMore, next_cursor: hasMore ? encodeCursor(page[page.length - 1]!) : null } };
}

export interface OffsetPagination {
  limit: number;
  offset: number;
  total: number;
  has_more: boolean;
}

/** The `pagination` object of an offset page showing `shown` of `total` rows from `offset`. */
export function offsetPagination(limit: number, offset: number, shown: number, total: number): OffsetPagination {
  return { limit, offset, total, has_more: offset + shown < total };
}
