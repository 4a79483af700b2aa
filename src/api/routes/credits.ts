/**
 * Credits after creation (the use case: src/services/credits.ts):
 *   POST /v1/identity/{id}/credits   buy ledger credits for the identity's page 1, or another key page of its book
 *                                    (key_page_url), from the organization's credit grant. Idempotency-Key honoured.
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { buyIdentityCredits } from '../../services/credits.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { callerOf } from '../middleware/auth.js';
import { errorResponses, jsonResponse, resourceIdParam } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';

const IdParam = z.object({
  id: resourceIdParam('id', { code: 'IDENTITY_NOT_FOUND', message: 'Identity not found' }, 'Identity id (UUID)'),
});

const CreditsBody = z
  .object({
    credits: z.number().openapi({
      type: 'integer',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: "Whole ledger credits to buy (at least 1), charged to the organization's credit grant",
      example: 100,
    }),
    key_page_url: z.string().optional().openapi({
      description: "The key page that receives them: page 1 of the identity by default, or another page of the identity's book (one made by create_key_page)",
    }),
  })
  .openapi('BuyCreditsRequest');

const Purchase = {
  purchase_id: z.string().openapi({ format: 'uuid', description: 'This purchase (its workflow is credits-<purchase_id>)' }),
  identity_id: z.string().openapi({ format: 'uuid' }),
  key_page_url: z.string().openapi({ description: 'The key page the credits went to' }),
  credits_added: z.number().int().openapi({ description: 'Whole credits bought' }),
};

const Bought = z
  .object({
    ...Purchase,
    status: z.literal('completed'),
    credit_balance: z.number().int().openapi({ description: "The page's balance on the ledger once the credits landed (whole credits)" }),
    tx_hash: z.string().openapi({ description: 'The AddCredits ledger transaction (64 hex)' }),
  })
  .openapi('CreditsBought');

const Pending = z
  .object({
    ...Purchase,
    status: z.literal('pending'),
    status_url: z.string().openapi({ description: "GET it for the identity's credit_balance (page 1); the purchase finishes on its own" }),
  })
  .openapi('CreditsPending');

export function registerCreditRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/identity/{id}/credits',
      tags: ['Identities'],
      summary: 'Buy ledger credits for a key page of an identity',
      description:
        "Buys `credits` from the organization's credit grant through the gateway sponsor (AddCredits) for the identity's page 1, or for another key page of its book named by key_page_url (a page made by create_key_page; a page outside the book or that does not exist is a 400 naming key_page_url). The grant is charged at once: a request beyond what remains is a 402 CREDIT_GRANT_EXCEEDED whose details name `remaining`. Answers 200 with the page's new balance read from the ledger once the credits landed, or 202 when that takes longer (the purchase finishes on its own). A purchase the ledger refuses is given back to the grant.",
      scopes: ['write'],
      idempotent: true,
      request: { params: IdParam, body: { required: true, content: { 'application/json': { schema: CreditsBody } } } },
      responses: {
        200: jsonResponse(Bought, 'The credits landed on the page'),
        202: jsonResponse(Pending, 'Bought; the credits have not landed yet'),
        ...errorResponses(400, 402, 404, 409, 502, 503),
      },
    }),
    async (c) => {
      const p = await buyIdentityCredits(deps, callerOf(c), c.req.valid('param').id, c.req.valid('json'));
      const base = { purchase_id: p.purchaseId, identity_id: p.identity.id, key_page_url: p.keyPageUrl, credits_added: p.credits };
      if (p.done) return c.json({ ...base, status: 'completed' as const, credit_balance: p.creditBalance, tx_hash: p.txHash }, 200);
      return c.json({ ...base, status: 'pending' as const, status_url: `/v1/identity/${p.identity.id}` }, 202);
    },
  );
}
