/**
 * Admin API keys, all scoped to the caller's organization and needing the `admin` scope:
 *   POST   /v1/admin/api-keys                  create: the key's fields, its raw key once (Idempotency-Key supported)
 *   GET    /v1/admin/api-keys                  list (prefixes only)
 *   DELETE /v1/admin/api-keys/{key_id}         revoke (immediate, final)
 *   POST   /v1/admin/api-keys/{key_id}/rotate  new key with the same settings; the old one is revoked
 * Another organization's key id is a 404, exactly like an unknown id. A key creates or rotates only keys within its own
 * bounds (checkWithinCaller): scopes it holds, a rate limit no higher than its own, an expiry no later than its own.
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import {
  apiKeyView,
  createApiKeyWithinLimit,
  DEFAULT_PERMISSIONS,
  getApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  SCOPES,
  type ApiKeyRow,
} from '../../db/api-keys.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { requireAuth } from '../middleware/auth.js';
import { SCOPE_RULES } from '../middleware/scopes.js';
import { withholdOnReplay } from '../middleware/idempotency.js';
import { ErrorSchema, errorResponses, jsonResponse, RATE_LIMIT_HEADERS, resourceIdParam, uuidField } from '../schemas/common.js';
import { createdAtPage, pageRequest } from '../pagination.js';
import { pageQuery, PaginationSchema } from '../schemas/pagination.js';
import { secureRoute } from '../secure-route.js';

const API_KEY_NOT_FOUND = { code: 'NOT_FOUND', message: 'API key not found' };

/**
 * The scopes a key holds in effect: its own, and the narrow integration scopes whose any-of rule it passes (a `write`
 * or `admin` key may call every webhook:write operation, so it may grant webhook:write). `admin` grants nothing more:
 * a key never grants a scope it does not hold.
 */
function heldScopes(permissions: readonly string[]): Set<string> {
  const held = new Set(permissions);
  const narrow = { 'webhook:write': SCOPE_RULES.webhookWrite, 'webhook:read': SCOPE_RULES.webhookRead, 'events:read': SCOPE_RULES.eventsRead };
  for (const [scope, rule] of Object.entries(narrow)) if (rule.anyOf.some((s) => held.has(s))) held.add(scope);
  return held;
}

/**
 * 403 API_KEY_EXCEEDS_CALLER (details.bound names which) unless the key described by `wanted` is within the caller's
 * own bounds: every scope held by the caller, rate_limit_rpm at most the caller's, and an expiry no later than the
 * caller's (a caller that expires cannot make a key that never does).
 */
function checkWithinCaller(caller: ApiKeyRow, wanted: { permissions: readonly string[]; rateLimitRpm: number; expiresAt: Date | null }): void {
  const held = heldScopes(caller.permissions);
  const beyond = wanted.permissions.filter((s) => !held.has(s));
  if (beyond.length > 0) {
    throw new ApiError(403, 'API_KEY_EXCEEDS_CALLER', `scopes: the calling key does not hold ${beyond.join(', ')}, so it cannot grant it`, {
      bound: 'scopes',
      not_held: beyond,
      held: [...held],
    });
  }
  if (wanted.rateLimitRpm > caller.rateLimitRpm) {
    throw new ApiError(403, 'API_KEY_EXCEEDS_CALLER', `rate_limit_rpm: ${wanted.rateLimitRpm} exceeds the calling key's own limit (${caller.rateLimitRpm})`, {
      bound: 'rate_limit_rpm',
      requested: wanted.rateLimitRpm,
      max: caller.rateLimitRpm,
    });
  }
  if (caller.expiresAt && (wanted.expiresAt === null || wanted.expiresAt > caller.expiresAt)) {
    const max = caller.expiresAt.toISOString();
    throw new ApiError(
      403,
      'API_KEY_EXCEEDS_CALLER',
      `expires_at: the calling key expires at ${max}; the key must expire no later (${wanted.expiresAt ? wanted.expiresAt.toISOString() : 'never'} asked)`,
      { bound: 'expires_at', requested: wanted.expiresAt?.toISOString() ?? null, max },
    );
  }
}

