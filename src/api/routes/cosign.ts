/**
 * The pending inbox and co-signing, scoped to the caller's organization (the use case: src/services/cosign.ts):
 *   GET  /v1/pending                   open pending actions, each read live from the ledger, with stats, by cursor or offset
 *   POST /v1/sign                      signing data for one key's vote (approve | reject | abstain) on a pending
 *                                      action or on any pending ledger transaction (hash or TxID)
 *   POST /v1/sign/{id}/signature       claimed atomically, verified, submitted once
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { prepareCosignature, submitCosignature, VOTE_WORD } from '../../services/cosign.js';
import { listPending } from '../../services/inbox-live.js';
import { SignatureBody } from '../cosign-common.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { callerOf, requireAuth } from '../middleware/auth.js';
import { errorResponses, IDENTITY_REF_PATTERN, jsonResponse, resourceIdParam } from '../schemas/common.js';
import { encodeCursor, pageOf, pageRequest } from '../pagination.js';
import { pageQuery, PaginationSchema } from '../schemas/pagination.js';
import { secureRoute } from '../secure-route.js';
import { PendingActionSchema, pendingActionView, SignBody, SignResponse, SignResult } from './cosign-schemas.js';

export function registerCosignRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  registerPending(app, deps);
  registerPrepare(app, deps);
  registerSubmit(app, deps);
}

/** The pending list's default page size: the contract's 100. */
const PENDING_PAGE_SIZE = 100;

function registerPending(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/pending',
      tags: ['Co-signing'],
      summary: 'List pending actions',
      description:
        "Ledger transactions waiting for signatures that involve the organization's identities (as principal, as a required authority, or through delegation). A transaction the gateway submits (an intent, a governance operation, a co-signature) is listed for every identity it involves as soon as it is submitted; one submitted elsewhere is found by the pending-discovery scan. Each action of the page is read live from the ledger at the request (`collected_signatures`, `user_has_signed`, `awaiting_authorities`, `is_ready`): one whose transaction executed, was rejected or expired is closed and not listed. `live.read_at` is when the ledger was read; `live.complete` is false when the ledger did not answer in time for every action (those show their last known state). Oldest first. Page by `cursor` (the `next_cursor` of the previous page) or by `offset`, not both; the default page is 100. `stats` count every open action the filters match, not only the page (`stats.total` is `pagination.total`; urgent: expiring within 24 hours); `scan` tells when the last scan ran and whether it was degraded (a transient ledger error: some entries may be stale).",
      scopes: ['read'],
      request: {
        query: z.object({
          identity: z.string().max(500).optional().openapi({ description: 'ADI URL (or id) of one identity', pattern: IDENTITY_REF_PATTERN }),
          category: z.enum(['governance', 'transactions']).optional(),
          status: z.enum(['eligible', 'awaiting_others']).optional(),
          ...pageQuery(PENDING_PAGE_SIZE),
        }),
      },
      responses: {
        200: jsonResponse(
          z.object({
            actions: z.array(PendingActionSchema),
            stats: z.object({
              total: z.number().int(),
              urgent: z.number().int(),
              governance: z.number().int(),
              transactions: z.number().int(),
              awaiting_others: z.number().int(),
            }),
            pagination: PaginationSchema,
            live: z.object({
              read_at: z.string().openapi({ description: 'When the ledger was read for the actions of the page' }),
              complete: z.boolean().openapi({ description: 'false: the ledger did not answer in time for some actions, which show their last known state' }),
            }),
            scan: z.object({ last_scan_at: z.string().nullable(), degraded: z.boolean() }),
          }),
          'A page of pending actions',
        ),
        ...errorResponses(400, 404),
      },
    }),
    async (c) => {
      const { identity, category, status, ...q } = c.req.valid('query');
      const req = pageRequest(q, PENDING_PAGE_SIZE);
      const list = await listPending(deps, callerOf(c), { identity, category, status }, { ...req, limit: req.limit + 1 });
      const { page, pagination } = pageOf(list.rows, req, list.total, (r) => encodeCursor({ createdAt: r.action.discoveredAt, id: r.action.id }));
      return c.json(
        {
          actions: page.map(({ action, identityUrl }) => pendingActionView(action, identityUrl)),
          stats: list.stats,
          pagination,
          live: { read_at: list.live.readAt.toISOString(), complete: list.live.complete },
          scan: { last_scan_at: list.scan.lastScanAt?.toISOString() ?? null, degraded: list.scan.degraded },
        },
        200,
      );
    },
  );
}

