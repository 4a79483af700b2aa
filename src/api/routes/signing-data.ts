/**
 * Fresh signing data for what is still waiting for its signature (the use cases: src/services/signing-data.ts):
 *   POST /v1/transaction/{intent_id}/signing-data   the same intent prepared again: a new hash_to_sign
 *   POST /v1/sign/{id}/signing-data                 the same sign request prepared again: a new data_for_signature
 *   POST /v1/governance/{id}/signing-data           the same governance operation prepared again: a new hash_to_sign
 * A signature answered 409 SIGNING_DATA_STALE (the key signed something prepared later, or its key page changed)
 * is fixed by fetching these and signing again; the resource keeps its id.
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { VOTE_WORD } from '../../services/cosign.js';
import { refreshGovernanceSigning, refreshIntentSigning, refreshSignRequestSigning } from '../../services/signing-data.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { callerOf } from '../middleware/auth.js';
import { errorResponses, jsonResponse, resourceIdParam } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';
import { SignResponse } from './cosign-schemas.js';
import { GovernanceSchema, governanceView, IdParam as GovernanceIdParam } from './governance-schemas.js';
import { IntentIdParam, SigningDataSchema } from './transaction-schemas.js';

const ORDERING =
  'The ledger requires each key’s signature timestamps to grow, and a signature names its key page’s version: sign in the order the signing data was prepared, or fetch fresh signing data here after a 409 SIGNING_DATA_STALE (details.cause: timestamp or key_page_version).';

export function registerSigningDataRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/transaction/{intent_id}/signing-data',
      tags: ['Transactions'],
      summary: 'Fresh signing data for an unsigned intent',
      description: `The intent's ledger transaction prepared again for the same key (a new timestamp, the key page's current version): a new hash_to_sign for the same intent id, which stays signing_required. ${ORDERING} 409 when the intent is no longer signing_required.`,
      scopes: ['write'],
      request: { params: IntentIdParam },
      responses: {
        200: jsonResponse(
          z.object({
            intent_id: z.uuid(),
            status: z.literal('signing_required'),
            signing_mode: z.literal('external'),
            signing_data: SigningDataSchema,
            submit_url: z.string(),
            expires_at: z.string(),
            operation_id: z.string(),
          }),
          'Fresh signing data: sign hash_to_sign and submit it',
        ),
        ...errorResponses(400, 404, 409, 502),
      },
    }),
    async (c) => {
      const { intent_id } = c.req.valid('param');
      const { row, fresh } = await refreshIntentSigning(deps, callerOf(c), intent_id);
      return c.json(
        {
          intent_id,
          status: 'signing_required' as const,
          signing_mode: 'external' as const,
          signing_data: fresh.signingData,
          submit_url: `/v1/transaction/${intent_id}/signature`,
          expires_at: row.expiresAt.toISOString(),
          operation_id: row.operationId,
        },
        200,
      );
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/sign/{id}/signing-data',
      tags: ['Co-signing'],
      summary: 'Fresh signing data for an open sign request',
      description: `The same key's same vote on the same pending transaction prepared again (a new timestamp, the key page's current version and delegation path): a new data_for_signature for the same sign request. ${ORDERING} 409 while the request is being submitted or when the transaction is no longer pending; 404 once it is spent.`,
      scopes: ['write'],
      request: {
        params: z.object({ id: resourceIdParam('id', { code: 'SIGN_REQUEST_NOT_FOUND', message: 'Sign request not found' }, 'Sign request id (UUID)') }),
      },
      responses: { 200: jsonResponse(SignResponse, 'Fresh signing data: sign data_for_signature and submit it'), ...errorResponses(400, 404, 409, 502) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const prepared = await refreshSignRequestSigning(deps, callerOf(c), id);
      return c.json(
        {
          sign_request_id: id,
          status: 'signing_required',
          signing_data: {
            data_for_signature: prepared.hashToSign,
            transaction_hash: prepared.txHash,
            signer_url: prepared.signerUrl,
            signer_version: prepared.signerVersion,
            timestamp: prepared.timestamp,
            vote: VOTE_WORD[prepared.vote],
            delegators: prepared.delegators ?? [],
          },
          submit_url: `/v1/sign/${id}/signature`,
        },
        200,
      );
    },
  );

  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/governance/{id}/signing-data',
      tags: ['Governance'],
      summary: 'Fresh signing data for an unsigned governance operation',
      description: `The operation's transaction prepared again from its operations for the same key and page (a new timestamp, the key page's current version): a new hash_to_sign for the same governance_op_id, which stays signing_required. ${ORDERING} 409 when the operation is no longer signing_required.`,
      scopes: ['write'],
      request: { params: GovernanceIdParam },
      responses: { 200: jsonResponse(GovernanceSchema, 'Fresh signing data: sign hash_to_sign and submit it'), ...errorResponses(400, 404, 409, 502) },
    }),
    async (c) => {
      const { op, identityUrl } = await refreshGovernanceSigning(deps, callerOf(c), c.req.valid('param').id);
      return c.json(governanceView(op, identityUrl), 200);
    },
  );
}
