/**
 * GET /v1/chains, GET /v1/chains/{id}: the chain registry, public (no API key; counted against the client IP's rate
 * limit like every public path): the names POST /v1/identity accepts in `chains`, their EVM chain ids and the system
 * contract addresses (the same on every chain), each with whether its code is on the chain (src/services/chains.ts:
 * read from the chain and cached, so the route stays cheap). RPC URLs are not shown (they often carry provider
 * credentials).
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { createChainRegistry } from '../../services/chains.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { errorResponses, jsonResponse } from '../schemas/common.js';

const ContractSchema = z.object({
  address: z.string().openapi({ description: 'EIP-55 address; the same on every chain (CREATE2)' }),
  verified: z.boolean().openapi({
    description:
      'true: the chain holds contract code at the address (eth_getCode, cached for minutes). false: no code there, or the chain did not answer the last check',
  }),
});

export const ChainSchema = z
  .object({
    id: z.string().openapi({ description: 'Registry id: the name POST /v1/identity `chains` and intent legs take', example: 'polygon-amoy' }),
    name: z.string().openapi({ description: 'The same registry id (Certen clients read either)', example: 'polygon-amoy' }),
    chainId: z.number().int().openapi({ description: 'The EVM chain id (the name Certen clients read); the same as evm_chain_id', example: 80002 }),
    evm_chain_id: z.number().int().openapi({ example: 80002 }),
    family: z.literal('evm'),
    confirmations: z.number().int().openapi({ description: 'Blocks after inclusion before an execution counts as final' }),
    contracts: z
      .object({ proof_anchor: ContractSchema, account_factory: ContractSchema })
      .nullable()
      .openapi({ description: 'System contracts; null while not deployed/configured (identities cannot get an account there yet)' }),
  })
  .openapi('Chain');

export function registerChainRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const registry = createChainRegistry(deps);
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/chains',
      tags: ['Chains'],
      summary: 'The chains the gateway serves',
      description:
        'Public, no API key. Every chain name accepted in POST /v1/identity `chains`, with its EVM chain id and system contract addresses, each marked verified when its code is on the chain.',
      security: [],
      responses: { 200: jsonResponse(z.object({ chains: z.array(ChainSchema) }), 'The chain registry'), ...errorResponses(429) },
    }),
    async (c) => c.json({ chains: await registry.list() }, 200),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/chains/{id}',
      tags: ['Chains'],
      summary: 'One chain',
      description:
        'Public, no API key. By registry id (polygon-amoy) or numeric EVM chain id (80002). Any other value, whatever its form or length, is a 404 CHAIN_NOT_FOUND listing the known chains.',
      security: [],
      // the pattern (a chain name's form, which also covers a numeric id) is documentation: any other value is the 404
      request: {
        params: z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' }, pattern: '^[a-z0-9][a-z0-9-]*$', example: 'polygon-amoy' }) }),
      },
      responses: { 200: jsonResponse(z.object({ chain: ChainSchema }), 'The chain'), ...errorResponses(404, 429) },
    }),
    async (c) => {
      const id = c.req.valid('param').id;
      const chain = await registry.find(id);
      if (!chain) {
        const shown = id.length > 64 ? `${id.slice(0, 64)}…` : id;
        throw new ApiError(404, 'CHAIN_NOT_FOUND', `Unknown chain ${shown}`, { known_chains: deps.config.chains.map((x) => x.name) });
      }
      return c.json({ chain }, 200);
    },
  );
}
