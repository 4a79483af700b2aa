/** One error shape everywhere: `{ error, code, details? }`. */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from './deps.js';

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function errorBody(error: string, code: string, details?: unknown) {
  return details === undefined ? { error, code } : { error, code, details };
}

export function onError(err: Error, c: Context<AppEnv>) {
  if (err instanceof ApiError) {
    for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
    return c.json(errorBody(err.message, err.code, err.details), err.status);
  }
  if (err instanceof HTTPException) {
    // raised by Hono's own body parsing and validators: give them the documented codes
    if (err.status === 400) return c.json(errorBody(`body: malformed JSON (${err.message || 'cannot be parsed'})`, 'VALIDATION_ERROR'), 400);
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
