/**
 * No secret in the logs when a database write fails. A failed query's error repeats every parameter of the query
 * (drizzle's message ends with `params: …`; a PostgreSQL `detail` quotes the row), so a write that carries a secret
 * and fails would print it. Here each such write path is made to fail by a trigger that rejects the write (webhook
 * endpoint create with a given secret, rotate-secret, API key create and rotate, portal sign-up), every log line is
 * captured, and none holds a webhook secret, a raw API key or a key's SHA-256; nor does any answer.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

const RAW_KEY = /ck_live_[0-9A-Za-z]{43}/;
const KEY_HASH = /\b[0-9a-f]{64}\b/;
const WEBHOOK_SECRET = /whsec_[A-Za-z0-9+/=]{16,}/;

describe.each(dbKinds())('a failed write logs no secret (%s)', (kind) => {
  let t: TestApp;
  let admin: TestKey;
  let endpointId = '';
  let otherKeyId = '';
  const lines: string[] = [];
  const answers: string[] = [];

  const call = async (method: string, path: string, body?: unknown, key = admin.key) => {
    const res = await t.call(path, { method, key, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    answers.push(text);
    return { status: res.status, text };
  };
  /** Every INSERT (and UPDATE, where `updates`) on `table` fails from now on, with a message that quotes no value. */
  const rejectWrites = async (table: string, updates: boolean) => {
    await t.db.execute(
      sql.raw(`CREATE OR REPLACE FUNCTION test_reject_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'write refused by the test' USING ERRCODE = 'P0001'; END $$`),
    );
    await t.db.execute(
      sql.raw(`CREATE TRIGGER test_reject_${table} BEFORE INSERT${updates ? ' OR UPDATE' : ''} ON ${table} FOR EACH ROW EXECUTE FUNCTION test_reject_write()`),
    );
  };

  beforeAll(async () => {
    t = await startTestApp(kind, {
      logger: createLogger('debug', { process: 'test' }, (l) => lines.push(l)),
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }, // the endpoints are on loopback: no DNS, never called
    });
    admin = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 10_000 });
    otherKeyId = (await createTestOrgAndKey(t.db, { orgId: admin.orgId, name: 'to rotate' })).keyId;
    const ep = await call('POST', '/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', skip_verification: true });
    expect(ep.status, ep.text).toBe(201);
    endpointId = JSON.parse(ep.text).id;
    lines.length = 0;
    answers.length = 0;
  });
  afterAll(async () => t?.close());

  it('webhook endpoint create (given secret) and rotate-secret', async () => {
    await rejectWrites('webhook_endpoints', true);
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const created = await call('POST', '/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/other', secret, skip_verification: true });
    expect(created.status).toBe(500);
    const rotated = await call('POST', `/v1/webhooks/endpoints/${endpointId}/rotate-secret`);
    expect(rotated.status).toBe(500);
    const all = [...lines, ...answers].join('\n');
    expect(lines.some((l) => JSON.parse(l).msg === 'unhandled error')).toBe(true);
    expect(all).not.toContain(secret);
    expect(all).not.toContain(secret.slice('whsec_'.length));
    expect(all).not.toMatch(WEBHOOK_SECRET);
  });

  it('API key create and rotate, portal sign-up', async () => {
    await rejectWrites('api_keys', false);
    expect((await call('POST', '/v1/admin/api-keys', { name: 'new' })).status).toBe(500);
    expect((await call('POST', `/v1/admin/api-keys/${otherKeyId}/rotate`)).status).toBe(500);
    const signup = await t.call('/portal/signup', { method: 'POST', body: JSON.stringify({ organization_name: 'log secrets' }) });
    answers.push(await signup.text());
    expect(signup.status).toBe(500);
    expect(lines.filter((l) => JSON.parse(l).msg === 'unhandled error').length).toBeGreaterThanOrEqual(3);
    const all = [...lines, ...answers].join('\n');
    expect(all).not.toMatch(RAW_KEY);
    expect(all).not.toMatch(KEY_HASH);
  });

  it('the log line keeps what an operator needs: the SQL text and the database reason with its code', () => {
    const failures = lines.map((l) => JSON.parse(l)).filter((r) => r.msg === 'unhandled error');
    expect(failures.length).toBeGreaterThanOrEqual(5);
    for (const f of failures) {
      expect(f.err.message).toMatch(/^Failed query: (insert into|update) "(webhook_endpoints|api_keys)"/);
      expect(f.err.message).toContain('write refused by the test (SQLSTATE P0001)');
      expect(f.err.message).not.toContain('params:');
    }
  });
});
