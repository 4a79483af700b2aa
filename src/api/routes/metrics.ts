/**
 * GET /metrics — Prometheus text exposition of the API's request counts and latencies. Like every route but
 * GET /v1/health it needs X-API-Key, here with the admin scope: the scraper sends an admin key.
 */
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../deps.js';
import type { HttpMetrics } from '../middleware/metrics.js';
import { RATE_LIMIT_HEADERS } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';

export function registerMetricsRoute(app: OpenAPIHono<AppEnv>, deps: AppDeps, metrics: HttpMetrics) {
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/metrics',
      tags: ['Health'],
      summary: 'Prometheus metrics',
      description:
        'gateway_http_requests_total and gateway_http_request_duration_seconds by method, route pattern and status, for this API process. Needs an API key with the admin scope.',
      scopes: ['admin'],
      responses: {
        200: { description: 'Prometheus text format 0.0.4', headers: RATE_LIMIT_HEADERS, content: { 'text/plain': { schema: z.string() } } },
      },
    }),
    ((c: import('hono').Context<AppEnv>) => c.body(metrics.render(), 200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' })) as never,
  );
}
