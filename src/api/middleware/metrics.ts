/**
 * Prometheus metrics of the HTTP API, kept in the process (each replica is scraped on its own):
 *   gateway_http_requests_total{method,route,status}            counter
 *   gateway_http_request_duration_seconds{method,route,status}  histogram
 * `route` is the matched route pattern (e.g. /v1/admin/api-keys/:key_id), never the raw path, so labels stay few
 * and carry no ids; no header (and so no API key) ever becomes a label.
 */
import type { MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from '../deps.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series {
  labels: string;
  count: number;
  sum: number;
  buckets: number[];
}

export class HttpMetrics {
  private series = new Map<string, Series>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let s = this.series.get(key);
    if (!s) {
      s = { labels: `method="${esc(method)}",route="${esc(route)}",status="${status}"`, count: 0, sum: 0, buckets: BUCKETS.map(() => 0) };
      this.series.set(key, s);
    }
    s.count++;
    s.sum += seconds;
    for (let i = BUCKETS.length - 1; i >= 0 && seconds <= BUCKETS[i]!; i--) s.buckets[i]!++;
  }

  /** Prometheus text exposition format 0.0.4 */
  render(): string {
    const lines: string[] = [
      '# HELP gateway_http_requests_total HTTP requests by method, route pattern and status.',
      '# TYPE gateway_http_requests_total counter',
    ];
    const all = [...this.series.values()].sort((a, b) => a.labels.localeCompare(b.labels));
    for (const s of all) lines.push(`gateway_http_requests_total{${s.labels}} ${s.count}`);
    lines.push(
      '# HELP gateway_http_request_duration_seconds HTTP request latency by method, route pattern and status.',
      '# TYPE gateway_http_request_duration_seconds histogram',
    );
    for (const s of all) {
      for (const [i, b] of BUCKETS.entries()) lines.push(`gateway_http_request_duration_seconds_bucket{${s.labels},le="${b}"} ${s.buckets[i]}`);
      lines.push(`gateway_http_request_duration_seconds_bucket{${s.labels},le="+Inf"} ${s.count}`);
      lines.push(`gateway_http_request_duration_seconds_sum{${s.labels}} ${s.sum}`);
      lines.push(`gateway_http_request_duration_seconds_count{${s.labels}} ${s.count}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export function httpMetrics(metrics: HttpMetrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // the route pattern of the endpoint (not of a middleware), also when a middleware answered (401, 429);
      // requests that matched no endpoint share one label
      const routes = matchedRoutes(c);
      let label = 'unmatched';
      for (let i = routes.length - 1; i >= 0; i--) {
        if (routes[i]!.method !== 'ALL') {
          label = routes[i]!.path;
          break;
        }
      }
      metrics.observe(c.req.method, label, c.res.status, (performance.now() - started) / 1000);
    }
  };
}
