/**
 * GET /v1/health — public. Checks every dependency in parallel with a short deadline each and answers 200
 * `{ status: "healthy", checks }` or 503 `{ status: "unhealthy", error, checks }` naming what is down.
 * Publicly only dependency names and up/down: why a probe failed (its error text may hold an address, even URL
 * credentials) and how long it took are logged server-side, with URLs masked (src/net/redact.ts). Probe results are
 * cached for HEALTH_CACHE_MS and concurrent calls share one round of probes, so unauthenticated callers cannot
 * make the gateway fan out to its dependencies at their request rate.
 *
 * GET /v1/health/ready — public, a readiness probe: 200 `{ status: "ready", checks }` while the database and Temporal
 * answer (what every request needs: keys, rate limits, records, workflows), else 503 `{ status: "not_ready", error,
 * checks }`. The ledger, validators and chains are left out: an outage there fails the requests that need it, not
 * the gateway as a whole. Same privacy and caching as /v1/health; public because orchestrators probe without credentials.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { meetsThreshold } from '../../chain/formulas.js';
import { readChainId } from '../../chain/rpc.js';
import { withTimeout } from '../../net/timeout.js';
import { httpFetch } from '../../net/fetch.js';
import { redactUrls } from '../../net/redact.js';
import { pingTemporal } from '../../temporal/client.js';
import type { AppDeps, AppEnv } from '../deps.js';

/** how long one round of probe results answers health requests */
export const HEALTH_CACHE_MS = 5000;

const CheckSchema = z
  .object({
    status: z.enum(['up', 'down']),
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
  description: `Public, no API key. Checks the database, Temporal (the frontend answers and knows the gateway's namespace), the ledger, the validators (when VALIDATOR_URLS is set: up while at least 2/3 of them answer, enough for a quorum) and every configured chain (results cached ${HEALTH_CACHE_MS / 1000} s). 503 names each dependency that is down; the reasons are in the server log only.`,
  security: [],
  responses: {
    200: { description: 'Every dependency answered', content: { 'application/json': { schema: HealthSchema } } },
    503: { description: 'At least one dependency is down', content: { 'application/json': { schema: HealthSchema } } },
  },
});

const ReadinessSchema = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    error: z.string().optional(),
    checks: z.record(z.string(), CheckSchema),
  })
  .openapi('Readiness');

const readyRoute = createRoute({
  method: 'get',
  path: '/v1/health/ready',
  tags: ['Health'],
  summary: 'Readiness: can the gateway serve requests',
  description: `Public, no API key (a load balancer or orchestrator probe). 200 while the database and Temporal answer; 503 naming which does not (results cached ${HEALTH_CACHE_MS / 1000} s). The ledger, validators and chains are checked by GET /v1/health.`,
  security: [],
  responses: {
    200: { description: 'Ready', content: { 'application/json': { schema: ReadinessSchema } } },
    503: { description: 'Not ready: the database or Temporal does not answer', content: { 'application/json': { schema: ReadinessSchema } } },
  },
});

type Check = z.infer<typeof CheckSchema>;
interface Probe {
  status: Check['status'];
  latencyMs: number;
  error?: string;
}

async function timed(fn: () => Promise<void>): Promise<Probe> {
  const t0 = performance.now();
  try {
    await fn();
    return { status: 'up', latencyMs: Math.round(performance.now() - t0) };
  } catch (err) {
    return { status: 'down', latencyMs: Math.round(performance.now() - t0), error: (err as Error).message };
  }
}

/** Enough validators answer their GET /v1/health for a quorum (2/3 of VALIDATOR_URLS, each of equal power). */
async function expectValidatorQuorum(urls: readonly string[], timeoutMs: number): Promise<void> {
  const answers = await Promise.all(
    urls.map(async (url) => {
      try {
        const res = await httpFetch(`${url.replace(/\/$/, '')}/v1/health`, { signal: AbortSignal.timeout(timeoutMs) });
        return res.ok ? undefined : `${url}: HTTP ${res.status}`;
      } catch (err) {
        return `${url}: ${(err as Error).message}`;
      }
    }),
  );
  const down = answers.filter((a): a is string => a !== undefined);
  const answering = answers.reduce((bits, a, i) => (a === undefined ? bits | (1n << BigInt(i)) : bits), 0n);
  // the validator set's rule (equal powers, 2/3), as the ProofAnchor applies it
  if (!meetsThreshold({ powers: urls.map(() => 100n), thresholdNum: 2n, thresholdDen: 3n }, answering)) {
    const up = urls.length - down.length;
    throw new Error(`${up} of ${urls.length} validators answer, fewer than a quorum; not answering: ${down.join('; ')}`);
  }
}

async function expectChainId(rpcUrl: string, chainId: number, timeoutMs: number): Promise<void> {
  const got = await readChainId(rpcUrl, timeoutMs);
  if (got !== chainId) throw new Error(`chain id ${got}, expected ${chainId}`);
}

export function registerHealthRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const TIMEOUT = 2000;
  const now = deps.now ?? Date.now;
  const probes: Record<string, () => Promise<void>> = {
    database: () => deps.database.ping(TIMEOUT),
    temporal: () => pingTemporal(deps.temporal, TIMEOUT),
    ledger: async () => {
      await withTimeout(deps.ledger.networkStatus(), TIMEOUT, 'ledger');
    },
  };
  if (deps.config.validatorUrls.length) probes.validators = () => expectValidatorQuorum(deps.config.validatorUrls, TIMEOUT);
  for (const chain of deps.config.chains) {
    probes[`chain:${chain.name}`] = () => expectChainId(chain.rpcUrl, chain.chainId, TIMEOUT);
  }
  const names = Object.keys(probes);

  async function probeAll(which: readonly string[]): Promise<Record<string, Check>> {
    const results = await Promise.all(which.map((n) => timed(probes[n])));
    const checks: Record<string, Check> = {};
    which.forEach((n, i) => {
      const r = results[i];
      checks[n] = { status: r.status };
      if (r.status === 'down') {
        deps.logger.warn('health check failed', { dependency: n, latency_ms: r.latencyMs, reason: redactUrls(r.error ?? '') });
      }
    });
    return checks;
  }

  /** one round of probes of `which` at a time; its result answers every request for HEALTH_CACHE_MS after it started */
  function cachedChecks(which: readonly string[]) {
    let cached: { at: number; checks: Promise<Record<string, Check>> } | undefined;
    return () => {
      const t = now();
      if (!cached || t - cached.at >= HEALTH_CACHE_MS || t < cached.at) cached = { at: t, checks: probeAll(which) };
      return cached.checks;
    };
  }
  const currentChecks = cachedChecks(names);
  const readiness = ['database', 'temporal'] as const;
  const readinessChecks = cachedChecks(readiness);

  app.openapi(route, async (c) => {
    const checks = await currentChecks();
    const down = names.filter((n) => checks[n].status === 'down');
    if (down.length === 0) return c.json({ status: 'healthy' as const, checks }, 200);
    return c.json({ status: 'unhealthy' as const, error: `Unavailable: ${down.join(', ')}`, checks }, 503);
  });

  app.openapi(readyRoute, async (c) => {
    const checks = await readinessChecks();
    const down = readiness.filter((n) => checks[n].status === 'down');
    if (down.length === 0) return c.json({ status: 'ready' as const, checks }, 200);
    return c.json({ status: 'not_ready' as const, error: `Unavailable: ${down.join(', ')}`, checks }, 503);
  });
}