const ScopeSchema = z.enum(SCOPES).openapi({
  description:
    'read, write, proof:read (proof endpoints), admin (key management), webhook:write / webhook:read (webhook endpoints and deliveries only), events:read (the event log only)',
});

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: 'First characters of the key, to recognise it', example: 'ck_live_4fT9aQ2b' }),
    org_id: z.uuid(),
    permissions: z.array(z.string()),
    rate_limit_rpm: z.number().int(),
    is_active: z.boolean().openapi({ description: 'false once revoked or expired' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    expires_at: z.string().nullable().openapi({ format: 'date-time' }),
    revoked_at: z.string().nullable().openapi({ format: 'date-time' }),
    last_used_at: z.string().nullable().openapi({ format: 'date-time', description: 'Updated at most once a minute' }),
  })
  .openapi('ApiKey');

export const CreatedApiKeySchema = ApiKeySchema.extend({
  key: z.string().openapi({ description: 'The raw key. Shown only in this response; store it now.', example: 'ck_live_…' }),
}).openapi('CreatedApiKey');

/** A key as its create (or rotate) answer shows it: the fields GET /v1/admin/api-keys lists, plus the raw key, once. */
export function oneTimeKeyView(row: ApiKeyRow, rawKey: string, now: Date): z.infer<typeof CreatedApiKeySchema> {
  return { ...apiKeyView(row, now), key: rawKey };
}

const CreateBody = z
  .object({
    name: z.string().trim().min(1).max(255),
    org_id: uuidField().optional().openapi({ description: "Must be the caller's organization (the default)" }),
    permissions: z.array(ScopeSchema).min(1).max(SCOPES.length).optional().openapi({ description: 'Default: read, write, proof:read' }),
    rate_limit_rpm: z.number().int().min(1).max(100_000).optional().openapi({
      description:
        "Requests per minute; at most the creating key's own limit (else 403 API_KEY_EXCEEDS_CALLER). Default 60 (RATE_LIMIT_DEFAULT_RPM), or the creating key's limit when that is lower",
    }),
    expires_at: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({ description: "ISO 8601; must be in the future, and no later than the creating key's own expiry when it has one (required then)" }),
  })
  .openapi('CreateApiKeyRequest');

const WARNING = 'Store this key now: it is shown only once and cannot be retrieved again.';
/** what an idempotent replay of a create says in place of the raw key, which is never stored */
const REPLAY_NOTE =
  'The raw key is shown only once, in the original response, and is not stored for replay. If it was lost, rotate the key (POST /v1/admin/api-keys/{key_id}/rotate).';

const ReplayableKey = z.string().optional().openapi({
  description: 'The raw key. Shown only in the original response (absent from an idempotent replay); store it now.',
  example: 'ck_live_…',
});

/**
 * The create response: the key's own fields at the top level (as GET /v1/admin/api-keys lists them) with the raw key
 * once, and the same object as `api_key` (the earlier shape). On an idempotent replay both `key`s are absent and
 * `redacted` and `note` say why.
 */
const CreateResponseSchema = ApiKeySchema.extend({
  key: ReplayableKey,
  api_key: CreatedApiKeySchema.extend({ key: ReplayableKey }).openapi({ description: 'The same key fields as at the top level' }),
  warning: z.string().optional().openapi({ description: 'Store the key now (absent from an idempotent replay, which has no key: see note)' }),
  idempotent: z.boolean().optional().openapi({ description: 'true on a replay of an earlier request with the same Idempotency-Key' }),
  redacted: z
    .array(z.string())
    .optional()
    .openapi({ description: 'On a replay: the fields withheld because they are shown only once', example: ['key', 'api_key.key'] }),
  note: z.string().optional().openapi({ description: 'On a replay: why the raw key is missing and what to do' }),
}).openapi('CreatedApiKeyResponse');

