/**
 * Identities, all scoped to the caller's organization (the use case: src/services/identities.ts):
 *   POST   /v1/identity        202: the row (status creating) + status_url + polling hints; provisioning runs in
 *                              the workflow identity-<id>. Idempotency-Key honoured.
 *   GET    /v1/identity/{id}   the identity, its current provisioning stage and chain accounts
 *   GET    /v1/identities      list, newest first, by cursor or offset, status filter
 *   PATCH  /v1/identity/{id}   { public_key }: repairs a hash-only identity when the key hashes to public_key_hash;
 *                              { link_chains }: deploys its account on more chains (202; src/services/identity-chains.ts)
 *   DELETE /v1/identity/{id}   retire (soft; on-chain accounts stay; the quota slot is freed)
 *   GET    /v1/portfolio       every identity with live credits and native balances per chain; totals over all
 * Another organization's identity is a 404, exactly like an unknown id.
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { IDENTITY_STATUSES } from '../../db/identities.js';
import { createIdentityService, type IdentityService, type IdentityWithAccounts } from '../../services/identities.js';
import { createIdentityChainService } from '../../services/identity-chains.js';
import { encodeCursor, pageOf, pageRequest } from '../pagination.js';
import { pageQuery, PaginationSchema } from '../schemas/pagination.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { callerOf, requireAuth } from '../middleware/auth.js';
import { errorResponses, IDENTITY_REF_PATTERN, jsonResponse } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';
import { MnemonicRetrievalSchema, registerMnemonicRoute } from './identity-provider.js';
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
  registerMnemonicRoute(app, deps);
}

function registerCreate(app: OpenAPIHono<AppEnv>, deps: AppDeps, identities: IdentityService) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/identity',
      tags: ['Identity'],
      summary: 'Create (provision) an identity',
      description:
        "Accepts the request and answers 202 at once with the identity in status `creating`. The provisioning workflow then creates the ADI with its key book and key page (sponsored by the gateway), adds credits, creates the data account, puts the client key hash on the key page and deploys the abstract account on each requested chain; the status becomes `active` (chain_accounts filled) or `failed` (error_message). Poll status_url as the polling block says. Each identity counts against the organization quota until retired (failed ones too); the credits are charged to the organization grant. With signing_mode provider (no key fields) the gateway generates the key from a BIP-39 mnemonic (SLIP-0010 ed25519, m/44'/281'/0'/0'/0'), keeps it envelope-encrypted and signs for the identity within its provider_policy; the answer (and only it) carries mnemonic_retrieval, a URL that gives the mnemonic once before it expires.",
      scopes: ['write'],
      idempotent: true,
      request: { body: { required: true, content: { 'application/json': { schema: CreateBody } } } },
      responses: {
        202: jsonResponse(
          IdentitySchema.extend({
            identity: IdentitySchema.openapi({ description: 'The same identity fields as at the top level (the contract names this object)' }),
            status_url: z.string().openapi({ description: '/v1/identity/{id}: poll it as `polling` says' }),
            polling: PollingSchema,
            warnings: z.array(z.string()).optional(),
            mnemonic_retrieval: MnemonicRetrievalSchema.optional(),
            idempotent: z.boolean().optional(),
          }).openapi('IdentityAccepted'),
          "Accepted: provisioning runs in the background. The identity's own fields (id, status, adi_url, …) are at the top level, as GET /v1/identity/{id} shows them, and also under `identity`",
        ),
        ...errorResponses(400, 402, 409, 503),
      },
    }),
    async (c) => {
      const { identity, warnings, polling, mnemonicRetrieval } = await identities.create(callerOf(c), c.req.valid('json'));
      const statusUrl = `/v1/identity/${identity.id}`;
      c.header('Location', statusUrl);
      const view = identityView(identity);
      const mnemonic = mnemonicRetrieval ? { mnemonic_retrieval: mnemonicRetrieval } : {};
      return c.json({ ...view, identity: view, status_url: statusUrl, polling, ...(warnings.length ? { warnings } : {}), ...mnemonic }, 202);
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
        "Status, current provisioning stage, chain accounts, can_sign, and the key page's credits read from the ledger (active or retired identities; bounded at 3 s, after which the recorded value is answered with credit_balance_stale: true). While the identity is creating it reads the gateway database only, so it is the one to poll.",
      scopes: ['read'],
      request: { params: IdParam },
      responses: { 200: jsonResponse(IdentitySchema, 'The identity'), ...errorResponses(404) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const { row, accounts, credit } = await identities.read(auth.orgId, c.req.valid('param').id, c.get('logger'));
      return c.json(identityView(row, accounts, credit), 200);
    },
  );
}

function registerList(app: OpenAPIHono<AppEnv>, deps: AppDeps, identities: IdentityService) {
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/identities',
      tags: ['Identity'],
      summary: "List the organization's identities",
      description:
        'Newest first. Retired identities are left out unless status=retired. Page by `cursor` (the `next_cursor` of the previous page) or by `offset`, not both; `pagination.total` counts every identity the filter matches. credit_balance is the recorded value here (credit_balance_stale true): GET /v1/identity/{id} or the portfolio read it live.',
      scopes: ['read'],
      request: {
        query: z.object({
          status: z.enum(IDENTITY_STATUSES).optional(),
          ...pageQuery(),
        }),
      },
      responses: {
        200: jsonResponse(z.object({ identities: z.array(IdentitySchema), pagination: PaginationSchema }), 'A page of identities'),
        ...errorResponses(400),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const q = c.req.valid('query');
      const req = pageRequest(q);
      const { rows, total } = await identities.list(auth.orgId, { status: q.status }, { ...req, limit: req.limit + 1 });
      const { page, pagination } = pageOf(rows, req, total, (r) => encodeCursor(r.row));
      return c.json({ identities: views(page), pagination }, 200);
    },
  );
}

function registerRepair(app: OpenAPIHono<AppEnv>, deps: AppDeps, identities: IdentityService) {
  const identityChains = createIdentityChainService(deps, identities);
  app.openapi(
    secureRoute(deps, {
      method: 'patch',
      path: '/v1/identity/{id}',
      tags: ['Identity'],
      summary: 'Repair a hash-only identity; link chains',
      description:
        "Takes `public_key`, `link_chains` or both (an empty body is a 400 naming them); every field is checked before anything changes. `public_key` supplies the public key of an identity created with only public_key_hash: a valid Ed25519 key whose SHA-256 equals public_key_hash; then can_sign becomes true. Sending the key the identity already has is a no-op. `link_chains` deploys an active identity's abstract account on more chains at the address it has on its other chains (CREATE2, as provisioning): 202 when a deployment was started (or is already running) — the chains join requested_chains and show in linking_chains until their account is in chain_accounts (an `identity.chain_linked` event per chain; `identity.chain_link_failed` with the reason, the chain leaving requested_chains, when one fails for good); 200 when every chain named is linked already (nothing started). Status stays active. An unknown chain (UNKNOWN_CHAIN) or one without system contracts (CHAIN_UNAVAILABLE) is a 400 naming link_chains; an identity that is not active is a 409 IDENTITY_NOT_ACTIVE. Linking charges no credits and takes no quota slot: the gateway pays the gas. Provider-signing identities (scope provider:manage, else 403 INSUFFICIENT_SCOPE): `provider_policy` replaces the policy the gateway signs within (allowed_chains, allowed_targets, max_value_per_leg, max_value_per_24h); `public_key` switches the identity to external signing: a governance operation (add the key, remove the held one) signed by the held key, answered 202 with key_switch; once it executed the held key is destroyed and signing_mode becomes external.",
      scopes: ['write'],
      request: { params: IdParam, body: { required: true, content: { 'application/json': { schema: PatchBody } } } },
      responses: {
        200: jsonResponse(IdentitySchema, 'The identity, changed; no deployment was started'),
        202: jsonResponse(
          IdentitySchema.extend({
            key_switch: z.object({ governance_op_id: z.uuid(), status: z.string(), status_url: z.string() }).optional().openapi({
              description: 'Provider → external: the governance operation replacing the held key (signed by it); once executed the held key is destroyed',
            }),
          }),
          'The identity; the deployment of its account on the chains in linking_chains runs, or (key_switch) the held key is being replaced',
        ),
        ...errorResponses(400, 404, 409, 503),
      },
    }),
    async (c) => {
      const providerManage = requireAuth(c).permissions.includes('provider:manage');
      const { row, accounts, linking, keySwitch } = await identityChains.patch(callerOf(c), c.req.valid('param').id, c.req.valid('json'), { providerManage });
      if (keySwitch) return c.json({ ...identityView(row, accounts), key_switch: keySwitch }, 202);
      if (linking.length) return c.json(identityView(row, accounts), 202);
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

/** What `include` of the portfolio may name. */
const PORTFOLIO_INCLUDES = ['balances'] as const;

