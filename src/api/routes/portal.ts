/**
 * The self-service portal (public): GET /portal serves the sign-up page; POST /portal/signup
 * creates an organization with the sandbox grant (SANDBOX_IDENTITY_QUOTA identities, SANDBOX_CREDIT_GRANT credits)
 * and its first key — an owner key with the admin scope, so the organization manages its own keys — and returns
 * the raw key once. Sign-ups are rate limited per client IP like every unauthenticated call, and the whole gateway
 * accepts at most SIGNUP_MAX_PER_HOUR of them in any rolling hour (src/db/signups.ts): over it, 429
 * SIGNUP_LIMIT_REACHED with Retry-After and nothing written; with 0, sign-up is off (403 SIGNUP_DISABLED).
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Db } from '../../db/client.js';
import { organizationView } from '../../db/organizations.js';
import { SIGNUP_WINDOW_SECONDS, signUpOrganization } from '../../db/signups.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { portalPage } from '../portal/page.js';
import { errorResponses, RATE_LIMIT_HEADERS } from '../schemas/common.js';
import { CreatedApiKeySchema, oneTimeKeyView } from './admin-api-keys.js';

const SignupBody = z
  .object({
    organization_name: z.string().trim().min(2).max(100),
  })
  .openapi('SignupRequest');

const OrganizationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    identity_quota: z.number().int().openapi({ description: 'Identities that may exist at once (sandbox grant)' }),
    credit_grant: z.string().openapi({ description: 'Ledger credits granted in total (sandbox grant), integer as a string' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Organization');

export function registerPortalRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db: Db = deps.database.db;
  const { sandbox, defaultRpm, signupMaxPerHour } = deps.config.platform;
  const page = portalPage({ identityQuota: sandbox.identityQuota, creditGrant: sandbox.creditGrant.toString(), signupOpen: signupMaxPerHour > 0 });
  const signupErrors = errorResponses(400, 403, 429, 500);
  signupErrors[403].description = 'Self-service sign-up is turned off on this gateway (SIGNUP_DISABLED); the operator creates organizations';
  signupErrors[429].description =
    'Rate limit exceeded (RATE_LIMIT_EXCEEDED), or the gateway-wide limit of sign-ups per rolling hour is reached (SIGNUP_LIMIT_REACHED; nothing was created); retry after Retry-After seconds';

  app.openapi(
    createRoute({
      method: 'get',
      path: '/portal',
      tags: ['Portal'],
      summary: 'Sign-up page',
      description: 'Create an organization and its first API key (shown once).',
      security: [],
      responses: {
        200: { description: 'HTML page', headers: RATE_LIMIT_HEADERS, content: { 'text/html': { schema: z.string() } } },
        ...errorResponses(429),
      },
    }),
    ((c: Context<AppEnv>) => {
      c.header('Cache-Control', 'no-store');
      return c.html(page);
    }) as never,
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/portal/signup',
      tags: ['Portal'],
      summary: 'Create an organization and its first API key',
      description:
        'Public. The organization receives the sandbox grant; its first key holds read, write, proof:read and admin. The raw key is in this response only.',
      security: [],
      request: { body: { required: true, content: { 'application/json': { schema: SignupBody } } } },
      responses: {
        201: {
          description: 'Created',
          headers: RATE_LIMIT_HEADERS,
          content: {
            'application/json': {
              schema: z.object({ organization: OrganizationSchema, api_key: CreatedApiKeySchema, warning: z.string() }),
            },
          },
        },
        ...signupErrors,
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const result = await signUpOrganization(db, {
        name: body.organization_name,
        identityQuota: sandbox.identityQuota,
        creditGrant: sandbox.creditGrant,
        keyRateLimitRpm: defaultRpm,
        maxPerHour: signupMaxPerHour,
      });
      if (!result.ok && result.reason === 'disabled') {
        throw new ApiError(403, 'SIGNUP_DISABLED', 'Self-service sign-up is turned off on this gateway; ask its operator for an organization');
      }
      if (!result.ok) {
        c.get('logger').warn('sign-up refused: hourly sign-up limit reached', { limit: result.maxPerHour, retry_after_s: result.retryAfterSeconds });
        throw new ApiError(
          429,
          'SIGNUP_LIMIT_REACHED',
          `Sign-up limit reached: this gateway accepts at most ${result.maxPerHour} new organizations per hour; retry after ${result.retryAfterSeconds} seconds`,
          { limit: result.maxPerHour, window_seconds: SIGNUP_WINDOW_SECONDS, retry_after_seconds: result.retryAfterSeconds },
          { 'Retry-After': String(result.retryAfterSeconds) },
        );
      }
      c.header('Cache-Control', 'no-store');
      c.get('logger').info('organization signed up', { org_id: result.org.id, key_id: result.row.id });
      return c.json(
        {
          organization: organizationView(result.org),
          api_key: oneTimeKeyView(result.row, result.rawKey, new Date((deps.now ?? Date.now)())),
          warning: 'Store this key now: it is shown only once and cannot be retrieved again.',
        },
        201,
      );
    },
  );
}
