/**
 * Webhooks end to end on real components: the API (authenticated with real API keys), a Temporal worker running the dispatcher and delivery workflows, the database (PGlite and
 * Postgres) and a real HTTP receiver on loopback. Retry delays are 0.2 s and an endpoint is disabled after 1.5 s
 * of continuous failure, so days of behaviour run in seconds.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { eq, inArray } from 'drizzle-orm';
import { createApp } from '../../src/api/app.js';
import { loadConfig } from '../../src/config.js';
import { recordEvent, InvalidEventError } from '../../src/db/events.js';
import { fanOutEvents } from '../../src/db/webhooks.js';
import { EVENT_SCHEMAS, EVENT_TYPES, type EventType } from '../../src/webhooks/catalogue.js';
import { getAddress } from 'viem';
import { createWebhookActivities } from '../../src/activities/webhooks.js';
import { sendWebhook } from '../../src/webhooks/sender.js';
import { events, organizations, webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../src/db/schema.js';
import { ensureWebhookDispatcher, kickWebhookDispatcher, stopWebhookDispatcher } from '../../src/temporal/webhooks.js';
import { deliveryWorkflowId, webhookDeliveryWorkflow, webhookTaskQueue } from '../../src/workflows/webhook-delivery.js';
import { maintenanceWorkflow } from '../../src/workflows/maintenance.js';
import { ApplicationFailure } from '@temporalio/common';
import { OrgIdKey, StageKey } from '../../src/workflows/search-attributes.js';
import { dbKinds, openTestDatabase, quietLogger, startTestWorker, testConfig, testTemporalClient } from '../support/env.js';
import { eventually, startReceiver } from '../support/receiver.js';
import { createTestOrgAndKey } from '../support/platform.js';
import type { Db } from '../../src/db/client.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Real API keys per (organization, scopes), made once and reused, with a limit no test reaches. */
function keyring(db: () => Db) {
  const keys = new Map<string, Promise<string>>();
  return (org: string, scopes: string) => {
    const id = `${org}|${scopes}`;
    if (!keys.has(id)) {
      keys.set(
        id,
        createTestOrgAndKey(db(), { orgId: org, permissions: scopes.split(','), rateLimitRpm: 1_000_000 }).then((k) => k.key),
      );
    }
    return keys.get(id)!;
  };
}

const identityData = (id: string) => ({
  identity_id: id,
  name: 'acme',
  adi_url: 'acc://acme.acme',
  book_url: 'acc://acme.acme/book',
  key_page_url: 'acc://acme.acme/book/1',
  data_account_url: 'acc://acme.acme/data',
  public_key_hash: 'ab'.repeat(32),
  credit_balance: 100,
  chain_accounts: [
    {
      chain: 'ethereum-sepolia',
      chain_id: 'ethereum-sepolia',
      evm_chain_id: 11155111,
      address: `0x${'11'.repeat(20)}`,
      deployment_tx: `0x${'cd'.repeat(32)}`,
      deployed: true as const,
    },
  ],
});
const completedData = (id: string) => ({
  intent_id: id,
  identity_id: randomUUID(),
  operation_id: 'op-1',
  proof_id: randomUUID(),
  executions: [{ leg_id: 'leg-1', chain: 'ethereum-sepolia', evm_chain_id: 11155111, tx_hash: `0x${'aa'.repeat(32)}` }],
});

