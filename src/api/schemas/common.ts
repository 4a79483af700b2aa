/** Shared OpenAPI pieces: the error body, the rate-limit headers, the standard error responses. */
import { z } from '@hono/zod-openapi';
import { UUID } from '../../db/ids.js';

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ description: "Human-readable message; the spec's exact text where it gives one" }),
    code: z.string().openapi({ description: 'Stable machine-readable code, e.g. RATE_LIMIT_EXCEEDED', example: 'VALIDATION_ERROR' }),
    details: z.unknown().optional().openapi({
      description:
        'Extra context. On a VALIDATION_ERROR always an object with `field`, the input at fault (body fields as `a.b[0].c`, parameters and headers by name, `body` for a body that is not JSON), and for schema failures `issues` (every failing field)',
    }),
  })
  .openapi('Error');

const intHeader = (description: string) => ({ description, schema: { type: 'integer' as const } });

/** Sent on every response. */
export const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': intHeader('Requests allowed in the current one-minute window'),
  'X-RateLimit-Remaining': intHeader('Requests left in the current window'),
  'X-RateLimit-Reset': intHeader('Unix timestamp (seconds) at which the current window ends'),
  'X-Request-Id': { description: 'Id of this request (echoes a well-formed incoming X-Request-Id)', schema: { type: 'string' as const } },
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: the message names the failing field (code VALIDATION_ERROR; a body that is not JSON: "body: malformed JSON") or the rule broken; a request the HTTP server cannot read, e.g. a header with forbidden bytes, is MALFORMED_REQUEST',
  401: 'Missing X-API-Key header, invalid API key format, or invalid API key; sent as Authorization: a scheme other than Bearer (UNSUPPORTED_AUTH_SCHEME), or a key other than the one in X-API-Key (CONFLICTING_API_KEYS)',
  403: 'API key is deactivated, API key has expired, or the key lacks the scope this operation needs (INSUFFICIENT_SCOPE)',
  404: "Not found in the caller's organization",
  409: 'A request with the same Idempotency-Key is still in progress (IDEMPOTENCY_KEY_IN_FLIGHT); retry after Retry-After seconds with the same key',
  422: 'The Idempotency-Key was already used with a different request body or path (IDEMPOTENCY_KEY_MISMATCH)',
  413: 'Request body larger than 1 MiB (PAYLOAD_TOO_LARGE)',
  415: 'The body is not sent as Content-Type: application/json (UNSUPPORTED_MEDIA_TYPE)',
  429: 'Rate limit exceeded (RATE_LIMIT_EXCEEDED); retry after Retry-After seconds',
  500: 'Internal error (INTERNAL_ERROR)',
  502: 'A downstream service failed; the request can be retried',
  503: 'A dependency is unavailable, e.g. the API key cannot be checked (SERVICE_UNAVAILABLE); retry after Retry-After seconds',
};

/** Error responses for the given statuses, each with the Error body and the rate-limit headers. */
export function errorResponses(...statuses: number[]) {
  const out: Record<
    number,
    { description: string; headers: typeof RATE_LIMIT_HEADERS | Record<string, unknown>; content: { 'application/json': { schema: typeof ErrorSchema } } }
  > = {};
  for (const s of statuses) {
    const headers =
      s === 429 || s === 409 || s === 503 ? { ...RATE_LIMIT_HEADERS, 'Retry-After': intHeader('Seconds to wait before retrying') } : RATE_LIMIT_HEADERS;
    out[s] = { description: ERROR_DESCRIPTIONS[s] ?? 'Error', headers, content: { 'application/json': { schema: ErrorSchema } } };
  }
  return out;
}

/** A JSON success response with the rate-limit headers. */
export function jsonResponse(schema: z.ZodType, description: string) {
  return { description, headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema } } };
}

/** What a lookup answers for an id that names no resource: its 404 code, message and details. */
export interface NotFoundAnswer {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** The key, in a zod issue's params, of the 404 answer for a path parameter (see resourceIdParam). */
const NOT_FOUND_ISSUE = 'not_found';

/**
 * A resource id in a path (a UUID). A value of another form names no resource, so it is answered like an id that
 * names none: 404 with the resource's own answer (`notFound`), never 400 (docs/api-conventions.md). Path parameters
 * are checked before the body; the app's validation hook turns the failure into the 404.
 */
export function resourceIdParam(name: string, notFound: NotFoundAnswer, description: string) {
  return z
    .string()
    .refine((v) => UUID.test(v), { error: notFound.message, params: { [NOT_FOUND_ISSUE]: notFound } })
    .openapi({ param: { name, in: 'path' }, format: 'uuid', description, example: '0b9a3c55-8f0c-4d51-9f7e-2b1b4c0e6a10' });
}

/**
 * An id in a body or query field: a UUID of any version (the form of every id the gateway issues), `format: uuid` in
 * the OpenAPI; a value of another form is a 400 naming the field (docs/api-conventions.md).
 */
export function uuidField() {
  return z
    .string()
    .refine((v) => UUID.test(v), { error: 'must be a UUID' })
    .openapi({ format: 'uuid', example: '0b9a3c55-8f0c-4d51-9f7e-2b1b4c0e6a10' });
}

/** 64 hex characters, any case: an Ed25519 public key, a key's public_key_hash, a ledger transaction hash. */
export const HEX64_PATTERN = '^[0-9a-fA-F]{64}$';
/** A transaction hash as inputs take it: a ledger hash (64 hex) or an EVM one, `0x` optional, any case. */
export const TX_HASH_PATTERN = '^(0[xX])?[0-9a-fA-F]{64}$';
/** An identity named by its id (a UUID) or its ADI URL (`acc://…`, any case; the server also ignores surrounding spaces). */
export const IDENTITY_REF_PATTERN = '^([0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}|[aA][cC][cC]://[!-~\\u00a1-\\u167f][\\s\\S]*)$';
/** An Idempotency-Key header: 1-255 visible ASCII characters, bare or as an RFC 8941 quoted string. */
export const IDEMPOTENCY_KEY_PATTERN = '^[!-~]{1,255}$|^"[!-~]{1,255}"$';

/** The 404 answer for a path parameter that failed validation: the resource's own where it declares one. */
export function notFoundOfParamIssues(issues: readonly object[]): NotFoundAnswer {
  for (const issue of issues) {
    const answer = (issue as { params?: Record<string, unknown> }).params?.[NOT_FOUND_ISSUE] as NotFoundAnswer | undefined;
    if (answer) return answer;
  }
  return { code: 'NOT_FOUND', message: 'Not found' };
}
