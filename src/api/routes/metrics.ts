/**
 * GET /metrics — Prometheus text exposition of the API's request counts and latencies. Like every route but
 * GET /v1/health it needs X-API-Key, here with the `operator` scope: the numbers are gateway-wide (every
 * organization's traffic), so a tenant's admin key is refused and the scraper sends the operator's key.
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
        'gateway_http_requests_total and gateway_http_request_duration_seconds by method, route pattern and status, for this API process. Gateway-wide, so it needs the operator scope, which only the operator bootstrap key holds (a tenant admin key gets 403).',
      scopes: ['operator'],
      responses: {
        200: { description: 'Prometheus text format 0.0.4', headers: RATE_LIMIT_HEADERS, content: { 'text/plain': { schema: z.string() } } },
      },
    }),
    ((c: import('hono').Context<AppEnv>) => c.body(metrics.render(), 200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' })) as never,
  );
}