describe.each(dbKinds())('webhooks (%s)', (kind) => {
  const config = testConfig({
    WEBHOOK_RETRY_SCHEDULE: Array(10).fill('0.2').join(','),
    WEBHOOK_DISABLE_AFTER: '1.5',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_DISPATCH_INTERVAL_MS: '200',
  });
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let client: Client;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let app: ReturnType<typeof createApp>;
  const keyFor = keyring(() => database.db);

  const newOrg = async () =>
    (
      await database.db
        .insert(organizations)
        .values({ name: `org-${randomUUID()}` })
        .returning()
    )[0].id;
  const api = async (method: string, path: string, opts: { org?: string; scopes?: string; body?: unknown } = {}) => {
    const headers: Record<string, string> = {};
    if (opts.org) headers['x-api-key'] = await keyFor(opts.org, opts.scopes ?? 'admin');
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await app.request(path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
  };
  const emit = async (orgId: string, type: 'identity.active' | 'transaction.completed', resourceId = randomUUID()) => {
    const data = type === 'identity.active' ? identityData(resourceId) : completedData(resourceId);
    return database.db.transaction((tx) => recordEvent(tx, { orgId, type, resourceId, data } as never));
  };
  const deliveryOf = async (org: string, eventId: string, endpointId: string) => {
    const list = await api('GET', `/v1/webhooks/deliveries?event_id=${eventId}&endpoint_id=${endpointId}`, { org });
    expect(list.status).toBe(200);
    return list.body.deliveries[0] as Json | undefined;
  };

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    worker = await startTestWorker(config, database);
    client = await testTemporalClient(config);
    await ensureWebhookDispatcher(client, config.temporal.taskQueue);
    receiver = await startReceiver();
    app = createApp({ config, database, temporal: client, logger: quietLogger });
  });
  afterAll(async () => {
    if (client) await stopWebhookDispatcher(client, config.temporal.taskQueue);
    await receiver?.close();
    await client?.connection.close();
    await worker?.stop();
    await database?.cleanup();
  });

  it('recordEvent numbers events per resource and lives or dies with its transaction', async () => {
    const org = await newOrg();
    const [a, b] = [randomUUID(), randomUUID()];
    expect((await emit(org, 'identity.active', a)).sequence).toBe(1);
    expect((await emit(org, 'identity.active', a)).sequence).toBe(2);
    expect((await emit(org, 'identity.active', b)).sequence).toBe(1);
    // a rolled-back state change leaves no event (and no gap in the sequence)
    await expect(
      database.db.transaction(async (tx) => {
        await recordEvent(tx, { orgId: org, type: 'identity.active', resourceId: a, data: identityData(a) });
        throw new Error('state change failed');
      }),
    ).rejects.toThrow('state change failed');
    expect((await emit(org, 'identity.active', a)).sequence).toBe(3);
    await expect(
      database.db.transaction((tx) => recordEvent(tx, { orgId: org, type: 'transaction.failed', resourceId: a, data: { intent_id: a } as never })),
    ).rejects.toThrow(InvalidEventError);
    // the catalogue is strict: a field it does not list, or a payload in a form before the API conventions, is refused
    const refused = (data: unknown) =>
      expect(database.db.transaction((tx) => recordEvent(tx, { orgId: org, type: 'identity.active', resourceId: a, data } as never))).rejects.toThrow(
        InvalidEventError,
      );
    await refused({ ...identityData(a), extra: 1 });
    await refused({ ...identityData(a), credit_balance: '100' });
    const { book_url, ...rest } = identityData(a);
    await refused({ ...rest, key_book_url: book_url });
    await refused({ ...identityData(a), chain_accounts: [{ ...identityData(a).chain_accounts[0], chain_id: '11155111' }] });
    const rows = await database.db.select().from(events).where(eq(events.resourceId, a));
    expect(rows.map((r) => r.sequence).sort()).toEqual([1, 2, 3]);
  });

  it('retention: events past 30 days go with their finished deliveries; pending ones and sequence numbering stay', async () => {
    const org = await newOrg();
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/retention'), skip_verification: true } })).body;
    await database.db.update(webhookEndpoints).set({ isActive: false }).where(eq(webhookEndpoints.id, ep.id)); // keep the dispatcher's hands off
    const resource = randomUUID();
    const old1 = await emit(org, 'identity.active', resource);
    const old2 = await emit(org, 'identity.active', resource);
    const fresh = await emit(org, 'identity.active', resource);
    const longAgo = new Date(Date.now() - 31 * 24 * 3600_000);
    // Fan the events out first (here or by the dispatcher, whichever comes first), so that the dispatcher has made
    // the delivery rows (failed: the endpoint is disabled) before the test shapes them; then age the events: the
    // dispatcher also purges on its own schedule, and it must never see an aged event without its delivery rows.
    const ids = [old1.id, old2.id, fresh.id];
    await eventually(async () => {
      await fanOutEvents(database.db, 100);
      const rows = await database.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(inArray(webhookDeliveries.eventId, ids));
      return rows.length === ids.length;
    });
    const [done] = await database.db
      .update(webhookDeliveries)
      .set({ status: 'succeeded', lastError: null, failedAt: null, deliveredAt: longAgo, workflowStartedAt: longAgo })
      .where(eq(webhookDeliveries.eventId, old1.id))
      .returning();
    await database.db.insert(webhookAttempts).values({ deliveryId: done.id, attempt: 1, webhookTimestamp: 1, durationMs: 3, succeeded: true, statusCode: 200 });
    await database.db
      .update(webhookDeliveries)
      .set({ status: 'pending', lastError: null, failedAt: null, workflowStartedAt: longAgo })
      .where(eq(webhookDeliveries.eventId, old2.id));
    await database.db
      .update(events)
      .set({ createdAt: longAgo, dispatchedAt: longAgo })
      .where(inArray(events.id, [old1.id, old2.id]));

    // whoever purges first (this call or the dispatcher's own), the outcome is the same
    await createWebhookActivities(database.db).purgeWebhookHistory({});
    expect(await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, done.id))).toEqual([]);
    const left = await database.db.select({ id: events.id }).from(events).where(eq(events.resourceId, resource));
    expect(left.map((e) => e.id).sort()).toEqual([old2.id, fresh.id].sort());
    expect(await database.db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, done.id))).toEqual([]);
    expect((await api('GET', `/v1/events?resource_id=${resource}`, { org })).body.events.map((e: Json) => e.id)).toEqual([fresh.id]);
    expect((await emit(org, 'identity.active', resource)).sequence).toBe(4);
  });

  it('registers an endpoint: secret shown once, signed ping verified with the standardwebhooks package', async () => {
    const org = await newOrg();
    const created = await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/reg'), description: 'main' } });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.body).toMatchObject({ verified: true, is_active: true, event_types: null, description: 'main' });
    expect(created.body.verified_at).not.toBeNull();
    const ping = receiver.received.find((r) => r.path === '/reg');
    expect(ping).toBeDefined();
    const payload = new Webhook(created.body.secret).verify(ping!.body, ping!.headers as Record<string, string>) as Json;
    expect(payload).toMatchObject({ type: 'webhook.ping', data: { endpoint_id: created.body.id } });

    const listed = await api('GET', '/v1/webhooks/endpoints', { org });
    expect(listed.body.endpoints).toHaveLength(1);
    expect(listed.body.endpoints[0]).toMatchObject({ id: created.body.id, verified: true, verified_at: created.body.verified_at });
    expect(listed.body.pagination).toEqual({ limit: 50, offset: 0, total: 1, has_more: false, next_cursor: null });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);
    const one = await api('GET', `/v1/webhooks/endpoints/${created.body.id}`, { org });
    expect(one.body.secret).toBeUndefined();
    expect(one.body).toMatchObject({ verified: true });

    // unreachable receivers are registered unverified, with the reason
    receiver.on('/down-at-reg', () => ({ status: 503 }));
    const unverified = await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/down-at-reg') } });
    expect(unverified.body).toMatchObject({ verified: false, verification_error: 'HTTP 503', verified_at: null });
    const verify = await api('POST', `/v1/webhooks/endpoints/${unverified.body.id}/verify`, { org });
    expect(verify.body).toMatchObject({ verified: false, status_code: 503 });
    expect((await api('GET', `/v1/webhooks/endpoints/${unverified.body.id}`, { org })).body).toMatchObject({ verified: false, verified_at: null });
  });

  it('delivers a signed event, found by the dispatcher without a nudge; type filters apply', async () => {
    const org = await newOrg();
    const all = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/all'), skip_verification: true } })).body;
    const onlyTx = (
      await api('POST', '/v1/webhooks/endpoints', {
        org,
        body: { url: receiver.url('/only-tx'), event_types: ['transaction.completed'], skip_verification: true },
      })
    ).body;
    const identityId = randomUUID();
    const ev = await emit(org, 'identity.active', identityId); // no kick: the dispatcher's poll must find it

    const [got] = await eventually(() => receiver.deliveries('/all').length === 1 && receiver.deliveries('/all'));
    const headers = got.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(ev.id);
    expect(headers['content-type']).toBe('application/json');
    const payload = new Webhook(all.secret).verify(got.body, headers) as Json;
    expect(payload).toMatchObject({ id: ev.id, type: 'identity.active', resource_id: identityId, sequence: 1 });
    expect(payload.data.chain_accounts[0]).toMatchObject({ chain: 'ethereum-sepolia', chain_id: 'ethereum-sepolia', evm_chain_id: 11155111 });
    expect(() => new Webhook(onlyTx.secret).verify(got.body, headers)).toThrow();

    const d = await eventually(async () => {
      const x = await deliveryOf(org, ev.id, all.id);
      return x?.status === 'succeeded' && x;
    });
    expect(d).toMatchObject({ attempts: 1, last_status_code: 200, event_type: 'identity.active' });
    expect(await deliveryOf(org, ev.id, onlyTx.id)).toBeUndefined();
    expect(receiver.deliveries('/only-tx')).toHaveLength(0);
  });

  it('events stored in the forms before the API conventions are served in the current forms, by GET /v1/events/{id} and in deliveries', async () => {
    const org = await newOrg();
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/old-forms'), skip_verification: true } })).body;
    const [identityId, intentId, opId, actionId, proofId] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const address = `0x${'ab'.repeat(20)}`;
    // rows as the gateway wrote them before: retired names, numbers as decimal strings, chain_id the EVM chain id
    const stored: { type: string; resourceId: string; sequence: number; data: Record<string, unknown>; current: Record<string, unknown> }[] = [
      {
        type: 'identity.active',
        resourceId: identityId,
        sequence: 1,
        data: {
          identity_id: identityId,
          name: 'acme',
          adi_url: 'acc://acme.acme',
          key_book_url: 'acc://acme.acme/book',
          key_page_url: 'acc://acme.acme/book/1',
          data_account_url: 'acc://acme.acme/data',
          public_key_hash: 'cd'.repeat(32),
          credit_balance: '100',
          chain_accounts: [{ chain: 'polygon-amoy', chain_id: '80002', address }],
        },
        current: {
          identity_id: identityId,
          name: 'acme',
          adi_url: 'acc://acme.acme',
          book_url: 'acc://acme.acme/book',
          key_page_url: 'acc://acme.acme/book/1',
          data_account_url: 'acc://acme.acme/data',
          public_key_hash: 'cd'.repeat(32),
          credit_balance: 100,
          chain_accounts: [
            { chain: 'polygon-amoy', chain_id: 'polygon-amoy', evm_chain_id: 80002, address: getAddress(address), deployment_tx: null, deployed: true },
          ],
        },
      },
      {
        type: 'transaction.submitted',
        resourceId: intentId,
        sequence: 1,
        data: { intent_id: intentId, identity_id: identityId, operation_id: 'op-1', ledger_tx_hash: 'ef'.repeat(32) },
        current: { intent_id: intentId, identity_id: identityId, operation_id: 'op-1', tx_hash: 'ef'.repeat(32) },
      },
      {
        type: 'transaction.completed',
        resourceId: intentId,
        sequence: 2,
        data: {
          intent_id: intentId,
          identity_id: identityId,
          operation_id: 'op-1',
          proof_id: proofId,
          executions: [{ chain: 'polygon-amoy', chain_id: '80002', leg_id: 'leg-1', tx_hash: `0x${'AA'.repeat(32)}` }],
        },
        current: {
          intent_id: intentId,
          identity_id: identityId,
          operation_id: 'op-1',
          proof_id: proofId,
          executions: [{ leg_id: 'leg-1', chain: 'polygon-amoy', evm_chain_id: 80002, tx_hash: `0x${'aa'.repeat(32)}` }],
        },
      },
      {
        type: 'governance.executed',
        resourceId: opId,
        sequence: 1,
        data: { governance_id: opId, identity_id: identityId, operation: 'add_key', ledger_tx_hash: `0x${'BC'.repeat(32)}` },
        current: { governance_op_id: opId, identity_id: identityId, operation: 'add_key', tx_hash: 'bc'.repeat(32) },
      },
      {
        type: 'inbox.action_pending',
        resourceId: actionId,
        sequence: 1,
        data: {
          pending_action_id: actionId,
          identity_id: identityId,
          kind: 'transaction',
          ledger_tx_hash: 'bc'.repeat(32),
          threshold: 2,
          signatures: 1,
          remaining_needed: 1,
          expires_at: null,
        },
        current: {
          pending_action_id: actionId,
          identity_id: identityId,
          category: 'transactions',
          tx_hash: 'bc'.repeat(32),
          required_signatures: 2,
          collected_signatures: 1,
          remaining_needed: 1,
          expires_at: null,
        },
      },
    ];
    const rows = await database.db
      .insert(events)
      .values(stored.map(({ type, resourceId, sequence, data }) => ({ orgId: org, type, resourceId, sequence, data })))
      .returning();
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const delivered = await eventually(() => receiver.deliveries('/old-forms').length === stored.length && receiver.deliveries('/old-forms'));
    for (const [i, row] of rows.entries()) {
      const { type, current } = stored[i]!;
      const one = await api('GET', `/v1/events/${row.id}`, { org });
      expect(one.status).toBe(200);
      expect(one.body.data, type).toEqual(current);
      expect(EVENT_SCHEMAS[type as EventType].safeParse(one.body.data).error, type).toBeUndefined();
      const got = delivered.find((r) => r.headers['webhook-id'] === row.id)!;
      expect((new Webhook(ep.secret).verify(got.body, got.headers as Record<string, string>) as Json).data, type).toEqual(current);
    }
    // the log of a delivery shows the body that was sent: the current form too
    const d = await eventually(async () => {
      const x = await deliveryOf(org, rows[0]!.id, ep.id);
      return x?.status === 'succeeded' && x;
    });
    const detail = await api('GET', `/v1/webhooks/deliveries/${d.id}`, { org });
    expect(JSON.parse(detail.body.payload).data).toEqual(stored[0]!.current);
  });

  it('the OpenAPI document describes the data of each event type with its catalogue schema', async () => {
    const doc = (await api('GET', '/docs/json')).body;
    const data = doc.components.schemas.Event.properties.data;
    expect(data.anyOf.map((s: Json) => s.description)).toEqual(EVENT_TYPES.map((t) => `The data of ${t}`));
    const active = data.anyOf.find((s: Json) => s.description === 'The data of identity.active');
    expect(active).toMatchObject({ additionalProperties: false, properties: { credit_balance: { type: 'integer' } } });
    expect(active.required).toEqual(expect.arrayContaining(['book_url', 'chain_accounts']));
    expect(active.properties.chain_accounts.items.properties.evm_chain_id.type).toBe('integer');
  });

  it('nothing is lost when the dispatcher is gone at commit time', async () => {
    const org = await newOrg();
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/outbox'), skip_verification: true } })).body;
    await stopWebhookDispatcher(client, config.temporal.taskQueue);
    const ev = await emit(org, 'identity.active');
    await new Promise((r) => setTimeout(r, 600));
    expect(receiver.deliveries('/outbox')).toHaveLength(0);
    const [row] = await database.db.select().from(events).where(eq(events.id, ev.id));
    expect(row.dispatchedAt).toBeNull();
    // the next kick (or worker start) brings the dispatcher back; it finds the committed event
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const d = await eventually(async () => {
      const x = await deliveryOf(org, ev.id, ep.id);
      return x?.status === 'succeeded' && x;
    });
    expect(receiver.deliveries('/outbox')).toHaveLength(1);

    expect(d.attempts).toBe(1);
  });

  it('a dispatcher that crashed between starting a delivery and recording it does not start a second one; Retry-After is honoured', async () => {
    const org = await newOrg();
    receiver.on('/busy', (i) => (i === 0 ? { status: 503, headers: { 'retry-after': '3' } } : { status: 200 }));
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/busy'), skip_verification: true } })).body;
    const ev = await emit(org, 'identity.active');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const waiting = await eventually(async () => {
      const x = await deliveryOf(org, ev.id, ep.id);
      return x?.attempts === 1 && x;
    });
    expect(waiting).toMatchObject({ status: 'pending', last_status_code: 503 });
    expect(Date.parse(waiting.next_attempt_at) - Date.parse(waiting.updated_at)).toBeGreaterThanOrEqual(2900);
    // forget that the workflow was started, as a crash before markDeliveriesStarted would
    await database.db.update(webhookDeliveries).set({ workflowStartedAt: null }).where(eq(webhookDeliveries.id, waiting.id));
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    await eventually(
      async () => (await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, waiting.id)))[0].workflowStartedAt !== null,
    );
    expect(receiver.deliveries('/busy')).toHaveLength(1);
    await eventually(async () => (await deliveryOf(org, ev.id, ep.id))?.status === 'succeeded');
    const got = receiver.deliveries('/busy');
    expect(got).toHaveLength(2);
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(2900);
  });

  it('a receiver failing twice then succeeding gets the same webhook-id three times; the log shows three attempts; redeliver sends it again', async () => {
    const org = await newOrg();
    receiver.on('/flaky', (i) => (i < 2 ? { status: 500 } : { status: 204 }));
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/flaky'), skip_verification: true } })).body;
    const ev = await emit(org, 'transaction.completed');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);

    const d = await eventually(async () => {
      const x = await deliveryOf(org, ev.id, ep.id);
      return x?.status === 'succeeded' && x;
    });
    const got = receiver.deliveries('/flaky');
    expect(got).toHaveLength(3);
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set([ev.id]));
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    for (const r of got) expect(() => new Webhook(ep.secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    // growing schedule: each retry waited at least the configured delay
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(190);
    expect(got[2].at - got[1].at).toBeGreaterThanOrEqual(190);

    const detail = await api('GET', `/v1/webhooks/deliveries/${d.id}`, { org });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ status: 'succeeded', attempts: 3, webhook_id: ev.id, last_status_code: 204 });
    expect(detail.body.payload).toBe(got[0].body);
    expect(detail.body.attempt_log.map((a: Json) => [a.attempt, a.status_code, a.succeeded])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 204, true],
    ]);
    expect(detail.body.attempt_log[0].response_body).toBe('nope');
    for (const a of detail.body.attempt_log) {
      expect(a.duration_ms).toBeGreaterThanOrEqual(0);
      expect(a.error === null || a.error === 'HTTP 500').toBe(true);
    }
    const endpoint = (await api('GET', `/v1/webhooks/endpoints/${ep.id}`, { org })).body;
    expect(endpoint).toMatchObject({ consecutive_failures: 0, failing_since: null, is_active: true });
    // operators find the delivery in the Temporal UI by its id and organization
    const described = await eventually(async () => {
      const x = await client.workflow.getHandle(deliveryWorkflowId(d.id)).describe();
      return x.typedSearchAttributes.get(StageKey) === 'delivered' && x;
    });
    expect(described.typedSearchAttributes.get(OrgIdKey)).toBe(org);

    const again = await api('POST', `/v1/webhooks/deliveries/${d.id}/redeliver`, { org });
    expect(again).toEqual({ status: 202, body: { id: d.id, status: 'pending' } });
    await eventually(() => receiver.deliveries('/flaky').length === 4);
    expect(receiver.deliveries('/flaky')[3].headers['webhook-id']).toBe(ev.id);
    const after = await eventually(async () => {
      const x = (await api('GET', `/v1/webhooks/deliveries/${d.id}`, { org })).body;
      return x.attempts === 4 && x.status === 'succeeded' && x;
    });
    expect(after.redeliveries).toBe(1);
  });

  it('a redeliver whose workflow cannot start answers 503 and changes nothing; a delivery whose workflow was lost is swept up', async () => {
    const org = await newOrg();
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/swept'), skip_verification: true } })).body;
    const ev = await emit(org, 'identity.active');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const d = await eventually(async () => {
      const x = await deliveryOf(org, ev.id, ep.id);
      return x?.status === 'succeeded' && x;
    });
    // a real Temporal client whose starts fail (its namespace does not exist)
    const broken = await testTemporalClient({ ...config, temporal: { ...config.temporal, namespace: `missing-${randomUUID()}` } });
    try {
      const brokenApp = createApp({ config, database, temporal: broken, logger: quietLogger });
      const res = await brokenApp.request(`/v1/webhooks/deliveries/${d.id}/redeliver`, {
        method: 'POST',
        headers: { 'x-api-key': await keyFor(org, 'admin') },
      });
      expect(res.status).toBe(503);
      expect((await res.json()).code).toBe('REDELIVERY_UNAVAILABLE');
    } finally {
      await broken.connection.close();
    }
    const [row] = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, d.id));
    expect(row).toMatchObject({ status: 'succeeded', redeliveries: 0 });

    // a delivery left pending by a workflow that is gone (its next attempt long overdue) is started again
    const anHourAgo = new Date(Date.now() - 3600_000);
    await database.db
      .update(webhookDeliveries)
      .set({ status: 'pending', nextAttemptAt: anHourAgo, workflowStartedAt: anHourAgo })
      .where(eq(webhookDeliveries.id, d.id));
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    await eventually(async () => (await deliveryOf(org, ev.id, ep.id))?.status === 'succeeded');
    expect(receiver.deliveries('/swept')).toHaveLength(2);
  });

  it('timeouts are failed attempts and are retried', async () => {
    const org = await newOrg();
    receiver.on('/slow', (i) => (i === 0 ? { status: 200, delayMs: 2500 } : { status: 200 }));
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/slow'), skip_verification: true } })).body;
    const ev = await emit(org, 'identity.active');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const d = await eventually(async () => {
      const x = await deliveryOf(org, ev.id, ep.id);
      return x?.status === 'succeeded' && x;
    });
    const detail = (await api('GET', `/v1/webhooks/deliveries/${d.id}`, { org })).body;
    expect(detail.attempt_log[0]).toMatchObject({ succeeded: false, status_code: null, error: 'timed out after 2000 ms' });
    expect(detail.attempt_log[1]).toMatchObject({ succeeded: true, status_code: 200 });
  });

  it('an endpoint failing continuously past the threshold is disabled, with an event saying so', async () => {
    const org = await newOrg();
    receiver.on('/down', () => ({ status: 500 }));
    const down = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/down'), skip_verification: true } })).body;
    const watcher = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/watcher'), skip_verification: true } })).body;
    const ev = await emit(org, 'identity.active');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);

    const ep = await eventually(async () => {
      const x = (await api('GET', `/v1/webhooks/endpoints/${down.id}`, { org })).body;
      return x.is_active === false && x;
    });
    expect(ep.disabled_reason).toMatch(/every delivery failed for \d+ s/);
    expect(ep.consecutive_failures).toBeGreaterThanOrEqual(3);
    const d = await eventually(async () => {
      const x = await deliveryOf(org, ev.id, down.id);
      return x?.status === 'failed' && x;
    });
    expect(d.last_error).toMatch(/endpoint disabled/);
    const attemptsLogged = await database.db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, d.id));
    expect(attemptsLogged.length).toBe(d.attempts);
    expect(receiver.deliveries('/down').length).toBe(d.attempts);

    // the event is in the log and reaches the organization's other endpoint
    const list = await api('GET', `/v1/events?type=webhook_endpoint.disabled&resource_id=${down.id}`, { org });
    expect(list.body.events).toHaveLength(1);
    expect(list.body.events[0]).toMatchObject({ type: 'webhook_endpoint.disabled', sequence: 1, data: { endpoint_id: down.id, url: down.url } });
    const seen = await eventually(() => receiver.deliveries('/watcher').find((r) => JSON.parse(r.body).type === 'webhook_endpoint.disabled'));
    expect(new Webhook(watcher.secret).verify(seen.body, seen.headers as Record<string, string>)).toMatchObject({ resource_id: down.id });

    // no redelivery to a disabled endpoint until it is re-enabled
    expect((await api('POST', `/v1/webhooks/deliveries/${d.id}/redeliver`, { org })).status).toBe(409);
    receiver.on('/down', () => ({ status: 200 }));
    const enabled = await api('PATCH', `/v1/webhooks/endpoints/${down.id}`, { org, body: { is_active: true } });
    expect(enabled.body).toMatchObject({ is_active: true, disabled_reason: null, consecutive_failures: 0 });
    expect((await api('POST', `/v1/webhooks/deliveries/${d.id}/redeliver`, { org })).status).toBe(202);
    await eventually(async () => (await deliveryOf(org, ev.id, down.id))?.status === 'succeeded');
  });

  it('one failure long after an old one starts a new streak: a stale failing_since does not disable a healthy endpoint', async () => {
    const org = await newOrg();
    receiver.on('/blip', (i) => (i === 0 ? { status: 502 } : { status: 200 }));
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/blip'), skip_verification: true } })).body;
    // one failure two days ago, nothing since (no traffic, so no success reset it)
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600_000);
    await database.db.update(webhookEndpoints).set({ failingSince: twoDaysAgo, consecutiveFailures: 1 }).where(eq(webhookEndpoints.id, ep.id));
    const ev = await emit(org, 'identity.active');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const d = await eventually(async () => {
      const x = await deliveryOf(org, ev.id, ep.id);
      return x && x.status !== 'pending' && x;
    });
    expect(d).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect((await api('GET', `/v1/webhooks/endpoints/${ep.id}`, { org })).body).toMatchObject({ is_active: true, failing_since: null });
  });

  it('410 Gone disables the endpoint at once', async () => {
    const org = await newOrg();
    receiver.on('/gone', () => ({ status: 410 }));
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/gone'), skip_verification: true } })).body;
    await emit(org, 'identity.active');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const x = await eventually(async () => {
      const e = (await api('GET', `/v1/webhooks/endpoints/${ep.id}`, { org })).body;
      return e.is_active === false && e;
    });
    expect(x.disabled_reason).toBe('the endpoint answered 410 Gone');
    expect(receiver.deliveries('/gone')).toHaveLength(1);
  });

  it('rotating the secret: the next delivery verifies with the new secret and, for a grace period, the old one', async () => {
    const org = await newOrg();
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/rot'), skip_verification: true } })).body;
    const rotated = await api('POST', `/v1/webhooks/endpoints/${ep.id}/rotate-secret`, { org });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(ep.secret);
    await emit(org, 'identity.active');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const [got] = await eventually(() => receiver.deliveries('/rot').length > 0 && receiver.deliveries('/rot'));
    const h = got.headers as Record<string, string>;
    expect(() => new Webhook(rotated.body.secret).verify(got.body, h)).not.toThrow();
    expect(() => new Webhook(ep.secret).verify(got.body, h)).not.toThrow();
    const own = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect((await api('POST', `/v1/webhooks/endpoints/${ep.id}/rotate-secret`, { org, body: { secret: own } })).body.secret).toBe(own);
    expect((await api('POST', `/v1/webhooks/endpoints/${ep.id}/rotate-secret`, { org, body: { secret: 'x'.repeat(20) } })).status).toBe(400);
  });

  it('rotate-secret and verify take Content-Type: application/json with no body, like every body-less POST', async () => {
    const org = await newOrg();
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/rot-empty'), skip_verification: true } })).body;
    // Content-Type: application/json with no body at all is a request without a body, as on every body-less POST
    const key = await keyFor(org, 'admin');
    for (const body of [undefined, '']) {
      const res = await app.request(`/v1/webhooks/endpoints/${ep.id}/rotate-secret`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body,
      });
      expect(res.status, `body ${JSON.stringify(body)}: ${await res.clone().text()}`).toBe(200);
      const secret = (await res.json()).secret;
      expect(secret).toMatch(/^whsec_/);
      expect(secret).not.toBe(ep.secret);
    }
    const verified = await app.request(`/v1/webhooks/endpoints/${ep.id}/verify`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
    });
    expect(verified.status).toBe(200);
    // a body that is there is still JSON
    const broken = await app.request(`/v1/webhooks/endpoints/${ep.id}/rotate-secret`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: '{',
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'body' } });
  });

  it('a retried or concurrent rotation loses no secret: every secret handed out in the grace period still verifies', async () => {
    const org = await newOrg();
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/rot2'), skip_verification: true } })).body;
    // a rotation whose answer was lost, retried: the receiver still runs on the original secret, and may have stored the first
    const first = await api('POST', `/v1/webhooks/endpoints/${ep.id}/rotate-secret`, { org });
    const retried = await api('POST', `/v1/webhooks/endpoints/${ep.id}/rotate-secret`, { org });
    expect([first.status, retried.status]).toEqual([200, 200]);
    // several at once: each either wins (200, its secret stored) or answers 409 (nothing changed)
    const racing = await Promise.all([1, 2, 3].map(() => api('POST', `/v1/webhooks/endpoints/${ep.id}/rotate-secret`, { org })));
    for (const r of racing) expect([200, 409]).toContain(r.status);
    const handedOut = [ep.secret, first.body.secret, retried.body.secret, ...racing.filter((r) => r.status === 200).map((r) => r.body.secret)];
    await emit(org, 'identity.active');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const [got] = await eventually(() => receiver.deliveries('/rot2').length > 0 && receiver.deliveries('/rot2'));
    for (const secret of handedOut) expect(() => new Webhook(secret).verify(got.body, got.headers as Record<string, string>), secret).not.toThrow();
  });

  it('PATCH and DELETE; deleted endpoints get nothing', async () => {
    const org = await newOrg();
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/del'), skip_verification: true } })).body;
    const patched = await api('PATCH', `/v1/webhooks/endpoints/${ep.id}`, {
      org,
      body: { event_types: ['transaction.completed'], description: 'tx only', url: receiver.url('/del2') },
    });
    expect(patched.body).toMatchObject({
      event_types: ['transaction.completed'],
      description: 'tx only',
      url: receiver.url('/del2'),
      verified: false,
      verified_at: null,
    });
    expect((await api('PATCH', `/v1/webhooks/endpoints/${ep.id}`, { org, body: { event_types: ['no.such'] } })).status).toBe(400);
    expect((await api('PATCH', `/v1/webhooks/endpoints/${ep.id}`, { org, body: { secret: 'x' } })).status).toBe(400);
    expect((await api('DELETE', `/v1/webhooks/endpoints/${ep.id}`, { org })).status).toBe(204);
    expect((await api('GET', `/v1/webhooks/endpoints/${ep.id}`, { org })).status).toBe(404);
    expect((await api('GET', '/v1/webhooks/endpoints', { org })).body.endpoints).toHaveLength(0);
    const ev = await emit(org, 'transaction.completed');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    await eventually(async () => (await database.db.select().from(events).where(eq(events.id, ev.id)))[0].dispatchedAt !== null);
    expect(await deliveryOf(org, ev.id, ep.id)).toBeUndefined();
  });

  it('events arriving while an endpoint is disabled are logged as failed and can be redelivered once it is back on', async () => {
    const org = await newOrg();
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org, body: { url: receiver.url('/paused'), skip_verification: true } })).body;
    expect((await api('PATCH', `/v1/webhooks/endpoints/${ep.id}`, { org, body: { is_active: false } })).status).toBe(200);
    const ev = await emit(org, 'identity.active');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const d = await eventually(() => deliveryOf(org, ev.id, ep.id));
    expect(d).toMatchObject({ status: 'failed', attempts: 0, last_error: 'endpoint disabled' });
    expect(receiver.deliveries('/paused')).toHaveLength(0);
    expect((await api('POST', `/v1/webhooks/deliveries/${d.id}/redeliver`, { org })).status).toBe(409);
    expect((await api('PATCH', `/v1/webhooks/endpoints/${ep.id}`, { org, body: { is_active: true } })).status).toBe(200);
    expect((await api('POST', `/v1/webhooks/deliveries/${d.id}/redeliver`, { org })).status).toBe(202);
    await eventually(async () => (await deliveryOf(org, ev.id, ep.id))?.status === 'succeeded');
    expect(receiver.deliveries('/paused').map((r) => r.headers['webhook-id'])).toEqual([ev.id]);
  });

  it("another organization's endpoints, deliveries and events answer 404; scopes are enforced", async () => {
    const [a, b] = [await newOrg(), await newOrg()];
    const ep = (await api('POST', '/v1/webhooks/endpoints', { org: a, body: { url: receiver.url('/org-a'), skip_verification: true } })).body;
    const ev = await emit(a, 'identity.active');
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    const d = await eventually(async () => {
      const x = await deliveryOf(a, ev.id, ep.id);
      return x?.status === 'succeeded' && x;
    });

    for (const [method, path] of [
      ['GET', `/v1/webhooks/endpoints/${ep.id}`],
      ['PATCH', `/v1/webhooks/endpoints/${ep.id}`],
      ['DELETE', `/v1/webhooks/endpoints/${ep.id}`],
      ['POST', `/v1/webhooks/endpoints/${ep.id}/rotate-secret`],
      ['POST', `/v1/webhooks/endpoints/${ep.id}/verify`],
      ['GET', `/v1/webhooks/deliveries/${d.id}`],
      ['POST', `/v1/webhooks/deliveries/${d.id}/redeliver`],
      ['GET', `/v1/events/${ev.id}`],
      ['GET', '/v1/webhooks/endpoints/not-a-uuid'],
    ] as const) {
      const res = await api(method, path, { org: b, body: method === 'PATCH' ? { description: 'x' } : undefined });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    expect((await api('GET', '/v1/webhooks/endpoints', { org: b })).body.endpoints).toEqual([]);
    expect((await api('GET', '/v1/webhooks/deliveries', { org: b })).body.deliveries).toEqual([]);
    expect((await api('GET', '/v1/events', { org: b })).body.events).toEqual([]);
    expect((await api('GET', `/v1/events/${ev.id}`, { org: a })).body).toMatchObject({ id: ev.id, type: 'identity.active' });

    // no auth context → 401; a read-only key can list but not change
    expect((await api('GET', '/v1/webhooks/endpoints')).status).toBe(401);
    expect((await api('GET', '/v1/events')).body).toEqual({ error: 'Missing X-API-Key header', code: 'MISSING_API_KEY' });
    expect((await api('GET', '/v1/webhooks/endpoints', { org: a, scopes: 'read' })).status).toBe(200);
    const denied = await api('POST', '/v1/webhooks/endpoints', { org: a, scopes: 'read,proof:read', body: { url: receiver.url('/x') } });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('INSUFFICIENT_SCOPE');
    expect((await api('POST', `/v1/webhooks/deliveries/${d.id}/redeliver`, { org: a, scopes: 'read' })).status).toBe(403);
    expect((await api('GET', '/v1/events', { org: a, scopes: 'webhook:write' })).status).toBe(403);
  });

  it.skipIf(kind === 'pglite')('GET /v1/events?order=asc pages in commit order: an event committed late is not skipped', async () => {
    const org = await newOrg();
    const first = await emit(org, 'identity.active');
    // a transaction that records its event (taking the lower position) and commits only later
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    let late!: Awaited<ReturnType<typeof emit>>;
    const slow = database.db.transaction(async (tx) => {
      const id = randomUUID();
      late = await recordEvent(tx, { orgId: org, type: 'identity.active', resourceId: id, data: identityData(id) } as never);
      await held;
    });
    await eventually(() => late);
    let page1: Awaited<ReturnType<typeof api>>;
    try {
      const early = await emit(org, 'identity.active');
      await kickWebhookDispatcher(client, config.temporal.taskQueue);
      await eventually(async () => (await database.db.select().from(events).where(eq(events.id, early.id)))[0].dispatchedAt !== null);
      page1 = await api('GET', '/v1/events?order=asc', { org });
      expect(page1.body.events.map((e: Json) => e.id)).toEqual([first.id, early.id]);
      expect(page1.body.pagination.next_cursor).toBe(early.id);
    } finally {
      // a failed expectation must not leave the transaction open (it would hold the dispatcher and the teardown)
      commit();
    }
    await slow;
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    await eventually(async () => (await database.db.select().from(events).where(eq(events.id, late.id)))[0].dispatchedAt !== null);
    // polling on from the cursor finds the late one, though its position is below the cursor's
    const page2 = await api('GET', `/v1/events?order=asc&starting_after=${page1.body.pagination.next_cursor}`, { org });
    expect(page2.body.events.map((e: Json) => e.id)).toEqual([late.id]);
    expect(page2.body.pagination).toMatchObject({ has_more: false, next_cursor: late.id });
    const page3 = await api('GET', `/v1/events?order=asc&starting_after=${late.id}`, { org });
    expect(page3.body).toMatchObject({ events: [], pagination: { next_cursor: late.id } });
  });

  it('GET /v1/events?order=asc lists the events of one dispatch in the order they were recorded', async () => {
    const org = await newOrg();
    const made = [];
    for (let i = 0; i < 12; i++) made.push(await emit(org, 'identity.active'));
    await kickWebhookDispatcher(client, config.temporal.taskQueue);
    await eventually(async () => (await database.db.select().from(events).where(eq(events.orgId, org))).every((e) => e.dispatchedAt !== null));
    const page = await api('GET', '/v1/events?order=asc&limit=50', { org });
    // one UPDATE handed out the listing numbers in the order it visited the rows (by id, say), not by position
    expect(page.body.events.map((e: Json) => e.id)).toEqual(made.map((e) => e.id));
  });

  it('GET /v1/events pages with a cursor and filters by type and resource', async () => {
    const org = await newOrg();
    const r1 = randomUUID();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await emit(org, i % 2 ? 'transaction.completed' : 'identity.active', i < 3 ? r1 : randomUUID()));
    const page1 = await api('GET', '/v1/events?limit=2', { org });
    expect(page1.body.events.map((e: Json) => e.id)).toEqual([made[4].id, made[3].id]);
    expect(page1.body.pagination).toEqual({ limit: 2, offset: 0, total: 5, has_more: true, next_cursor: made[3].id });
    // the cursor, and starting_after (its older name, an event id) alike
    const page2 = await api('GET', `/v1/events?limit=2&cursor=${page1.body.pagination.next_cursor}`, { org });
    expect(page2.body.events.map((e: Json) => e.id)).toEqual([made[2].id, made[1].id]);
    expect(page2.body.pagination).toMatchObject({ offset: null, total: 5, has_more: true });
    const page3 = await api('GET', `/v1/events?limit=2&starting_after=${page2.body.pagination.next_cursor}`, { org });
    expect(page3.body.pagination).toMatchObject({ offset: null, has_more: false, next_cursor: null });
    expect(page3.body.events.map((e: Json) => e.id)).toEqual([made[0].id]);
    // by offset
    const byOffset = await api('GET', '/v1/events?limit=2&offset=3', { org });
    expect(byOffset.body.events.map((e: Json) => e.id)).toEqual([made[1].id, made[0].id]);
    expect(byOffset.body.pagination).toEqual({ limit: 2, offset: 3, total: 5, has_more: false, next_cursor: null });

    const byResource = await api('GET', `/v1/events?resource_id=${r1}`, { org });
    expect(byResource.body.events.map((e: Json) => e.sequence)).toEqual([3, 2, 1]);
    expect(byResource.body.pagination.total).toBe(3);
    const byType = await api('GET', '/v1/events?type=transaction.completed', { org });
    expect(byType.body.events).toHaveLength(2);
    expect((await api('GET', '/v1/events?starting_after=nope', { org })).status).toBe(400);
  });
});

