/**
 * Governance operations, scoped to the caller's organization (the use case: src/services/governance.ts):
 *   POST /v1/governance                 prepare one UpdateKeyPage / UpdateAccountAuth / CreateKeyPage; the workflow
 *                                       governance-<id> starts and waits for the signature. Idempotency-Key honoured.
 *   POST /v1/governance/{id}/signature  the initiator's signature, a Temporal Update on governance-<id>
 *   GET  /v1/governance/{id}            status; collected/required signatures and is_ready read live from the ledger
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { prepareGovernance, readGovernanceOp, submitGovernanceOpSignature } from '../../services/governance.js';
import { SignatureBody } from '../cosign-common.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { callerOf, requireAuth } from '../middleware/auth.js';
import { errorResponses, jsonResponse } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';
import { CreateBody, GovernanceSchema, governanceView, IdParam, SignatureResult } from './governance-schemas.js';

export function registerGovernanceRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  registerPrepare(app, deps);
  registerSignature(app, deps);
  registerRead(app, deps);
}

function registerPrepare(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/governance',
      tags: ['Governance'],
      summary: 'Prepare a governance operation',
      description:
        'Builds one ledger transaction from the operations (key page: add_key, remove_key, add_delegate, remove_delegate, set_threshold; authority: add_authority, remove_authority; create_key_page; create_token_account: an ACME token account at url, default <adi>/tokens, directly under the ADI of the identity, one per request: the on-demand token account of an identity provisioned without one, which its sendTokens needs) and returns the hash to sign for the initiating key. An operation that changes nothing (adding a key, delegate or authority already there, removing one that is not, setting the current threshold, creating an account that exists) is a 400 VALIDATION_ERROR naming it, force or not. An operation that would leave the page unable to reach its threshold (threshold above the number of keys, removing the last key or authority), or take the book of the identity off the account its intents are written to (its data account, also through the ADI it inherits from), is a 400 QUORUM_UNREACHABLE unless force is true. add_authority on an account without authorities of its own (the data account inherits those of the ADI) keeps the inherited book: it is added explicitly in the same transaction and listed in operations (with force: true the operations are sent as given, and the new book becomes the only authority of the account, as the ledger does). The ledger executes the transaction once the page threshold and every required authority (a new delegate too) have approved; co-signers sign through POST /v1/sign. For a provider-signing identity whose held key initiates (no signer_public_key, or the identity key), the gateway signs and submits at once for a key holding provider:manage (403 INSUFFICIENT_SCOPE otherwise): the answer has signing_mode provider and the status after submission (executed on a 1-of-1 page).',
      scopes: ['write'],
      idempotent: true,
      request: { body: { required: true, content: { 'application/json': { schema: CreateBody } } } },
      responses: {
        201: jsonResponse(GovernanceSchema, 'Prepared: sign hash_to_sign and submit to submit_url (signing_mode provider: signed and submitted already)'),
        ...errorResponses(400, 403, 404, 502, 503),
      },
    }),
    async (c) => {
      const providerSigning = requireAuth(c).permissions.includes('provider:manage');
      const { op, identityUrl, signingMode } = await prepareGovernance(deps, callerOf(c), c.req.valid('json'), { providerSigning });
      c.header('Location', `/v1/governance/${op.id}`);
      return c.json({ ...governanceView(op, identityUrl), signing_mode: signingMode }, 201);
    },
  );
}

function registerSignature(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/governance/{id}/signature',
      tags: ['Governance'],
      summary: 'Submit the signature of a governance operation',
      description:
        'The signature over hash_to_sign by the key the operation was prepared for (verified before anything is sent: 400). Submitted to the ledger: on a page with threshold > 1 the operation becomes pending_signatures until co-signers sign (POST /v1/sign); executed once the ledger executed it. 409 when this key already signed; 409 SIGNING_DATA_STALE when the signing data is stale (details.cause: key_page_version, the key page changed, or timestamp, the key signed something prepared later): the operation stays signing_required, fetch fresh signing data with POST /v1/governance/{id}/signing-data and sign it; 502 when the ledger could not be reached (nothing changed: retry the same signature).',
      scopes: ['write'],
      request: { params: IdParam, body: { required: true, content: { 'application/json': { schema: SignatureBody } } } },
      responses: { 200: jsonResponse(SignatureResult, 'Submitted'), ...errorResponses(400, 404, 409, 502) },
    }),
    async (c) => {
      const { op, outcome: p } = await submitGovernanceOpSignature(deps, callerOf(c), c.req.valid('param').id, c.req.valid('json'));
      return c.json(
        {
          governance_op_id: op.id,
          status: p.status,
          tx_hash: p.txHash,
          collected_signatures: p.collectedSignatures,
          required_signatures: p.requiredSignatures,
          is_ready: p.isReady,
          awaiting_authorities: p.awaitingAuthorities,
        },
        200,
      );
    },
  );
}

function registerRead(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/governance/{id}',
      tags: ['Governance'],
      summary: 'Read a governance operation',
      description:
        'Status and signing data. Once a signature was submitted: collected_signatures and required_signatures of the signing page, is_ready and awaiting_authorities, read live from the ledger (ledger_error instead when it cannot be read).',
      scopes: ['read'],
      request: { params: IdParam },
      responses: { 200: jsonResponse(GovernanceSchema, 'The operation'), ...errorResponses(404) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const { op, identityUrl, live } = await readGovernanceOp(deps, auth.orgId, c.req.valid('param').id);
      return c.json({ ...governanceView(op, identityUrl), ...live }, 200);
    },
  );
}
