/** Opaque page cursors over (created_at, id), newest first: what list endpoints return as next_cursor. */
import { ApiError } from './errors.js';

export function encodeCursor(r: { createdAt: Date; id: string }): string {
  return Buffer.from(JSON.stringify({ t: r.createdAt.toISOString(), id: r.id })).toString('base64url');
}

export function decodeCursor(s: string): { createdAt: Date; id: string } {
  try {
    const o = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { t?: string; id?: string };
    const createdAt = new Date(String(o.t));
    if (Number.isNaN(createdAt.getTime()) || typeof o.id !== 'string' || !/^[0-9a-f-]{36}$/i.test(o.id)) throw new Error('bad');
    return { createdAt, id: o.id };
  } catch {
    throw new ApiError(400, 'VALIDATION_ERROR', 'cursor: not a cursor returned by this endpoint', { field: 'cursor' });
  }
}
