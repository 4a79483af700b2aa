/**
 * List pagination, one shape for every list (docs/api-conventions.md, "Lists"). A page is asked by `offset` (skip N
 * items; none is the first page) or by `cursor` (the `next_cursor` of the previous page), never both; it answers
 * `pagination: { limit, offset, total, has_more, next_cursor }`.
 *
 * How a list uses it: `pageRequest` reads the query (400 for cursor with offset, or a cursor it did not write); the
 * list reads `limit + 1` rows in its order, from `offset` or after the cursor's position, and counts every row its
 * filters match; `pageOf` keeps `limit` of them and builds `pagination` (the extra row says whether there is more).
 *
 * Cursors name the last row shown. Most lists order by (created_at, id), and `encodeCursor`/`decodeCursor` write and
 * read that position; a list with another order passes its own codec (the event log's cursor is an event id).
 */
import { ApiError } from './errors.js';
import { UUID } from '../db/ids.js';
import { DEFAULT_PAGE_SIZE } from './schemas/pagination.js';

/** A keyset position: the (created_at, id) of the last row of the previous page. */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

/** The `pagination` object of every list. */
export interface Pagination {
  limit: number;
  /** the first item's position when asked by offset; null when asked by cursor */
  offset: number | null;
  total: number;
  has_more: boolean;
  /** set whenever has_more */
  next_cursor: string | null;
}

/** The query parameters of pageQuery (src/api/schemas/pagination.ts). */
export interface PageQuery {
  limit?: number;
  cursor?: string;
  offset?: number;
}

/**
 * The page a list reads: `limit` rows (read `limit + 1`), from `offset` when `after` is undefined, else after the
 * position `after` (and `offset` is null).
 */
export type PageRequest<P = CursorPosition> = { limit: number; offset: number; after?: undefined } | { limit: number; offset: null; after: P };

/** what encodeCursor writes: Date#toISOString of a year 1970–9999 (no sign, no extended year) */
const ISO_INSTANT = /^(19[7-9]\d|[2-9]\d{3})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeCursor(r: CursorPosition): string {
  return Buffer.from(JSON.stringify({ t: r.createdAt.toISOString(), id: r.id })).toString('base64url');
}

const notACursor = () => new ApiError(400, 'VALIDATION_ERROR', 'cursor: not a cursor returned by this endpoint', { field: 'cursor' });

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
    throw notACursor();
  }
}

/** A cursor that is a row's id (a UUID), for lists whose position is read from the row itself. */
export function decodeIdCursor(s: string): string {
  if (!UUID.test(s)) throw notACursor();
  return s.toLowerCase();
}

/**
 * The page the query asks for: by cursor, by offset, or the first page. `cursor` and `offset` together are a 400
 * VALIDATION_ERROR naming both; `decode` turns a cursor into the list's position (400 naming `cursor` when it is not
 * one the list wrote).
 */
export function pageRequest<P = CursorPosition>(
  q: PageQuery,
  defaultLimit = DEFAULT_PAGE_SIZE,
  decode: (cursor: string) => P = decodeCursor as unknown as (cursor: string) => P,
): PageRequest<P> {
  const limit = q.limit ?? defaultLimit;
  const hasCursor = q.cursor !== undefined && q.cursor !== '';
  if (hasCursor && q.offset !== undefined) {
    throw new ApiError(400, 'VALIDATION_ERROR', 'cursor: cannot be combined with offset; page by cursor or by offset, not both', {
      field: 'cursor',
      fields: ['cursor', 'offset'],
    });
  }
  if (hasCursor) return { limit, offset: null, after: decode(q.cursor!) };
  return { limit, offset: q.offset ?? 0 };
}

/**
 * The page of `rows` (read with one to spare, `limit + 1`) and its `pagination`: `total` is the count of every row
 * the filters match, `cursorOf` names a row as the cursor of the page after it.
 */
export function pageOf<T>(
  rows: T[],
  req: { limit: number; offset: number | null },
  total: number,
  cursorOf: (row: T) => string,
): { page: T[]; pagination: Pagination } {
  const page = rows.slice(0, req.limit);
  const hasMore = rows.length > req.limit;
  const last = page[page.length - 1];
  return {
    page,
    pagination: { limit: req.limit, offset: req.offset, total, has_more: hasMore, next_cursor: hasMore && last !== undefined ? cursorOf(last) : null },
  };
}

/** A keyset page of `rows` ordered by (created_at, id): pageOf with encodeCursor. */
export function createdAtPage<T extends CursorPosition>(rows: T[], req: { limit: number; offset: number | null }, total: number) {
  return pageOf(rows, req, total, encodeCursor);
}
