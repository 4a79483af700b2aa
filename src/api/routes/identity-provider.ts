/**
 * GET /v1/identity/{id}/mnemonic/{token}: the one-shot retrieval of a provider-signing identity's mnemonic
 * (src/services/provider.ts). The URL is in the creation answer only; it answers once, then 404, like an expired
 * or unknown token.
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { MNEMONIC_GONE, retrieveMnemonic } from '../../services/provider.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { callerOf } from '../middleware/auth.js';
import { errorResponses, jsonResponse, resourceIdParam } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';

export const MnemonicRetrievalSchema = z
  .object({
    url: z.string().openapi({ description: 'GET it (with an API key of the organization) to receive the mnemonic, exactly once' }),
    expires_at: z.string().openapi({ format: 'date-time', description: 'After this the URL answers 404 (default 15 minutes after creation)' }),
  })
  .openapi('MnemonicRetrieval', { description: 'Provider signing only: the one-shot URL of the mnemonic, in the creation answer and nowhere else' });

export function registerMnemonicRoute(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/identity/{id}/mnemonic/{token}',
      tags: ['Identity'],
      summary: "Retrieve a provider identity's mnemonic (once)",
      description:
        "The BIP-39 mnemonic (24 English words) of the key the gateway generated for a provider-signing identity; the key is derived from it by SLIP-0010 ed25519 along m/44'/281'/0'/0'/0', so it reproduces the public key on the key page. Answered exactly once, within expires_at: a second call, an expired token and an unknown one are the same 404 MNEMONIC_NOT_FOUND. The answer is not cached (Cache-Control: no-store).",
      scopes: ['write'],
      request: {
        params: z.object({
          id: resourceIdParam('id', MNEMONIC_GONE, 'Identity id (UUID)'),
          token: z.string().max(100).openapi({ description: 'The token of mnemonic_retrieval.url (43 base64url characters)', pattern: '^[A-Za-z0-9_-]{43}$' }),
        }),
      },
      responses: {
        200: jsonResponse(z.object({ mnemonic: z.string(), warning: z.string() }).openapi('Mnemonic'), 'The mnemonic; this URL answers 404 from now on'),
        ...errorResponses(404),
      },
    }),
    async (c) => {
      const { id, token } = c.req.valid('param');
      const out = await retrieveMnemonic(deps, callerOf(c), id, token);
      c.header('Cache-Control', 'no-store');
      return c.json(out, 200);
    },
  );
}
