/**
 * Transaction intents, scoped to the caller's organization (the use case: src/services/intents.ts):
 *   POST /v1/transaction                      prepare: validate the legs, build the canonical intent, prepare its
 *                                             ledger WriteData for the nominated key → 201 with hash_to_sign
 *                                             (the row only; no workflow yet). Idempotency-Key honoured.
 *   POST /v1/transaction/{intent_id}/signature  a Temporal Update on intent-<id>, which it starts (Update-with-Start):
 *                                             verified, then submitted
 *   GET  /v1/transaction/{intent_id}          status, stage, per-leg transactions, proof_id, live signing progress;
 *                                             ETag, and If-None-Match with Prefer: wait to wait for the next change
 *   GET  /v1/transactions                     list, newest first, by cursor or offset
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { intentChangesFor } from '../../db/intent-changes.js';
import { INTENT_STATUSES } from '../../db/intents.js';
import { createSigningProgressReader } from '../../services/intent-progress.js';
import { listIntents, prepareIntent, PROOF_CLASSES, readIntent, storedProofClass, submitSignature } from '../../services/intents.js';
import { SignatureBody } from '../cosign-common.js';
import { encodeCursor, pageOf, pageRequest } from '../pagination.js';
import { pageQuery, PaginationSchema } from '../schemas/pagination.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { callerOf, requireAuth } from '../middleware/auth.js';
import { CONDITIONAL_READ_PARAMETERS, etagOf, noneMatchHits, preferredWait } from '../conditional-read.js';
import { errorResponses, jsonResponse, RATE_LIMIT_HEADERS, uuidField } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';
import { CreateBody, IntentDetailSchema, IntentIdParam, IntentSchema, intentView, SigningDataSchema } from './transaction-schemas.js';

export function registerTransactionRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  registerPrepare(app, deps);
  registerSignature(app, deps);
  registerRead(app, deps);
  registerList(app, deps);
}

function registerPrepare(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/transaction',
      tags: ['Transactions'],
      summary: 'Prepare a transaction intent',
      description:
        'Validates every leg (the 400 names the leg and the field), encodes each contract call from functionSignature + args, computes each leg’s execution commitment, builds the canonical intent and prepares its WriteData to the identity’s data account for the nominated key. Sign hash_to_sign (32 raw bytes) with that Ed25519 key and POST it to submit_url. For a provider-signing identity (created with signing_mode provider) there is no second call: the prepare is checked against the identity’s provider_policy (403 PROVIDER_POLICY_DENIED naming the rule in details.rule: provider_policy when none is set, allowed_chains, allowed_targets, max_value_per_leg, max_value_per_24h), the gateway signs with the key it holds and submits, and the answer has status submitted, signing_mode provider, tx_hash and no submit_url; signer_public_key cannot be combined with such an identity. The proof cycle then runs on its own: 5 of 7 validators attest, createAnchor, executeComprehensiveProof, executeGovernanceProofDirect, observation after finality, the proof_result record on the ledger.',
      scopes: ['write'],
      idempotent: true,
      request: { body: { required: true, content: { 'application/json': { schema: CreateBody } } } },
      responses: {
        201: jsonResponse(
          z.object({
            intent_id: z.uuid(),
            status: z
              .enum(['signing_required', 'submitted'])
              .openapi({ description: 'signing_required (external); submitted (provider: the gateway signed and submitted)' }),
            signing_mode: z.enum(['external', 'provider']),
            signing_data: SigningDataSchema,
            submit_url: z.string().nullable().openapi({ description: 'Where to POST the signature; null for a provider-signing identity (signed already)' }),
            tx_hash: z.string().optional().openapi({ description: 'Provider signing: the submitted ledger transaction hash (64 lowercase hex)' }),
            expires_at: z.string(),
            operation_id: z.string(),
            proof_class: z.enum(PROOF_CLASSES).openapi({ description: 'The proof class written into the intent (an alias shows as the class it names)' }),
            idempotent: z.boolean().optional(),
          }),
          'Prepared: sign hash_to_sign and submit it',
        ),
        ...errorResponses(400, 402, 403, 404, 409, 502, 503),
      },
    }),
    async (c) => {
      const { row, signingData, operationId, submitted } = await prepareIntent(deps, callerOf(c), c.req.valid('json'));
      c.header('Location', `/v1/transaction/${row.id}`);
      return c.json(
        {
          intent_id: row.id,
          status: submitted ? ('submitted' as const) : ('signing_required' as const),
          signing_mode: submitted ? ('provider' as const) : ('external' as const),
          signing_data: signingData,
          submit_url: submitted ? null : `/v1/transaction/${row.id}/signature`,
          ...(submitted ? { tx_hash: submitted.txHash } : {}),
          expires_at: row.expiresAt.toISOString(),
          operation_id: operationId,
          proof_class: storedProofClass((row.intent as { parts?: string[] }).parts?.[0]),
        },
        201,
      );
    },
  );
}

function registerSignature(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/transaction/{intent_id}/signature',
      tags: ['Transactions'],
      summary: 'Submit the signature of an intent',
      description:
        'The signature is checked against public_key (which must be the nominated key) over the raw 32 bytes of hash_to_sign before anything is sent (400 otherwise), then submitted to the ledger. 409 when the intent is already signed (treat as success and read the intent); 409 SIGNING_DATA_STALE when the key signed something prepared later or its key page changed (details.cause; the intent stays signing_required: fetch fresh signing data with POST /v1/transaction/{id}/signing-data and sign it); 502 on a transient ledger failure — the intent stays signing_required and the same signature can be sent again.',
      scopes: ['write'],
      request: { params: IntentIdParam, body: { required: true, content: { 'application/json': { schema: SignatureBody } } } },
      responses: {
        200: jsonResponse(
          z.object({
            intent_id: z.uuid(),
            status: z.literal('submitted'),
            tx_hash: z.string().openapi({ description: 'The ledger transaction hash (64 lowercase hex, no 0x)' }),
            accum_tx_hash: z.string().openapi({ description: 'The same value as tx_hash, under the name Certen clients read' }),
            ledger_tx_id: z.string(),
          }),
          'Submitted to the ledger',
        ),
        ...errorResponses(400, 404, 409, 502),
      },
    }),
    async (c) => {
      const { intent_id } = c.req.valid('param');
      const out = await submitSignature(deps, callerOf(c), intent_id, c.req.valid('json'));
      return c.json({ intent_id, status: 'submitted' as const, tx_hash: out.txHash, accum_tx_hash: out.txHash, ledger_tx_id: out.txId }, 200);
    },
  );
}

function registerRead(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const signingProgress = createSigningProgressReader(deps);
  const changes = intentChangesFor(deps.database);
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/transaction/{intent_id}',
      tags: ['Transactions'],
      summary: 'Read an intent',
      description:
        'Status and stage, the ledger transaction, per leg the three chain transactions, the validators that attested and observed, proof_id once the proof exists, error_message on failure. signing_progress: how far the co-signing of the ledger transaction is (collected and required signatures, the key books still awaited, who signed), read live from the ledger; null before submission or when the ledger does not answer in time. To follow an intent without polling, send the ETag of the last answer in If-None-Match with `Prefer: wait=<seconds>`: the answer comes as soon as the intent’s status or stage (or a chain’s stage, its proof or error) changes or a co-signature is submitted through POST /v1/sign (200), or when the wait ends: 200 if anything else differs by then (a transaction hash written within a stage, a co-signature made on the ledger outside the gateway), else 304.',
      scopes: ['read'],
      request: { params: IntentIdParam },
      parameters: CONDITIONAL_READ_PARAMETERS,
      responses: {
        200: jsonResponse(IntentDetailSchema, 'The intent'),
        304: {
          description: 'Not modified: the intent is as the ETag in If-None-Match names it (after the wait, when one was asked for)',
          headers: RATE_LIMIT_HEADERS,
        },
        ...errorResponses(404),
      },
    }),
    async (c) => {
      const caller = callerOf(c);
      const intentId = c.req.valid('param').intent_id;
      const ifNoneMatch = c.req.header('if-none-match');
      const read = async () => {
        const row = await readIntent(deps, caller.orgId, intentId);
        const body = JSON.stringify({ ...intentView(row), signing_progress: await signingProgress(caller, row) });
        return { body, etag: etagOf(body) };
      };
      const waitS = ifNoneMatch ? preferredWait(c.req.header('prefer')) : 0;
      // subscribed before the first read: a change committed between the read and the wait still ends the wait
      const sub = waitS > 0 ? changes.subscribe(intentId) : undefined;
      try {
        let cur = await read();
        if (sub) {
          const signal = c.req.raw.signal;
          const deadline = performance.now() + waitS * 1000;
          while (noneMatchHits(ifNoneMatch, cur.etag) && !signal.aborted) {
            const left = deadline - performance.now();
            const changed = left > 0 && (await sub.next(left, signal));
            if (signal.aborted) break;
            cur = await read(); // a change, or the wait's end (a co-signature made outside the gateway is not announced)
            if (!changed) break;
          }
        }
        const applied = sub ? { 'Preference-Applied': `wait=${waitS}` } : undefined;
        if (noneMatchHits(ifNoneMatch, cur.etag)) return c.body(null, 304, { ETag: cur.etag, ...applied });
        return c.body(cur.body, 200, { 'content-type': 'application/json', ETag: cur.etag, ...applied }) as never;
      } finally {
        sub?.close();
      }
    },
  );
}

function registerList(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/transactions',
      tags: ['Transactions'],
      summary: "List the organization's intents",
      description:
        'Newest first. Page by `cursor` (the `next_cursor` of the previous page) or by `offset`, not both; `pagination.total` counts every intent the filters match. An offset past the end is an empty page with has_more false.',
      scopes: ['read'],
      request: {
        query: z.object({
          status: z.enum(INTENT_STATUSES).optional(),
          identity_id: uuidField().optional(),
          ...pageQuery(),
        }),
      },
      responses: {
        200: jsonResponse(z.object({ transactions: z.array(IntentSchema), pagination: PaginationSchema }), 'A page of intents'),
        ...errorResponses(400),
      },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const q = c.req.valid('query');
      const req = pageRequest(q);
      const { rows, total } = await listIntents(deps, auth.orgId, { status: q.status, identityId: q.identity_id }, { ...req, limit: req.limit + 1 });
      const { page, pagination } = pageOf(rows, req, total, encodeCursor);
      return c.json({ transactions: page.map((r) => intentView(r.view)), pagination }, 200);
    },
  );
}
