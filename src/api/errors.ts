/**
 * One error shape everywhere: `{ error, code, details? }`. A 400 VALIDATION_ERROR always has `details.field` naming
 * the input at fault (a body field as `a.b[0].c`, a query or path parameter or header by its name, `body` for a body
 * that is not JSON), and its `error` starts with `<field>: `; zod-validated inputs add `details.issues` (every issue).
 */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from './deps.js';
import { ApiError } from '../services/errors.js';

export { ApiError };

/** A zod issue path as a field name: `operations[0].type`. */
export function fieldOfPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : out ? `${out}.${String(p)}` : String(p)), '');
}

/** The details of a VALIDATION_ERROR, given `field` when a thrower left it out (taken from the `<field>: ` message prefix). */
function withField(message: string, details: unknown): unknown {
  if (details && typeof details === 'object' && typeof (details as { field?: unknown }).field === 'string') return details;
  const field = /^([^\s:]+): /.exec(message)?.[1] ?? 'request';
  return details && typeof details === 'object' && !Array.isArray(details) ? { ...details, field } : { field };
}

export function errorBody(error: string, code: string, details?: unknown) {
  return details === undefined ? { error, code } : { error, code, details };
}

export function onError(err: Error, c: Context<AppEnv>) {
  if (err instanceof ApiError) {
    for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
    const details = err.code === 'VALIDATION_ERROR' ? withField(err.message, err.details) : err.details;
    return c.json(errorBody(err.message, err.code, details), err.status);
  }
  if (err instanceof HTTPException) {
    // raised by Hono's own body parsing and validators: give them the documented codes
    if (err.status === 400) return c.json(errorBody(`body: malformed JSON (${err.message || 'cannot be parsed'})`, 'VALIDATION_ERROR', { field: 'body' }), 400);
    if (err.status === 415) return c.json(errorBody('Unsupported Media Type: send the body as Content-Type: application/json', 'UNSUPPORTED_MEDIA_TYPE'), 415);
    if (err.status === 413) return c.json(errorBody(err.message || 'Request body too large', 'PAYLOAD_TOO_LARGE'), 413);
    return c.json(errorBody(err.message || 'Request failed', 'HTTP_ERROR'), err.status);
  }
  c.get('logger')?.error('unhandled error', { err });
  return c.json(errorBody('Internal server error', 'INTERNAL_ERROR'), 500);
}

export function notFound(c: Context<AppEnv>) {
  return c.json(errorBody(`No route for ${c.req.method} ${c.req.path}`, 'NOT_FOUND'), 404);
}
