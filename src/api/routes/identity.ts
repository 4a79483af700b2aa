/**
 * Identities (spec §2.1, §3.1, §4.1), all scoped to the caller's organization:
 *   POST   /v1/identity        202: the row (status creating) + status_url + polling hints; provisioning runs in
 *                              the workflow identity-<id>. Idempotency-Key honoured.
 *   GET    /v1/identity/{id}   the identity, its current provisioning stage and chain accounts
 *   GET    /v1/identities      list, newest first, cursor pagination, status filter
 *   PATCH  /v1/identity/{id}   { public_key }: repairs a hash-only identity when the key hashes to public_key_hash
 *   DELETE /v1/identity/{id}   retire (soft; on-chain accounts stay; the quota slot is freed)
 *   GET    /v1/portfolio       every identity with live credits and native balances per chain
 * Another organization's identity is a 404, exactly like an unknown id.
 */
import { randomUUID } from 'node:crypto';
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { formatEther, type Address } from 'viem';
import { createChainClients, type ChainClients } from '../../chain/clients.js';
import type { ChainConfig } from '../../config.js';
import {
  createIdentityWithinQuota,
  getChainAccounts,
  IDENTITY_STATUSES,
  listOrgIdentities,
  recentProvisioningSeconds,
  retireIdentity,
  setIdentityPublicKey,
  TERMINAL_STATUSES,
  type ChainAccountRow,
  type IdentityRow,
} from '../../db/identities.js';
import { identities as identitiesTable, organizations } from '../../db/schema.js';
import { BASE_IDENTITY_FEE_UNITS, adiNameProblem, ed25519PublicKeyProblem, identityUrls, publicKeyHashHex, slidingIdentityFee } from '../../identity/keys.js';
import { createLedgerClient } from '../../ledger/client.js';
import { redactUrls } from '../../net/redact.js';
import { identityWorkflowId, startIdentityWorkflow } from '../../identity/start.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { ApiError } from '../errors.js';
import { findOrgIdentity } from '../identity-access.js';
import { requireAuth } from '../middleware/auth.js';
import { errorResponses, RATE_LIMIT_HEADERS } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';
import { eq, sql } from 'drizzle-orm';

const HEX64 = /^[0-9a-fA-F]{64}$/;
export const MAX_CREDITS = 1_000_000_000;

export const ChainAccountSchema = z
  .object({
    chain: z.string().openapi({ example: 'ethereum-sepolia' }),
    chain_id: z.number().int().openapi({ example: 11155111 }),
    address: z.string().openapi({ description: 'The AbstractAccount: the same address on every chain' }),
    deployment_tx: z.string().nullable().openapi({ description: 'Transaction that deployed it' }),
  })
  .openapi('ChainAccount');

export const IdentitySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    adi_url: z.string().openapi({ example: 'acc://alice-corp.acme' }),
    book_url: z.string(),
    key_page_url: z.string(),
    data_account_url: z.string(),
    status: z.enum(IDENTITY_STATUSES).openapi({ description: 'creating → active | failed; retired after DELETE' }),
    stage: z.string().openapi({
      description:
        'Current provisioning step: queued, creating_adi, adding_credits, creating_data_account, setting_key, deploying_accounts, finalizing; done once active, failed on failure',
    }),
    chain_accounts: z.array(ChainAccountSchema).openapi({ description: 'Empty while creating; one entry per deployed chain account' }),
    requested_chains: z.array(z.string()),
    credit_balance: z.number().int().openapi({ description: 'Whole ledger credits on the key page (0 in the creation response)' }),
    requested_credits: z.number().int(),
    public_key: z.string().nullable().openapi({ description: 'Ed25519 public key (64 hex); null for a hash-only identity' }),
    public_key_hash: z.string().openapi({ description: 'SHA-256 of the raw 32 key bytes (64 hex): the key on the key page' }),
    can_sign: z.boolean().openapi({
      description:
        'true when the gateway has key material for signing (external mode: a public_key was supplied). True from creation, also while provisioning; not a readiness indicator. false for a hash-only identity (repair with PATCH).',
    }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
    provisioned_at: z.string().nullable().openapi({ format: 'date-time' }),
    retired_at: z.string().nullable().openapi({ format: 'date-time' }),
    error_message: z.string().optional().openapi({ description: 'Present when status is failed: the reason' }),
  })
  .openapi('Identity');