/** The rotate response: the new key's fields at the top level with its raw key once, and the same object as `new_key`. */
const RotateResponseSchema = CreatedApiKeySchema.extend({
  previous_id: z.uuid().openapi({ description: 'The key rotated (now revoked)' }),
  new_key: CreatedApiKeySchema.openapi({ description: 'The same key fields as at the top level' }),
  warning: z.string(),
}).openapi('RotatedApiKeyResponse');

export function registerAdminApiKeyRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const now = () => new Date((deps.now ?? Date.now)());
  const json = (schema: z.ZodType, description: string) => ({
    description,
    headers: RATE_LIMIT_HEADERS,
    content: { 'application/json': { schema } },
  });

  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/admin/api-keys',
      tags: ['Admin'],
      summary: 'Create an API key',
      description:
        "Creates a key in the caller's organization. The raw key (ck_live_…) is in this response only; the gateway keeps just its SHA-256. The new key must be within the creating key's bounds: only scopes it holds, a rate_limit_rpm no higher than its own, an expires_at no later than its own (a key that expires cannot create one that never does); beyond them 403 API_KEY_EXCEEDS_CALLER with details.bound naming scopes, rate_limit_rpm or expires_at. An organization holds at most MAX_API_KEYS_PER_ORG active keys (403 API_KEY_LIMIT_REACHED; revoke one first).",
      scopes: ['admin'],
      idempotent: true,
      request: { body: { required: true, content: { 'application/json': { schema: CreateBody } } } },
      responses: {
        201: json(CreateResponseSchema, 'Created; the raw key is returned once (never replayed); not cacheable'),
        ...errorResponses(400),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const body = c.req.valid('json');
      const creator = await getApiKey(db, auth.orgId, auth.keyId);
      if (!creator) throw new ApiError(401, 'INVALID_API_KEY', 'Invalid API key'); // deleted since the auth check
      if (body.org_id && body.org_id !== auth.orgId) {
        throw new ApiError(403, 'ORG_MISMATCH', "org_id must be the caller's own organization");
      }
      const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
      if (expiresAt && expiresAt <= now()) throw new ApiError(400, 'VALIDATION_ERROR', 'expires_at: must be in the future', { field: 'expires_at' });
      const permissions = body.permissions ?? DEFAULT_PERMISSIONS;
      const rateLimitRpm = body.rate_limit_rpm ?? Math.min(deps.config.platform.defaultRpm, creator.rateLimitRpm);
      checkWithinCaller(creator, { permissions, rateLimitRpm, expiresAt });
      const result = await createApiKeyWithinLimit(
        db,
        { orgId: auth.orgId, name: body.name, permissions, rateLimitRpm, expiresAt },
        deps.config.platform.maxKeysPerOrg,
        now(),
      );
      if ('limitReached' in result) {
        throw new ApiError(
          403,
          'API_KEY_LIMIT_REACHED',
          `The organization already holds ${result.limitReached.active} active API keys (limit ${result.limitReached.limit}); revoke one first`,
          result.limitReached,
        );
      }
      const { row, rawKey } = result.created;
      c.get('logger').info('api key created', { new_key_id: row.id });
      withholdOnReplay(c, ['key', 'api_key.key'], REPLAY_NOTE, { drop: ['warning'] });
      c.header('Cache-Control', 'no-store');
      const view = oneTimeKeyView(row, rawKey, now());
      return c.json({ ...view, api_key: view, warning: WARNING }, 201);
    },
  );

  registerListRoute(app, deps);

  app.openapi(
    secureRoute(deps, {
      method: 'delete',
      path: '/v1/admin/api-keys/{key_id}',
      tags: ['Admin'],
      summary: 'Revoke an API key',
      description: 'Deactivates the key at once, for every API process; a revoked key cannot be restored. Revoking a revoked key is a no-op (204).',
      scopes: ['admin'],
      request: { params: z.object({ key_id: resourceIdParam('key_id', API_KEY_NOT_FOUND, 'API key id (UUID)') }) },
      responses: {
        204: { description: 'Revoked', headers: RATE_LIMIT_HEADERS },
        ...errorResponses(400, 404),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const { key_id } = c.req.valid('param');
      if (!(await revokeApiKey(db, auth.orgId, key_id, now()))) throw new ApiError(404, API_KEY_NOT_FOUND.code, API_KEY_NOT_FOUND.message);
      c.get('logger').info('api key revoked', { revoked_key_id: key_id });
      return c.body(null, 204);
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/admin/api-keys/{key_id}/rotate',
      tags: ['Admin'],
      summary: 'Rotate an API key',
      description:
        "Creates a replacement with the same name, permissions, rate limit and expiry and revokes the old key in one transaction. The new raw key is returned once. The rotated key's scopes, rate limit and expiry must be within the calling key's own (else 403 API_KEY_EXCEEDS_CALLER naming the bound; nothing changes). An expired key cannot be rotated (409 API_KEY_EXPIRED naming the expiry): create a new key.",
      scopes: ['admin'],
      request: { params: z.object({ key_id: resourceIdParam('key_id', API_KEY_NOT_FOUND, 'API key id (UUID)') }) },
      responses: {
        200: json(RotateResponseSchema, "Rotated; the new key's fields at the top level and in new_key, its raw key returned once"),
        ...errorResponses(400, 404),
        409: {
          description: 'The key has expired (API_KEY_EXPIRED; details.expires_at): create a new key instead',
          headers: RATE_LIMIT_HEADERS,
          content: { 'application/json': { schema: ErrorSchema } },
        },
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const { key_id } = c.req.valid('param');
      const caller = await getApiKey(db, auth.orgId, auth.keyId);
      if (!caller) throw new ApiError(401, 'INVALID_API_KEY', 'Invalid API key'); // deleted since the auth check
      const rotated = await rotateApiKey(db, auth.orgId, key_id, now(), (old) =>
        checkWithinCaller(caller, { permissions: old.permissions, rateLimitRpm: old.rateLimitRpm, expiresAt: old.expiresAt }),
      );
      if (!rotated) throw new ApiError(404, API_KEY_NOT_FOUND.code, API_KEY_NOT_FOUND.message);
      if ('expired' in rotated) {
        const at = rotated.expired.expiresAt!.toISOString();
        throw new ApiError(409, 'API_KEY_EXPIRED', `API key expired at ${at}; a rotation would inherit that expiry — create a new key instead`, {
          expires_at: at,
        });
      }
      c.get('logger').info('api key rotated', { previous_key_id: key_id, new_key_id: rotated.row.id });
      c.header('Cache-Control', 'no-store');
      const view = oneTimeKeyView(rotated.row, rotated.rawKey, now());
      return c.json({ ...view, previous_id: key_id, new_key: view, warning: WARNING }, 200);
    },
  );
}

/** GET /v1/admin/api-keys: a page of the organization's keys, oldest first. */
function registerListRoute(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const now = () => new Date((deps.now ?? Date.now)());
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/admin/api-keys',
      tags: ['Admin'],
      summary: "List the organization's API keys",
      description:
        'Prefixes and settings only; raw keys and hashes are never returned. Oldest first; page by `cursor` (the `next_cursor` of the previous page) or by `offset`, not both.',
      scopes: ['admin'],
      request: { query: z.object(pageQuery()) },
      responses: {
        200: jsonResponse(
          z.object({ api_keys: z.array(ApiKeySchema), pagination: PaginationSchema }),
          "A page of the caller's organization's keys, oldest first",
        ),
        ...errorResponses(400),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const req = pageRequest(c.req.valid('query'));
      const { rows, total } = await listApiKeys(db, auth.orgId, { ...req, limit: req.limit + 1 });
      const { page: keys, pagination } = createdAtPage(rows, req, total);
      const t = now();
      return c.json({ api_keys: keys.map((k) => apiKeyView(k, t)), pagination }, 200);
    },
  );
}