function registerPortfolio(app: OpenAPIHono<AppEnv>, deps: AppDeps, identities: IdentityService) {
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/portfolio',
      tags: ['Identity'],
      summary: 'Identities with live balances',
      description:
        "The organization's identities (not retired), newest first, each with its key page's credits and its abstract account's native balance on each chain, read live and in parallel. A chain or the ledger that does not answer gives a per-entry error, never a failed request. Paged like every list (`limit`, `cursor` or `offset`, `pagination`); `totals` (and total_identities, total_chains) count every identity and chain account the filter matches, not the page. `identity` (id or ADI URL) narrows the result to one identity. `include=balances` adds to each chain account `balances`: its native balance as a list entry.",
      scopes: ['read'],
      request: {
        query: z.object({
          identity: z.string().max(500).optional().openapi({ pattern: IDENTITY_REF_PATTERN }),
          include: z
            .string()
            .max(200)
            .optional()
            .openapi({
              description: `Comma-separated extras: ${PORTFOLIO_INCLUDES.join(', ')}. Any other value is a 400`,
              pattern: `^[ \\t]*(${PORTFOLIO_INCLUDES.join('|')})?[ \\t]*(,[ \\t]*(${PORTFOLIO_INCLUDES.join('|')})?[ \\t]*)*$`,
            }),
          ...pageQuery(),
        }),
      },
      responses: {
        200: jsonResponse(
          z.object({
            identities: z.array(PortfolioEntry),
            totals: z
              .object({
                identities: z.number().int().openapi({ description: 'Identities the filter matches (all pages)' }),
                chains: z.number().int().openapi({ description: 'Chain accounts those identities hold (all pages)' }),
              })
              .openapi({ description: 'Over every identity the filter matches, not only this page' }),
            total_identities: z.number().int().openapi({ description: 'totals.identities (compatibility)' }),
            total_chains: z.number().int().openapi({ description: "totals.chains (the name Certen's clients read)" }),
            pagination: PaginationSchema,
          }),
          'Portfolio',
        ),
        ...errorResponses(400, 404),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const q = c.req.valid('query');
      const include = includes(q.include);
      const req = pageRequest(q);
      const { rows, total, totals } = await identities.portfolioPage(auth.orgId, q.identity, { ...req, limit: req.limit + 1 });
      const { page, pagination } = pageOf(rows, req, total, encodeCursor);
      const entries = await identities.liveBalances(page, { balances: include.has('balances') });
      return c.json({ identities: entries, totals, total_identities: totals.identities, total_chains: totals.chains, pagination }, 200);
    },
  );
}

/** The `include` values, each one the portfolio knows; anything else is a 400 naming the field and listing them. */
function includes(raw: string | undefined): Set<(typeof PORTFOLIO_INCLUDES)[number]> {
  const out = new Set<(typeof PORTFOLIO_INCLUDES)[number]>();
  for (const v of (raw ?? '').split(',').map((x) => x.trim())) {
    if (v === '') continue;
    if (!(PORTFOLIO_INCLUDES as readonly string[]).includes(v)) {
      throw new ApiError(400, 'VALIDATION_ERROR', `include: unknown value ${JSON.stringify(v.slice(0, 50))}; supported: ${PORTFOLIO_INCLUDES.join(', ')}`, {
        field: 'include',
        allowed: [...PORTFOLIO_INCLUDES],
      });
    }
    out.add(v as (typeof PORTFOLIO_INCLUDES)[number]);
  }
  return out;
}
