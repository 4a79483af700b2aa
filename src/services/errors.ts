/**
 * The error a use case raises: the HTTP status and code it answers with, a message naming the input at fault, and
 * optional details and headers. The API's error handler renders it as `{ error, code, details? }`.
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';

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
