/**
 * GET /v1/health — public. Checks every dependency in parallel with a short deadline each and answers 200
 * `{ status: "healthy", checks }` or 503 `{ status: "unhealthy", error, checks }` naming what is down.
 * Only dependency names and states are shown, never addresses.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { readChainId } from '../../chain/rpc.js';
import { createLedgerClient } from '../../ledger/client.js';
import { pingTemporal } from '../../temporal/client.js';
import type { AppDeps, AppEnv } from '../deps.js';

const CheckSchema = z
  .object({
    status: z.enum(['up', 'down']),
    latency_ms: z.number(),
    error: z.string().optional(),
  })
  .openapi('DependencyCheck');

const HealthSchema = z
  .object({
    status: z.enum(['healthy', 'unhealthy']),
    error: z.string().optional(),
    checks: z.record(z.string(), CheckSchema),
  })
  .openapi('Health');

const route = createRoute({
  method: 'get',
  path: '/v1/health',
  tags: ['Health'],
  summary: 'Health of the gateway and its dependencies',
  description:
    'Public, no API key. Checks the database, Temporal, the ledger and every configured chain. 503 names each dependency that is down.',
  security: [],
  responses: {
    200: { description: 'Every dependency answered', content: { 'application/json': { schema: HealthSchema } } },
    503: { description: 'At least one dependency is down', content: { 'application/json': { schema: HealthSchema } } },
  },
});

type Check = z.infer<typeof CheckSchema>;

async function timed(fn: () => Promise<void>): Promise<Check> {
  const t0 = performance.now();
  try {
    await fn();
    return { status: 'up', latency_ms: Math.round(performance.now() - t0) };
  } catch (err) {
    return { status: 'down', latency_ms: Math.round(performance.now() - t0), error: (err as Error).message };
  }
}

async function expectChainId(rpcUrl: string, chainId: number, timeoutMs: number): Promise<void> {
  const got = await readChainId(rpcUrl, timeoutMs);
  if (got !== chainId) throw new Error(`chain id ${got}, expected ${chainId}`);
}

export function registerHealthRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const TIMEOUT = 2000;
  const ledger = createLedgerClient({ url: deps.config.ledgerUrl, timeoutMs: TIMEOUT });
  app.openapi(route, async (c) => {
    const probes: Record<string, () => Promise<void>> = {
      database: () => deps.database.ping(TIMEOUT),
      temporal: () => pingTemporal(deps.temporal, TIMEOUT),
      ledger: async () => {
        await ledger.networkStatus();
      },
    };
    for (const chain of deps.config.chains) {
      probes[`chain:${chain.name}`] = () => expectChainId(chain.rpcUrl, chain.chainId, TIMEOUT);
    }
    const names = Object.keys(probes);
    const results = await Promise.all(names.map((n) => timed(probes[n])));
    const checks = Object.fromEntries(names.map((n, i) => [n, results[i]]));
    const down = names.filter((n) => checks[n].status === 'down');
    if (down.length === 0) return c.json({ status: 'healthy' as const, checks }, 200);
    return c.json({ status: 'unhealthy' as const, error: `Unavailable: ${down.join(', ')}`, checks }, 503);
  });
}
