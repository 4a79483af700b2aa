/**
 * Identities, all scoped to the caller's organization (the use case: src/services/identities.ts):
 *   POST   /v1/identity        202: the row (status creating) + status_url + polling hints; provisioning runs in
 *                              the workflow identity-<id>. Idempotency-Key honoured.
 *   GET    /v1/identity/{id}   the identity, its current provisioning stage and chain accounts
 *   GET    /v1/identities      list, newest first, cursor pagination, status filter
 *   PATCH  /v1/identity/{id}   { public_key }: repairs a hash-only identity when the key hashes to public_key_hash
 *   DELETE /v1/identity/{id}   retire (soft; on-chain accounts stay; the quota slot is freed)
 *   GET    /v1/portfolio       every identity with live credits and native balances per chain
 * Another organization's identity is a 404, exactly like an unknown id.
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { IDENTITY_STATUSES, listOrgIdentities } from '../../db/identities.js';
import { createIdentityService, type IdentityService, type IdentityWithAccounts } from '../../services/identities.js';
import { findOrgIdentity } from '../../services/identity-access.js';
import { cursorOf, keysetPage } from '../pagination.js';
import { CursorPaginationSchema, CursorParam, DEFAULT_PAGE_SIZE, PageSizeParam } from '../schemas/pagination.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { callerOf, requireAuth } from '../middleware/auth.js';
import { errorResponses, jsonResponse } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';
import { CreateBody, IdentitySchema, identityView, IdParam, PatchBody, PollingSchema, PortfolioEntry } from './identity-schemas.js';

const views = (items: IdentityWithAccounts[]) => items.map(({ row, accounts }) => identityView(row, accounts));

export function registerIdentityRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const identities = createIdentityService(deps);
  registerCreate(app, deps, identities);
  registerRead(app, deps, identities);
  registerList(app, deps, identities);
  registerRepair(app, deps, identities);
  registerRetire(app, deps, identities);
  registerPortfolio(app, deps, identities);
}

function registerCreate(app: OpenAPIHono<AppEnv>, deps: AppDeps, identities: IdentityService) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/identity',
      tags: ['Identity'],
      summary: 'Create (provision) an identity',
      description:
        'Accepts the request and answers 202 at once with the identity in status `creating`. The provisioning workflow then creates the ADI with its key book and key page (sponsored by the gateway), adds credits, creates the data account, puts the client key hash on the key page and deploys the abstract account on each requested chain; the status becomes `active` (chain_accounts filled) or `failed` (error_message). Poll status_url as the polling block says. Each identity counts against the organization quota until retired (failed ones too); the credits are charged to the organization grant.',
      scopes: ['write'],
      idempotent: true,
      request: { body: { required: true, content: { 'application/json': { schema: CreateBody } } } },
      responses: {
        202: jsonResponse(
          z.object({
            identity: IdentitySchema,
            status_url: z.string(),
            polling: PollingSchema,
            warnings: z.array(z.string()).optional(),
            idempotent: z.boolean().optional(),
          }),
          'Accepted: provisioning runs in the background',
        ),
        ...errorResponses(400, 402, 409, 503),
      },
    }),
    async (c) => {
      const { identity, warnings, polling } = await identities.create(callerOf(c), c.req.valid('json'));
      const statusUrl = `/v1/identity/${identity.id}`;
      c.header('Location', statusUrl);
      return c.json({ identity: identityView(identity), status_url: statusUrl, polling, ...(warnings.length ? { warnings } : {}) }, 202);
    },
  );
}

function registerRead(app: OpenAPIHono<AppEnv>, deps: AppDeps, identities: IdentityService) {
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/identity/{id}',
      tags: ['Identity'],
      summary: 'Read an identity',
      description:
        'Status, current provisioning stage, chain accounts, credits as last read, can_sign. Cheap: reads the gateway database only, so it is the one to poll.',
      scopes: ['read'],
      request: { params: IdParam },
      responses: { 200: jsonResponse(IdentitySchema, 'The identity'), ...errorResponses(404) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const { row, accounts } = await identities.read(auth.orgId, c.req.valid('param').id);
      return c.json(identityView(row, accounts), 200);
    },
  );
}

function registerList(app: OpenAPIHono<AppEnv>, deps: AppDeps, identities: IdentityService) {
  const db = deps.database.db;
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/identities',
      tags: ['Identity'],
      summary: "List the organization's identities",
      description: 'Newest first. Retired identities are left out unless status=retired. Pass next_cursor back as cursor for the next page.',
      scopes: ['read'],
      request: {
        query: z.object({
          status: z.enum(IDENTITY_STATUSES).optional(),
          limit: PageSizeParam,
          cursor: CursorParam,
        }),
      },
      responses: {
        200: jsonResponse(
          z.object({
            identities: z.array(IdentitySchema),
            pagination: CursorPaginationSchema,
          }),
          'A page of identities',
        ),
        ...errorResponses(400),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const q = c.req.valid('query');
      const limit = q.limit ?? DEFAULT_PAGE_SIZE;
      const { page, pagination } = keysetPage(await listOrgIdentities(db, auth.orgId, { status: q.status, limit, cursor: cursorOf(q.cursor) }), limit);
      return c.json(
        {
          identities: views(await identities.withAccounts(page)),
          pagination,
        },
        200,
      );
    },
  );
}

function registerRepair(app: OpenAPIHono<AppEnv>, deps: AppDeps, identities: IdentityService) {
  app.openapi(
    secureRoute(deps, {
      method: 'patch',
      path: '/v1/identity/{id}',
      tags: ['Identity'],
      summary: 'Repair a hash-only identity',
      description:
        'Supplies the public key of an identity created with only public_key_hash. The key must be a valid Ed25519 key whose SHA-256 equals public_key_hash; then can_sign becomes true. Sending the key the identity already has is a no-op.',
      scopes: ['write'],
      request: { params: IdParam, body: { required: true, content: { 'application/json': { schema: PatchBody } } } },
      responses: { 200: jsonResponse(IdentitySchema, 'The repaired identity'), ...errorResponses(400, 404, 409) },
    }),
    async (c) => {
      const { row, accounts } = await identities.repair(callerOf(c), c.req.valid('param').id, c.req.valid('json').public_key);
      return c.json(identityView(row, accounts), 200);
    },
  );
}

function registerRetire(app: OpenAPIHono<AppEnv>, deps: AppDeps, identities: IdentityService) {
  app.openapi(
    secureRoute(deps, {
      method: 'delete',
      path: '/v1/identity/{id}',
      tags: ['Identity'],
      summary: 'Retire an identity',
      description:
        'Soft delete inside the gateway: the identity stops counting against the quota and leaves the portfolio and default listings; GET still shows it with status retired. The ADI, key book, key page and chain accounts stay on chain. Retiring again is a no-op.',
      scopes: ['write'],
      request: { params: IdParam },
      responses: {
        200: jsonResponse(z.object({ retired: z.boolean(), identity: IdentitySchema, note: z.string() }), 'Retired'),
        ...errorResponses(404),
      },
    }),
    async (c) => {
      const { row, accounts } = await identities.retire(callerOf(c), c.req.valid('param').id);
      return c.json(
        {
          retired: true,
          identity: identityView(row, accounts),
          note: 'The quota slot is free. The ADI, its key book and key page, and the chain accounts remain on chain.',
        },
        200,
      );
    },
  );
}

function registerPortfolio(app: OpenAPIHono<AppEnv>, deps: AppDeps, identities: IdentityService) {
  const db = deps.database.db;
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/portfolio',
      tags: ['Identity'],
      summary: 'Identities with live balances',
      description:
        "The organization's identities (not retired), newest first, each with its key page's credits and its abstract account's native balance on each chain, read live and in parallel. A chain or the ledger that does not answer gives a per-entry error, never a failed request. Paged like GET /v1/identities (`limit` 1–200, default 50; `pagination.next_cursor`); totals count the page. `identity` (id or ADI URL) narrows the result to one identity.",
      scopes: ['read'],
      request: {
        query: z.object({
          identity: z.string().max(500).optional(),
          limit: z.coerce.number().int().min(1).max(200).optional(),
          cursor: CursorParam,
        }),
      },
      responses: {
        200: jsonResponse(
          z.object({
            identities: z.array(PortfolioEntry),
            total_identities: z.number().int(),
            total_chains: z.number().int(),
            pagination: CursorPaginationSchema,
          }),
          'Portfolio',
        ),
        ...errorResponses(400, 404),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const q = c.req.valid('query');
      const limit = q.limit ?? DEFAULT_PAGE_SIZE;
      const { page, pagination } = keysetPage(q.identity ? [] : await listOrgIdentities(db, auth.orgId, { limit, cursor: cursorOf(q.cursor) }), limit);
      const rows = q.identity ? [await findOrgIdentity(db, auth.orgId, q.identity, { field: 'identity', adiUrl: true })] : page;
      const entries = await identities.liveBalances(rows);
      return c.json(
        {
          identities: entries,
          total_identities: entries.length,
          total_chains: entries.reduce((n, e) => n + e.chains.length, 0),
          pagination,
        },
        200,
      );
    },
  );
}