describe('webhook URLs: private addresses are refused unless explicitly allowed', () => {
  it('refuses loopback and private addresses by default, whatever GATEWAY_ENV says; WEBHOOK_ALLOW_PRIVATE_URLS=true allows them', async () => {
    const database = await openTestDatabase('pglite');
    const [org] = await database.db.insert(organizations).values({ name: 'prod' }).returning();
    const { key } = await createTestOrgAndKey(database.db, { orgId: org.id, permissions: ['write'], rateLimitRpm: 1_000_000 });
    const make = (env: Record<string, string>) => createApp({ config: testConfig(env), database, temporal: undefined as never, logger: quietLogger });
    const post = (a: ReturnType<typeof createApp>, url: string) =>
      a.request('/v1/webhooks/endpoints', {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ url, skip_verification: true }),
      });
    // the plain defaults (no variable set at all) must be the safe ones
    expect(loadConfig({}).webhooks.allowPrivateUrls).toBe(false);
    expect(loadConfig({ GATEWAY_ENV: 'devnet' }).webhooks.allowPrivateUrls).toBe(false);
    for (const env of ['production', 'devnet']) {
      // production requires a DATABASE_URL; the app uses the test database it is given
      const app = make({
        GATEWAY_ENV: env,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'false',
        ...(env === 'production' ? { DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused' } : {}),
      });
      for (const url of [
        'http://127.0.0.1:9/h',
        'http://localhost:9/h',
        'http://10.0.0.8/h',
        'http://[::1]:9/h',
        'http://169.254.169.254/',
        'ftp://example.com/',
      ]) {
        const res = await post(app, url);
        expect(res.status, `${env} ${url}`).toBe(400);
        expect((await res.json()).code).toBe('INVALID_WEBHOOK_URL');
      }
    }
    // the switch allows loopback receivers only: link-local (the cloud metadata address) and private ranges stay refused
    const devnet = make({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    for (const url of ['http://127.0.0.1:9/h', 'http://127.8.9.10:9/h', 'http://[::1]:9/h', 'http://localhost:9/h']) {
      expect((await post(devnet, url)).status, url).toBe(201);
    }
    for (const url of [
      'http://169.254.169.254/',
      'http://10.0.0.1/h',
      'http://192.168.1.5/h',
      'http://[fe80::1]/h',
      'http://[::ffff:10.0.0.1]/h',
      'http://db.internal/h',
    ]) {
      const res = await post(devnet, url);
      expect(res.status, url).toBe(400);
      expect(await res.json(), url).toMatchObject({ code: 'INVALID_WEBHOOK_URL', error: expect.stringMatching(/loopback receivers only/) });
    }
    // WEBHOOK_PRIVATE_URL_ALLOWLIST names more: a CIDR, an address, a host name; everything else stays refused
    const listed = make({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_PRIVATE_URL_ALLOWLIST: '10.0.5.0/24, 192.168.1.5,receiver.internal' });
    for (const url of ['http://10.0.5.77/h', 'http://192.168.1.5/h', 'http://receiver.internal/h', 'http://127.0.0.1:9/h']) {
      expect((await post(listed, url)).status, url).toBe(201);
    }
    for (const url of ['http://10.0.6.1/h', 'http://169.254.169.254/', 'http://other.internal/h']) expect((await post(listed, url)).status, url).toBe(400);
    // the list alone (switch off) allows nothing, and a malformed entry stops the start
    expect((await post(make({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false', WEBHOOK_PRIVATE_URL_ALLOWLIST: '10.0.5.0/24' }), 'http://10.0.5.77/h')).status).toBe(400);
    expect(() => loadConfig({ WEBHOOK_PRIVATE_URL_ALLOWLIST: '10.0.5.0/33' })).toThrow(/WEBHOOK_PRIVATE_URL_ALLOWLIST/);
    await database.cleanup();
  });

  it('the sender applies the same rule at connect time: with the switch on a link-local literal is refused before any connection', async () => {
    const res = await sendWebhook({
      url: 'http://169.254.169.254/latest',
      msgId: 'm',
      body: '{}',
      secrets: [`whsec_${'A'.repeat(32)}`],
      timeoutMs: 2000,
      allowPrivate: true,
    });
    expect(res.ok).toBe(false);
    expect(JSON.stringify(res)).toMatch(/private address/);
  });
});

describe.each(dbKinds())('webhook endpoints per organization (%s)', (kind) => {
  it('are capped by WEBHOOK_MAX_ENDPOINTS_PER_ORG, exactly under concurrent creates; deleted ones do not count', async () => {
    const database = await openTestDatabase(kind);
    try {
      const [org] = await database.db.insert(organizations).values({ name: 'cap' }).returning();
      const { key } = await createTestOrgAndKey(database.db, { orgId: org.id, permissions: ['admin'], rateLimitRpm: 1_000_000 });
      const app = createApp({ config: testConfig({ WEBHOOK_MAX_ENDPOINTS_PER_ORG: '2' }), database, temporal: undefined as never, logger: quietLogger });
      const req = (method: string, path: string, body?: unknown) =>
        app.request(path, {
          method,
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const create = () => req('POST', '/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/h', skip_verification: true });
      const results = await Promise.all([create(), create(), create()]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 201, 409]);
      const refused = await results.find((r) => r.status === 409)!.json();
      expect(refused.code).toBe('WEBHOOK_ENDPOINT_LIMIT');
      expect(refused.error).toMatch(/at most 2 webhook endpoints .*WEBHOOK_MAX_ENDPOINTS_PER_ORG/);
      const made = await results.find((r) => r.status === 201)!.json();
      expect((await req('DELETE', `/v1/webhooks/endpoints/${made.id}`)).status).toBe(204);
      expect((await create()).status).toBe(201);
    } finally {
      await database.cleanup();
    }
  });
});

describe('webhook delivery workflow whose activities give up', () => {
  it('marks the delivery failed instead of leaving it pending', async () => {
    const config = testConfig({ WEBHOOK_RETRY_SCHEDULE: '0.2' });
    const database = await openTestDatabase('pglite');
    const worker = await startTestWorker(
      config,
      database,
      {},
      {
        wrap: (a) => ({
          ...a,
          attemptDelivery: async () => {
            throw ApplicationFailure.nonRetryable('database unreachable', 'TestOutage');
          },
        }),
      },
    );
    const client = await testTemporalClient(config);
    try {
      const [org] = await database.db.insert(organizations).values({ name: 'outage' }).returning();
      const [ep] = await database.db
        .insert(webhookEndpoints)
        .values({ orgId: org.id, url: 'http://127.0.0.1:9/h', secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` })
        .returning();
      const resourceId = randomUUID();
      await database.db.transaction((tx) => recordEvent(tx, { orgId: org.id, type: 'identity.active', resourceId, data: identityData(resourceId) } as never));
      const { deliveries } = await createWebhookActivities(database.db, config.webhooks).dispatchWebhookEvents(10);
      expect(deliveries).toHaveLength(1);
      const result = await client.workflow.execute(webhookDeliveryWorkflow, {
        taskQueue: config.temporal.taskQueue,
        workflowId: deliveryWorkflowId(deliveries[0].id),
        args: [{ deliveryId: deliveries[0].id }],
      });
      expect(result.status).toBe('failed');
      const [row] = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveries[0].id));
      expect(row.status).toBe('failed');
      expect(row.lastError).toMatch(/gave up: .*database unreachable/);
      expect(row.failedAt).not.toBeNull();
      void ep;
    } finally {
      await client.connection.close();
      await worker.stop();
      await database.cleanup();
    }
  });
});

describe('webhook attempts on their own task queue', () => {
  it("at most WEBHOOK_MAX_CONCURRENT_ATTEMPTS are in flight; the main queue's activities run meanwhile", async () => {
    const config = testConfig({ WEBHOOK_MAX_CONCURRENT_ATTEMPTS: '2', WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_DISPATCH_INTERVAL_MS: '200' });
    const taskQueue = config.temporal.taskQueue;
    const database = await openTestDatabase('pglite');
    const worker = await startTestWorker(config, database);
    const client = await testTemporalClient(config);
    const receiver = await startReceiver();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    receiver.on('/held', () => ({ status: 200, until: held })); // a receiver that answers nothing until released
    try {
      const [org] = await database.db.insert(organizations).values({ name: 'slow receivers' }).returning();
      const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      await database.db.insert(webhookEndpoints).values(Array.from({ length: 5 }, () => ({ orgId: org.id, url: receiver.url('/held'), secret })));
      const resourceId = randomUUID();
      const ev = await database.db.transaction((tx) =>
        recordEvent(tx, { orgId: org.id, type: 'identity.active', resourceId, data: identityData(resourceId) } as never),
      );
      await ensureWebhookDispatcher(client, taskQueue);
      await kickWebhookDispatcher(client, taskQueue);

      // five deliveries started, two attempts posting (and held); the other three wait for a slot
      await eventually(() => receiver.deliveries('/held').length >= 2);
      // the main task queue's activities (here: maintenance) still run at once while both webhook slots are taken
      const maintenance = client.workflow.execute(maintenanceWorkflow, { taskQueue, workflowId: `maintenance-${randomUUID()}`, args: [{}] });
      const late = new Promise((_, reject) => setTimeout(() => reject(new Error('maintenance waited behind the webhook attempts')), 15_000));
      await Promise.race([maintenance, late]);
      await eventually(async () => {
        const rows = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, ev.id));
        return rows.length === 5;
      });
      await new Promise((r) => setTimeout(r, 1500)); // time for more attempts to reach the receiver, were slots free
      expect(receiver.deliveries('/held')).toHaveLength(2);
      expect(receiver.peakInFlight()).toBe(2);

      // released: the waiting three get their slots and every delivery succeeds, never more than two at once
      release();
      await eventually(async () => {
        const rows = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, ev.id));
        return rows.length === 5 && rows.every((d) => d.status === 'succeeded');
      }, 30_000);
      expect(receiver.deliveries('/held')).toHaveLength(5);
      expect(receiver.peakInFlight()).toBe(2);
      expect(worker.worker.webhooks.options.taskQueue).toBe(webhookTaskQueue(taskQueue));
    } finally {
      release();
      await stopWebhookDispatcher(client, taskQueue);
      await receiver.close();
      await client.connection.close();
      await worker.stop();
      await database.cleanup();
    }
  });

  it("the gateway's two workers stop together: the webhook worker shut down stops the main one", async () => {
    const database = await openTestDatabase('pglite');
    const worker = await startTestWorker(testConfig(), database, {}, { shutdownGraceTime: '1s' });
    try {
      expect([worker.worker.main.getState(), worker.worker.webhooks.getState()]).toEqual(['RUNNING', 'RUNNING']);
      worker.worker.webhooks.shutdown();
      await eventually(() => worker.worker.main.getState() === 'STOPPED');
      expect(worker.worker.getState()).toBe('STOPPED');
    } finally {
      await worker.stop();
      await database.cleanup();
    }
  });
});