function registerPrepare(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/sign',
      tags: ['Co-signing'],
      summary: 'Prepare a co-signature',
      description:
        "Signing data for one key's vote on a pending action (type pending_action, target_id the action id) or on any pending ledger transaction (type pending_tx, target_id its hash or TxID, identity required). The vote (approve, reject or abstain; default approve) is bound into what is signed. A reject is a signature and can defeat the transaction; abstaining does not reject. A key of a delegate book signs through the delegating page automatically; a book that is itself a required authority (e.g. a new delegate) signs directly and stays in awaiting_authorities until it does. When the key is the one the gateway holds for a provider-signing identity (no public_key, or that key), the gateway signs and submits at once for a key holding provider:manage (403 INSUFFICIENT_SCOPE otherwise): the answer has signing_mode provider, status submitted, tx_hash, signature_count, is_ready and awaiting_authorities, and submit_url null.",
      scopes: ['write'],
      request: { body: { required: true, content: { 'application/json': { schema: SignBody } } } },
      responses: { 201: jsonResponse(SignResponse, 'Prepared: sign data_for_signature and submit to submit_url'), ...errorResponses(400, 404, 409, 502) },
    }),
    async (c) => {
      const providerSigning = requireAuth(c).permissions.includes('provider:manage');
      const { id, prepared, provider } = await prepareCosignature(deps, callerOf(c), c.req.valid('json'), { providerSigning });
      return c.json(
        {
          sign_request_id: id,
          status: 'signing_required',
          ...(provider ? { ...provider, signing_mode: 'provider' as const, submit_url: null } : {}),
          signing_data: {
            data_for_signature: prepared.hashToSign,
            transaction_hash: prepared.txHash,
            signer_url: prepared.signerUrl,
            signer_version: prepared.signerVersion,
            timestamp: prepared.timestamp,
            vote: VOTE_WORD[prepared.vote],
            delegators: prepared.delegators,
          },
          ...(provider ? {} : { submit_url: `/v1/sign/${id}/signature` }),
        },
        201,
      );
    },
  );
}

function registerSubmit(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/sign/{id}/signature',
      tags: ['Co-signing'],
      summary: 'Submit a co-signature',
      description:
        "The signature over data_for_signature by the key the request was prepared for. The request is claimed atomically and spent once: a second submission is a 404. 400 when the signature does not verify (nothing is sent; the request stays usable); 409 ALREADY_SIGNED when the key had already signed the transaction with the same vote (nothing is sent; treat as success; details.tx_hash names the transaction); 409 SIGNING_DATA_STALE when the key signed something prepared later or its page changed (details.cause; the request stays usable: fetch fresh signing data with POST /v1/sign/{id}/signing-data); 502 when the ledger could not be reached (the claim is released: retry the same signature). signature_count counts the transaction's signatures that count, whichever page they came from; is_ready and awaiting_authorities are as seen from the signer's page.",
      scopes: ['write'],
      request: {
        params: z.object({ id: resourceIdParam('id', { code: 'SIGN_REQUEST_NOT_FOUND', message: 'Sign request not found' }, 'Sign request id (UUID)') }),
        body: { required: true, content: { 'application/json': { schema: SignatureBody } } },
      },
      responses: { 200: jsonResponse(SignResult, 'Submitted'), ...errorResponses(400, 404, 409, 502) },
    }),
    async (c) => {
      return c.json(await submitCosignature(deps, callerOf(c), c.req.valid('param').id, c.req.valid('json')), 200);
    },
  );
}
