/** GET /metrics — Prometheus text exposition of the API's request counts and latencies (public, like a scrape target). */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../deps.js';
import type { HttpMetrics } from '../middleware/metrics.js';
import { errorResponses, RATE_LIMIT_HEADERS } from '../schemas/common.js';

export function registerMetricsRoute(app: OpenAPIHono<AppEnv>, metrics: HttpMetrics) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/metrics',
      tags: ['Health'],
      summary: 'Prometheus metrics',
      description:
        'gateway_http_requests_total and gateway_http_request_duration_seconds by method, route pattern and status, for this API process.',
      security: [],
      responses: {
        200: { description: 'Prometheus text format 0.0.4', headers: RATE_LIMIT_HEADERS, content: { 'text/plain': { schema: z.string() } } },
        ...errorResponses(429),
      },
    }),
    ((c: import('hono').Context<AppEnv>) =>
      c.body(metrics.render(), 200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' })) as never,
  );
}
