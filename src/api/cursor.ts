/** Opaque page cursors over (created_at, id), newest first: what list endpoints return as next_cursor. */
import { ApiError } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** what encodeCursor writes: Date#toISOString of a year 1970–9999 (no sign, no extended year) */
const ISO_INSTANT = /^(19[7-9]\d|[2-9]\d{3})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeCursor(r: { createdAt: Date; id: string }): string {
  return Buffer.from(JSON.stringify({ t: r.createdAt.toISOString(), id: r.id })).toString('base64url');
}

/**
 * The position a cursor names; 400 VALIDATION_ERROR naming `cursor` for anything encodeCursor cannot have written
 * (a tampered or truncated cursor never reaches the database).
 */
export function decodeCursor(s: string): { createdAt: Date; id: string } {
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
