import { describe, expect, it } from 'vitest';
import { HttpMetrics } from '../../src/api/middleware/metrics.js';

describe('HttpMetrics', () => {
  it('counts each observation in every bucket at or above it, per method, route and status', () => {
    const m = new HttpMetrics();
    for (const s of [0.001, 0.005, 0.03, 2, 20]) m.observe('GET', '/v1/x/:id', 200, s);
    m.observe('GET', '/v1/x/:id', 404, 0.2);
    m.observe('POST', 'a"b\\c', 201, 0.01);
    const text = m.render();
    const bucket = (le: string) => Number(new RegExp(`_bucket\\{method="GET",route="/v1/x/:id",status="200",le="${le}"\\} (\\d+)`).exec(text)?.[1]);
    expect([0.005, 0.01, 0.025, 0.05, 2.5, 10].map((b) => bucket(String(b)))).toEqual([2, 2, 2, 3, 4, 4]);
    expect(bucket('\\+Inf')).toBe(5);
    expect(text).toContain('gateway_http_requests_total{method="GET",route="/v1/x/:id",status="404"} 1');
    expect(text).toContain('gateway_http_request_duration_seconds_bucket{method="GET",route="/v1/x/:id",status="404",le="0.1"} 0');
    expect(text).toContain('gateway_http_request_duration_seconds_bucket{method="GET",route="/v1/x/:id",status="404",le="0.25"} 1');
    expect(text).toContain('gateway_http_requests_total{method="POST",route="a\\"b\\\\c",status="201"} 1');
  });
});
