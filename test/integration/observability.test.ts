/** /metrics (Prometheus text: counts and latency by route pattern and status) and JSON request logs with the
 * request id; neither ever contains a raw API key. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpMetrics } from '../../src/api/middleware/metrics.js';
import { OPERATOR_PERMISSIONS } from '../../src/db/api-keys.js';
import { createLogger } from '../../src/log.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

describe('metrics and request logs', () => {
  let t: TestApp;
  const lines: string[] = [];
  let admin: TestKey;
  let operator: TestKey;
  let createdKey = '';
  beforeAll(async () => {
    t = await startTestApp('pglite', { logger: createLogger('debug', { process: 'test' }, (l) => lines.push(l)), metrics: new HttpMetrics() });
    admin = await createTestOrgAndKey(t.db, { isAdmin: true });
    operator = await createTestOrgAndKey(t.db, { permissions: OPERATOR_PERMISSIONS });
    await t.call('/v1/admin/api-keys', { key: admin.key });
    await t.call('/v1/admin/api-keys', { key: admin.key });
    const res = await t.call('/v1/admin/api-keys', { method: 'POST', key: admin.key, body: JSON.stringify({ name: 'm' }) });
    createdKey = (await res.json()).api_key.key;
    await t.call(`/v1/admin/api-keys/${admin.keyId}/rotate`, { method: 'POST', key: createdKey }); // 403: default permissions, no admin scope
    await t.call('/v1/admin/api-keys', { key: `ck_live_${'Z'.repeat(43)}` }); // unknown key: 401
    await t.call('/v1/unknown/path', { key: createdKey }); // 404
    await t.call('/v1/admin/api-keys', { headers: { 'X-Request-Id': 'trace-abc-123' }, key: admin.key });
  });
  afterAll(async () => t?.close());

  it('/metrics needs an API key with the operator scope (spec §5: only GET /v1/health is keyless)', async () => {
    const anonymous = await t.call('/metrics');
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).code).toBe('MISSING_API_KEY');
    const notOperator = await t.call('/metrics', { key: createdKey });
    expect(notOperator.status).toBe(403);
    expect(await notOperator.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE', error: 'API key lacks the required scope: operator' });
    const tenantAdmin = await t.call('/metrics', { key: admin.key });
    expect(tenantAdmin.status).toBe(403);
  });

  it('counts requests and latency by method, route pattern and status', async () => {
    const res = await t.call('/metrics', { key: operator.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('# TYPE gateway_http_requests_total counter');
    expect(text).toContain('# TYPE gateway_http_request_duration_seconds histogram');
    expect(text).toContain('gateway_http_requests_total{method="GET",route="/v1/admin/api-keys",status="200"} 3');
    expect(text).toContain('gateway_http_requests_total{method="POST",route="/v1/admin/api-keys",status="201"} 1');
    expect(text).toContain('gateway_http_requests_total{method="POST",route="/v1/admin/api-keys/:key_id/rotate",status="403"} 1');
    expect(text).toContain('gateway_http_requests_total{method="GET",route="/v1/admin/api-keys",status="401"} 1');
    expect(text).toContain('gateway_http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).toMatch(/gateway_http_request_duration_seconds_bucket\{method="GET",route="\/v1\/admin\/api-keys",status="200",le="\+Inf"\} 3/);
    expect(text).toMatch(/gateway_http_request_duration_seconds_count\{method="POST",route="\/v1\/admin\/api-keys",status="201"\} 1/);
    for (const secret of [admin.key, createdKey]) expect(text).not.toContain(secret);
    expect(text).not.toContain(admin.keyId); // ids are not labels either
  });

  it('logs one JSON line per request with the request id, org and key ids, and never a raw key', () => {
    const requests = lines.map((l) => JSON.parse(l)).filter((r) => r.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(7);
    for (const r of requests) expect(r.request_id).toBeTruthy();
    const traced = requests.find((r) => r.request_id === 'trace-abc-123');
    expect(traced).toMatchObject({ method: 'GET', path: '/v1/admin/api-keys', status: 200, org_id: admin.orgId, key_id: admin.keyId });
    const all = lines.join('\n');
    for (const secret of [admin.key, createdKey, `ck_live_${'Z'.repeat(43)}`]) expect(all).not.toContain(secret);
  });
});