const PollingSchema = z
  .object({
    first_poll_after_seconds: z.number().int(),
    interval_seconds: z.number().int(),
    estimated_ready_in_seconds: z.number().int(),
    terminal_states: z.array(z.string()),
  })
  .openapi('PollingHints', { description: 'How to wait: first poll after, then every interval, until status is terminal' });

const CreateBody = z
  .object({
    name: z.string().openapi({ description: "ADI label: 3–63 lower-case letters, digits, dashes → acc://<name>.acme. Names short enough to carry the ledger's sliding registration fee (on the default schedule, up to 12 characters) are refused with the fee named", example: 'alice-corp-treasury' }),
    public_key: z.string().optional().openapi({ description: 'Ed25519 public key, 64 hex (send it: without it the identity cannot sign)' }),
    public_key_hash: z.string().optional().openapi({ description: 'SHA-256 of the raw 32 key bytes, 64 hex; must match public_key when both are sent' }),
    chains: z.array(z.string()).optional().openapi({ description: 'Chain names from GET /v1/chains; an account is deployed on each' }),
    credits: z.number().optional().openapi({ description: 'Whole ledger credits for the key page (0 or absent: the identity cannot submit until funded)' }),
  })
  .openapi('CreateIdentityRequest');

const PatchBody = z
  .object({ public_key: z.string().openapi({ description: 'Ed25519 public key (64 hex) whose SHA-256 is the identity’s public_key_hash' }) })
  .openapi('RepairIdentityRequest');

const IdParam = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' }, description: 'Identity id (UUID)' }) });

export function identityView(r: IdentityRow, accounts: ChainAccountRow[] = []): z.infer<typeof IdentitySchema> {
  return {
    id: r.id,
    name: r.name,
    adi_url: r.adiUrl,
    book_url: r.bookUrl,
    key_page_url: r.keyPageUrl,
    data_account_url: r.dataAccountUrl,
    status: r.status as (typeof IDENTITY_STATUSES)[number],
    stage: r.stage,
    chain_accounts: accounts.map((a) => ({ chain: a.chain, chain_id: Number(a.chainId), address: a.address, deployment_tx: a.deploymentTx })),
    requested_chains: r.requestedChains,
    credit_balance: Number(r.creditBalance),
    requested_credits: Number(r.requestedCredits),
    public_key: r.publicKey,
    public_key_hash: r.publicKeyHash,
    can_sign: r.publicKey !== null,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    provisioned_at: r.provisionedAt?.toISOString() ?? null,
    retired_at: r.retiredAt?.toISOString() ?? null,
    ...(r.status === 'failed' ? { error_message: r.errorMessage ?? 'provisioning failed' } : {}),
  };
}

const bad = (field: string, message: string) => new ApiError(400, 'VALIDATION_ERROR', `${field}: ${message}`, { field });

