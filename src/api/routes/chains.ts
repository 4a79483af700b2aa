/**
 * GET /v1/chains, GET /v1/chains/{id}: the chain registry: the names POST /v1/identity accepts in `chains`,
 * their EVM chain ids and the system contract addresses (the same on every chain). RPC URLs are not shown
 * (they often carry provider credentials).
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ChainConfig } from '../../config.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { errorResponses, RATE_LIMIT_HEADERS } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';

export const ChainSchema = z
  .object({
    name: z.string().openapi({ example: 'ethereum-sepolia' }),
    chain_id: z.number().int().openapi({ example: 11155111 }),
    family: z.literal('evm'),
    confirmations: z.number().int().openapi({ description: 'Blocks after inclusion before an execution counts as final' }),
    contracts: z
      .object({ proof_anchor: z.string(), account_factory: z.string() })
      .nullable()
      .openapi({ description: 'System contracts; null while not deployed/configured (identities cannot get an account there yet)' }),
  })
  .openapi('Chain');

export function chainView(c: ChainConfig): z.infer<typeof ChainSchema> {
  return {
    name: c.name,
    chain_id: c.chainId,
    family: 'evm',
    confirmations: c.confirmations,
    contracts: c.contracts ? { proof_anchor: c.contracts.proofAnchor, account_factory: c.contracts.accountFactory } : null,
  };
}

export function registerChainRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const json = (schema: z.ZodType, description: string) => ({ description, headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema } } });
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/chains',
      tags: ['Chains'],
      summary: 'The chains the gateway serves',
      description: 'Every chain name accepted in POST /v1/identity `chains`, with its chain id and system contract addresses.',
      scopes: ['read'],
      responses: { 200: json(z.object({ chains: z.array(ChainSchema) }), 'The chain registry') },
    }),
    (c) => c.json({ chains: deps.config.chains.map(chainView) }, 200),
  );
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/chains/{id}',
      tags: ['Chains'],
      summary: 'One chain',
      description: 'By registry name (ethereum-sepolia) or numeric EVM chain id (11155111).',
      scopes: ['read'],
      request: {
        params: z.object({
          id: z
            .string()
            .max(64)
            .openapi({ param: { name: 'id', in: 'path' } }),
        }),
      },
      responses: { 200: json(ChainSchema, 'The chain'), ...errorResponses(404) },
    }),
    (c) => {
      const id = c.req.valid('param').id;
      const chain = deps.config.chains.find((x) => x.name === id || (/^\d+$/.test(id) && x.chainId === Number(id)));
      if (!chain) throw new ApiError(404, 'CHAIN_NOT_FOUND', `Unknown chain ${id}`, { known_chains: deps.config.chains.map((x) => x.name) });
      return c.json(chainView(chain), 200);
    },
  );
}
