/**
 * Inputs that take one of a closed set of values refuse any other with a 400 VALIDATION_ERROR that names the field
 * and lists the values the gateway supports: `proof_class` of POST /v1/transaction, the `type` filter of
 * GET /v1/events (the event catalogue, the same list webhook endpoints' `event_types` are checked against).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/webhooks/catalogue.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

describe('closed value sets', () => {
  let t: TestApp;
  let key: TestKey;

  beforeAll(async () => {
    t = await startTestApp('pglite');
    key = await createTestOrgAndKey(t.db, { rateLimitRpm: 100_000, permissions: ['read', 'write', 'events:read'] });
  });
  afterAll(async () => t?.close());

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await t.call(path, { method, key: key.key, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const prepare = (proof_class: unknown) =>
    call('POST', '/v1/transaction', { identity_id: randomUUID(), intent: { adiUrl: 'acc://x.acme', legs: [] }, proof_class });

  it('proof_class: any value but a supported one is a 400 naming the field and listing the supported values', async () => {
    for (const bad of ['STANDARD', 'Batched', 'on-demand', '', 'premium', 42]) {
      const r = await prepare(bad);
      expect(r.status, `${JSON.stringify(bad)}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.code).toBe('VALIDATION_ERROR');
      expect(r.body.details.field).toBe('proof_class');
      expect(r.body.error).toBe('proof_class: must be one of: standard, batched, on_demand, on_cadence');
    }
    // the supported value (and none) pass validation: the unknown identity is what stops them
    for (const ok of ['standard', 'batched', 'on_demand', 'on_cadence', undefined]) {
      const r = await prepare(ok);
      expect(r.status, JSON.stringify(r.body)).toBe(404);
      expect(r.body.code).toBe('IDENTITY_NOT_FOUND');
    }
  });

  it('proof_class is documented with its values', async () => {
    const doc = await (await t.call('/docs/json')).json();
    expect(doc.components.schemas.CreateTransactionRequest.properties.proof_class.enum).toEqual(['standard', 'batched', 'on_demand', 'on_cadence']);
    // answers show the class an alias names
    expect(doc.components.schemas.Intent.properties.proof_class.enum).toEqual(['standard', 'batched']);
  });

  it('GET /v1/events?type=: an unknown event type is a 400 naming `type` and listing the catalogue', async () => {
    for (const bad of ['nonsense', 'identity.active,nonsense', 'webhook.ping', 'Identity.Active']) {
      const r = await call('GET', `/v1/events?type=${encodeURIComponent(bad)}`);
      expect(r.status, `${bad}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.code).toBe('VALIDATION_ERROR');
      expect(r.body.details.field).toBe('type');
      expect(r.body.details.known_types).toEqual(EVENT_TYPES);
      expect(r.body.error.startsWith('type: unknown event type ')).toBe(true);
      for (const known of EVENT_TYPES) expect(r.body.error).toContain(known);
    }
    for (const ok of ['identity.active', 'identity.active, transaction.completed', EVENT_TYPES.join(',')]) {
      const r = await call('GET', `/v1/events?type=${encodeURIComponent(ok)}`);
      expect(r.status, `${ok}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body.events).toEqual([]);
    }
  });
});