export function registerIdentityRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const chainNames = () => deps.config.chains.map((c) => c.name);
  const json = (schema: z.ZodType, description: string) => ({ description, headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema } } });

  async function pollingHints() {
    const recent = await recentProvisioningSeconds(db).catch(() => undefined);
    const estimate = Math.max(1, Math.ceil(recent?.p50 ?? 30));
    return {
      first_poll_after_seconds: Math.max(1, Math.floor(estimate / 2)),
      interval_seconds: Math.max(1, Math.ceil(estimate / 5)),
      estimated_ready_in_seconds: estimate,
      terminal_states: [...TERMINAL_STATUSES],
    };
  }

  const ledger = createLedgerClient({ url: deps.config.ledgerUrl, timeoutMs: 3000 });

  // The ledger charges short names a sliding registration fee far above the base (up to millions of credits),
  // paid by the gateway's sponsor: such names are refused. The schedule is the network's, read once a minute.
  let slidingFees: { at: number; fees: number[] } | undefined;
  async function refuseSlidingFee(name: string, log: { warn(msg: string, fields?: Record<string, unknown>): void }) {
    if (!slidingFees || Date.now() - slidingFees.at > 60_000) {
      try {
        const raw = (await ledger.networkStatus()).raw?.globals?.feeSchedule?.createIdentitySliding;
        slidingFees = { at: Date.now(), fees: Array.isArray(raw) ? raw.map(Number) : [] };
      } catch (err) {
        // keep the last schedule read; without one, only a name longer than any default sliding entry can pass
        if (!slidingFees && Buffer.byteLength(name) <= 12) {
          throw new ApiError(503, 'SERVICE_UNAVAILABLE', "The ledger's name fees cannot be read; retry shortly", undefined, { 'Retry-After': '5' });
        }
        log.warn('ledger name fees unreadable; using the last schedule read', { err });
      }
    }
    const fee = slidingFees && slidingIdentityFee(name, slidingFees.fees);
    if (fee !== undefined) {
      const longest = slidingFees!.fees.findLastIndex((f) => f > BASE_IDENTITY_FEE_UNITS) + 1;
      throw bad('name', `a name of ${Buffer.byteLength(name)} characters costs ${fee / 100} credits to register on this ledger (its sliding fee for names of up to ${longest} characters); choose a name of at least ${longest + 1} characters`);
    }
  }

  /** The rows with their chain accounts; empty while creating (spec §2.1: filled on the move to active; `stage` shows progress). */
  async function withAccounts(rows: IdentityRow[]) {
    const acc = await getChainAccounts(db, rows.filter((r) => r.status !== 'creating').map((r) => r.id));
    return rows.map((r) => identityView(r, acc.get(r.id) ?? []));
  }

  // ------------------------------------------------------------------ POST /v1/identity
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
        202: json(
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
      const auth = requireAuth(c);
      const body = c.req.valid('json');
      const warnings: string[] = [];

      const name = body.name;
      const nameProblem = adiNameProblem(name);
      if (nameProblem) throw bad('name', nameProblem);
      await refuseSlidingFee(name, c.get('logger'));

      let publicKey: string | null = null;
      let publicKeyHash: string;
      if (body.public_key !== undefined) {
        const p = ed25519PublicKeyProblem(body.public_key);
        if (p) throw bad('public_key', p);
        publicKey = body.public_key.toLowerCase();
      }
      if (body.public_key_hash !== undefined && !HEX64.test(body.public_key_hash)) {
        throw bad('public_key_hash', 'must be 64 hex characters (SHA-256 of the raw 32-byte public key)');
      }
      if (publicKey) {
        publicKeyHash = publicKeyHashHex(publicKey);
        if (body.public_key_hash !== undefined && body.public_key_hash.toLowerCase() !== publicKeyHash) {
          throw new ApiError(
            400,
            'PUBLIC_KEY_HASH_MISMATCH',
            'public_key_hash: does not match public_key (it must be SHA-256 over the raw 32 key bytes, not over the hex text)',
            { field: 'public_key_hash', expected: publicKeyHash },
          );
        }
      } else if (body.public_key_hash !== undefined) {
        publicKeyHash = body.public_key_hash.toLowerCase();
        warnings.push('Only public_key_hash was supplied: this identity cannot sign (can_sign false) until PATCH /v1/identity/{id} supplies the matching public_key.');
      } else {
        throw bad('public_key', 'required (or at least public_key_hash)');
      }

      const known = chainNames();
      const chains = [...new Set(body.chains ?? [])];
      for (const ch of chains) {
        if (!known.includes(ch)) {
          throw new ApiError(400, 'UNKNOWN_CHAIN', `chains: unknown chain "${ch}"; known chains: ${known.join(', ')} (GET /v1/chains)`, { field: 'chains', chain: ch, known_chains: known });
        }
      }
      for (const ch of chains) {
        if (!deps.config.chains.find((x) => x.name === ch)?.contracts) {
          throw new ApiError(400, 'CHAIN_UNAVAILABLE', `chains: "${ch}" has no system contracts deployed yet; no account can be created there`, { field: 'chains', chain: ch });
        }
      }
      const credits = body.credits ?? 0;
      if (!Number.isInteger(credits) || credits < 0 || credits > MAX_CREDITS) {
        throw bad('credits', `must be a whole number from 0 to ${MAX_CREDITS}`);
      }
      if (credits === 0) warnings.push('credits is 0: the key page cannot pay for ledger transactions (intents, votes) until credits are added.');

      const id = randomUUID();
      const urls = identityUrls(name, deps.config.adiSuffix);
      const res = await createIdentityWithinQuota(db, {
        id,
        orgId: auth.orgId,
        name,
        ...urls,
        publicKey,
        publicKeyHash,
        requestedChains: chains,
        requestedCredits: BigInt(credits),
      });
      if (!res.ok) {
        switch (res.reason) {
          case 'quota':
            throw new ApiError(
              403,
              'IDENTITY_QUOTA_EXCEEDED',
              `Identity quota reached: ${res.used} of ${res.quota} identities in use (retire identities with DELETE /v1/identity/{id} to free slots; failed ones count too)`,
              { quota: res.quota, used: res.used },
            );
          case 'credits':
            throw new ApiError(402, 'CREDIT_GRANT_EXCEEDED', `credits: ${res.requested} requested but only ${res.remaining} remain in the organization's credit grant`, {
              field: 'credits',
              requested: Number(res.requested),
              remaining: Number(res.remaining),
            });
          case 'name_taken':
            throw new ApiError(409, 'NAME_TAKEN', `name: ${urls.adiUrl} is already taken`, { field: 'name', adi_url: urls.adiUrl });
          default:
            throw new ApiError(403, 'ORG_NOT_FOUND', 'The API key belongs to no organization');
        }
      }

      try {
        await startIdentityWorkflow(deps.temporal, deps.config.temporal.taskQueue, res.identity);
      } catch (err) {
        // An answer lost after the server started the workflow (a deadline, a dropped connection) looks the same as
        // a refusal: ask before undoing, or the workflow would provision an ADI for a row that no longer exists.
        const started = await deps.temporal.workflow
          .getHandle(identityWorkflowId(id))
          .describe()
          .then(() => true)
          .catch(() => false);
        if (!started) {
          // nothing happened yet: undo the row (and the credit charge) so the request can simply be retried
          c.get('logger').error('identity workflow could not be started', { err, identity_id: id });
          await db.transaction(async (tx) => {
            await tx.delete(identitiesTable).where(eq(identitiesTable.id, id));
            if (credits > 0) {
              await tx
                .update(organizations)
                .set({ creditsUsed: sql`greatest(${organizations.creditsUsed} - ${String(credits)}::bigint, 0)` })
                .where(eq(organizations.id, auth.orgId));
            }
          });
          throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'Provisioning could not be started; retry shortly', undefined, { 'Retry-After': '5' });
        }
      }
      c.get('logger').info('identity accepted', { identity_id: id, workflow_id: `identity-${id}` });
      const statusUrl = `/v1/identity/${id}`;
      c.header('Location', statusUrl);
      return c.json(
        {
          identity: identityView(res.identity),
          status_url: statusUrl,
          polling: await pollingHints(),
          ...(warnings.length ? { warnings } : {}),
        },
        202,
      );
    },
  );

  // ------------------------------------------------------------------ GET /v1/identity/{id}
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/identity/{id}',
      tags: ['Identity'],
      summary: 'Read an identity',
      description: 'Status, current provisioning stage, chain accounts, credits as last read, can_sign. Cheap: reads the gateway database only, so it is the one to poll.',
      scopes: ['read'],
      request: { params: IdParam },
      responses: { 200: json(IdentitySchema, 'The identity'), ...errorResponses(404) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const row = await findOrgIdentity(db, auth.orgId, c.req.valid('param').id, { field: 'id' });
      const [view] = await withAccounts([row]);
      return c.json(view, 200);
    },
  );

  // ------------------------------------------------------------------ GET /v1/identities
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
          limit: z.coerce.number().int().min(1).max(200).optional().openapi({ description: 'Page size, default 50, at most 200' }),
          cursor: z.string().max(500).optional(),
        }),
      },
      responses: {
        200: json(
          z.object({
            identities: z.array(IdentitySchema),
            pagination: z.object({ limit: z.number().int(), has_more: z.boolean(), next_cursor: z.string().nullable() }),
          }),
          'A page of identities',
        ),
        ...errorResponses(400),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const q = c.req.valid('query');
      const limit = q.limit ?? 50;
      const rows = await listOrgIdentities(db, auth.orgId, { status: q.status, limit, cursor: q.cursor ? decodeCursor(q.cursor) : undefined });
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return c.json(
        {
          identities: await withAccounts(page),
          pagination: { limit, has_more: hasMore, next_cursor: hasMore ? encodeCursor(page[page.length - 1]!) : null },
        },
        200,
      );
    },
  );

  // ------------------------------------------------------------------ PATCH /v1/identity/{id}
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
      responses: { 200: json(IdentitySchema, 'The repaired identity'), ...errorResponses(400, 404, 409) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const row = await findOrgIdentity(db, auth.orgId, c.req.valid('param').id, { field: 'id' });
      const { public_key } = c.req.valid('json');
      const problem = ed25519PublicKeyProblem(public_key);
      if (problem) throw bad('public_key', problem);
      const pk = public_key.toLowerCase();
      if (publicKeyHashHex(pk) !== row.publicKeyHash) {
        throw new ApiError(400, 'PUBLIC_KEY_HASH_MISMATCH', "public_key: its SHA-256 does not equal the identity's public_key_hash", { field: 'public_key' });
      }
      if (row.status === 'retired') throw new ApiError(409, 'IDENTITY_RETIRED', 'Identity is retired');
      if (row.publicKey && row.publicKey !== pk) throw new ApiError(409, 'PUBLIC_KEY_ALREADY_SET', 'Identity already has a different public key');
      const updated = row.publicKey ? row : ((await setIdentityPublicKey(db, auth.orgId, row.id, pk)) ?? row);
      c.get('logger').info('identity public key supplied', { identity_id: row.id });
      const [view] = await withAccounts([updated]);
      return c.json(view, 200);
    },
  );

  // ------------------------------------------------------------------ DELETE /v1/identity/{id}
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
        200: json(z.object({ retired: z.boolean(), identity: IdentitySchema, note: z.string() }), 'Retired'),
        ...errorResponses(404),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const row = await findOrgIdentity(db, auth.orgId, c.req.valid('param').id, { field: 'id' });
      const retired = (await retireIdentity(db, auth.orgId, row.id)) ?? row;
      c.get('logger').info('identity retired', { identity_id: row.id });
      const [view] = await withAccounts([retired]);
      return c.json(
        { retired: true, identity: view, note: 'The quota slot is free. The ADI, its key book and key page, and the chain accounts remain on chain.' },
        200,
      );
    },
  );

  // ------------------------------------------------------------------ GET /v1/portfolio
  const readers = new Map<string, ChainClients>();
  const reader = (ch: ChainConfig) => {
    let r = readers.get(ch.name);
    if (!r) {
      r = createChainClients({ rpcUrl: ch.rpcUrl, chainId: ch.chainId, name: ch.name });
      readers.set(ch.name, r);
    }
    return r;
  };
  const withTimeout = <T>(p: Promise<T>, ms: number, what: string) =>
    Promise.race([p, new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`${what} did not answer within ${ms} ms`)), ms).unref())]);

  const PortfolioChain = z
    .object({
      chain: z.string(),
      chain_id: z.number().int(),
      address: z.string(),
      balance_wei: z.string().nullable().openapi({ description: 'Native balance in wei (decimal string); null when the chain could not be read' }),
      balance: z.string().nullable().openapi({ description: 'Native balance in whole units (ether), decimal string' }),
      error: z.string().optional().openapi({ description: 'Why this chain could not be read; the others are unaffected' }),
    })
    .openapi('PortfolioChain');
  const PortfolioEntry = z
    .object({
      id: z.uuid(),
      adi_url: z.string(),
      status: z.string(),
      credit_balance: z.number().int().nullable().openapi({ description: 'Whole credits on the key page, read live; null if the ledger could not be read' }),
      credit_error: z.string().optional(),
      chains: z.array(PortfolioChain),
    })
    .openapi('PortfolioEntry');

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
          cursor: z.string().max(500).optional(),
        }),
      },
      responses: {
        200: json(
          z.object({
            identities: z.array(PortfolioEntry),
            total_identities: z.number().int(),
            total_chains: z.number().int(),
            pagination: z.object({ limit: z.number().int(), has_more: z.boolean(), next_cursor: z.string().nullable() }),
          }),
          'Portfolio',
        ),
        ...errorResponses(400, 404),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const q = c.req.valid('query');
      const limit = q.limit ?? 50;
      const listed = q.identity ? [] : await listOrgIdentities(db, auth.orgId, { limit, cursor: q.cursor ? decodeCursor(q.cursor) : undefined });
      const rows = q.identity ? [await findOrgIdentity(db, auth.orgId, q.identity, { field: 'identity', adiUrl: true })] : listed.slice(0, limit);
      const hasMore = listed.length > limit;
      const accounts = await getChainAccounts(db, rows.map((r) => r.id));
      const chainCfg = new Map(deps.config.chains.map((ch) => [ch.name, ch]));
      const entries = await Promise.all(
        rows.map(async (r) => {
          const credits = (async () => {
            if (r.status !== 'active') return { credit_balance: Number(r.creditBalance) };
            try {
              const page = await ledger.queryKeyPage(r.keyPageUrl);
              return { credit_balance: Math.floor(page.creditBalance / 100) };
            } catch (e) {
              return { credit_balance: null, credit_error: `ledger: ${redactUrls((e as Error).message, [deps.config.ledgerUrl])}` };
            }
          })();
          const chains = Promise.all(
            (accounts.get(r.id) ?? []).map(async (a) => {
              const base = { chain: a.chain, chain_id: Number(a.chainId), address: a.address };
              const cfg = chainCfg.get(a.chain);
              if (!cfg) return { ...base, balance_wei: null, balance: null, error: 'chain no longer configured' };
              try {
                const wei = await withTimeout(reader(cfg).public.getBalance({ address: a.address as Address }), 3000, a.chain);
                return { ...base, balance_wei: wei.toString(), balance: formatEther(wei) };
              } catch (e) {
                return { ...base, balance_wei: null, balance: null, error: (e as Error).message.split('\n')[0] };
              }
            }),
          );
          return { id: r.id, adi_url: r.adiUrl, status: r.status, ...(await credits), chains: await chains };
        }),
      );
      return c.json(
        {
          identities: entries,
          total_identities: entries.length,
          total_chains: entries.reduce((n, e) => n + e.chains.length, 0),
          pagination: { limit, has_more: hasMore, next_cursor: hasMore ? encodeCursor(rows[rows.length - 1]!) : null },
        },
        200,
      );
    },
  );
}
