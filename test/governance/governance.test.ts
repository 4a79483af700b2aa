/**
 * Governance, the pending inbox and co-signing end to end on a devnet made here (ledger simulator behind a
 * fault proxy, Temporal, the worker, the app). Checked against the ledger itself, not only the API.
 *
 *   A (1-of-1): add key b + threshold 2 → 2-of-2; add key c needs a and b: a signs → pending_signatures 1 of 2;
 *     the scan puts it in /v1/pending; seat b signs through /v1/sign → executed (2-of-3).
 *   A (2-of-3): a accepts, b and c reject → rejected; a accepts, b abstains (still pending), c approves → executed.
 *   E adds D's book as a delegate: awaiting_authorities [D's book] until D signs through /v1/sign.
 *   Lock-out refused; 409 already signed; 404 spent sign request; 502 on a ledger outage, then the retry succeeds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519 } from '@noble/curves/ed25519.js';
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { events } from '../../src/db/schema.js';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey } from '../support/platform.js';
import { newClientKey, pollIdentity, startIdentityApp, startIdentityDevnet, startWorker, uniqueName, type IdentityDevnet } from '../identity/devnet.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { eventually, startReceiver } from '../support/receiver.js';
import { checkOrgEvents, eventDeviations } from '../support/event-catalogue.js';
import { Webhook } from 'standardwebhooks';
import { ensureWebhookDispatcher, stopWebhookDispatcher } from '../../src/temporal/webhooks.js';

type Key = ReturnType<typeof newClientKey>;

let dn: IdentityDevnet;
let proxy: FaultProxy;
let app: Awaited<ReturnType<typeof startIdentityApp>>;
let worker: Awaited<ReturnType<typeof startWorker>>;

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let webhookSecret: string;

beforeAll(async () => {
  dn = await startIdentityDevnet();
  proxy = await startFaultProxy(dn.sim.url);
  app = await startIdentityApp(dn, dbKinds().includes('postgres') ? 'postgres' : 'pglite', { env: { LEDGER_URL: proxy.url } });
  worker = await startWorker(app.config, app.db);
  // inbox.action_pending reaches a real receiver as a signed webhook
  receiver = await startReceiver();
  await ensureWebhookDispatcher(app.deps.temporal, app.config.temporal.taskQueue);
  const ep = await call('POST', '/v1/webhooks/endpoints', { url: receiver.url('/inbox'), event_types: ['inbox.action_pending'], skip_verification: true });
  expect(ep.status).toBe(201);
  webhookSecret = (await ep.json()).secret;
}, 120_000);

afterAll(async () => {
  await stopWebhookDispatcher(app.deps.temporal, app.config.temporal.taskQueue).catch(() => undefined);
  await receiver?.close();
  await worker?.stop();
  await app?.close();
  await proxy?.close();
  await dn?.stop();
});

const call = (method: string, path: string, body?: unknown, key = app.key.key) =>
  app.call(path, { method, key, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
const sign = (hashHex: string, k: Key) => Buffer.from(ed25519.sign(Buffer.from(hashHex, 'hex'), k.secretKey)).toString('hex');

async function provision(k: Key) {
  const res = await call('POST', '/v1/identity', { name: uniqueName('gov'), public_key: k.publicKey, chains: [], credits: 1000 });
  expect(res.status).toBe(202);
  const { identity } = await res.json();
  const done = await pollIdentity(app, identity.id, (b) => b.status !== 'creating');
  expect(done.status).toBe('active');
  return done as { id: string; adi_url: string; book_url: string; key_page_url: string };
}

async function prepare(identity: string, operations: unknown[], extra: Record<string, unknown> = {}) {
  const res = await call('POST', '/v1/governance', { identity, operations, ...extra });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}

async function govSign(op: any, k: Key) {
  const res = await call('POST', `/v1/governance/${op.governance_op_id}/signature`, {
    signature: sign(op.signing_data.hash_to_sign, k),
    public_key: k.publicKey,
  });
  return { status: res.status, body: await res.json() };
}

async function pollGov(id: string, until: (b: any) => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await (await call('GET', `/v1/governance/${id}`)).json();
    if (until(body)) return body;
    if (Date.now() > deadline) throw new Error(`governance ${id} did not reach the expected state: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function prepareSign(body: Record<string, unknown>) {
  const res = await call('POST', '/v1/sign', body);
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(201);
  return json;
}

async function submitSign(req: any, k: Key) {
  const res = await call('POST', `/v1/sign/${req.sign_request_id}/signature`, {
    signature: sign(req.signing_data.data_for_signature, k),
    public_key: k.publicKey,
  });
  return { status: res.status, body: await res.json() };
}

async function cosign(body: Record<string, unknown>, k: Key) {
  const req = await prepareSign({ ...body, public_key: k.publicKey });
  const r = await submitSign(req, k);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

async function scan(orgId = app.key.orgId, workflowId = `pending-scan-test-${randomUUID()}`) {
  return app.deps.temporal.workflow.execute('pendingScanWorkflow', {
    workflowId,
    taskQueue: app.config.temporal.taskQueue,
    args: [{ orgId }],
  });
}

const a = newClientKey();
const b = newClientKey();
const c = newClientKey();
const d = newClientKey();
const e = newClientKey();
let A: Awaited<ReturnType<typeof provision>>;
let D: Awaited<ReturnType<typeof provision>>;
let E: Awaited<ReturnType<typeof provision>>;

describe('governance and co-signing on the devnet', () => {
  it('provisions the identities', async () => {
    [A, D, E] = await Promise.all([provision(a), provision(d), provision(e)]);
  }, 90_000);

  it('1-of-1 page adds a second key and sets threshold 2 (2-of-2)', async () => {
    const op = await prepare(A.adi_url, [
      { type: 'add_key', public_key_hash: publicKeyHashHex(b.publicKey) },
      { type: 'set_threshold', threshold: 2 },
    ]);
    expect(op).toMatchObject({ status: 'signing_required', kind: 'key_page', submit_url: `/v1/governance/${op.governance_op_id}/signature` });
    expect(op.signing_data).toMatchObject({ request_id: expect.any(String), key_page_version: expect.any(Number) });
    expect(op.signing_data.hash_to_sign).toMatch(/^[0-9a-f]{64}$/);
    expect(op.signing_data.transaction_hash).toMatch(/^[0-9a-f]{64}$/);
    const r = await govSign(op, a);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done = await pollGov(op.governance_op_id, (x) => x.status === 'executed');
    expect(done.is_ready).toBe(true);
    // the one signature met the threshold of the page it signed (1), not the 2 the operation set
    expect(r.body).toMatchObject({ status: 'executed', collected_signatures: 1, required_signatures: 1 });
    expect(done).toMatchObject({ collected_signatures: 1, required_signatures: 1 });
    const page = await dn.ledger.queryKeyPage(A.key_page_url);
    expect(page.acceptThreshold).toBe(2);
    expect(page.keys.map((k) => k.publicKeyHash).sort()).toEqual([publicKeyHashHex(a.publicKey), publicKeyHashHex(b.publicKey)].sort());
    const evs = await app.db.select().from(events).where(eq(events.resourceId, op.governance_op_id));
    expect(evs.map((x) => x.type)).toEqual(['governance.executed']);
  });

  it('the quorum-reachability guard refuses a lock-out unless forced; kinds cannot be mixed', async () => {
    const res = await call('POST', '/v1/governance', { identity: A.adi_url, operations: [{ type: 'set_threshold', threshold: 3 }] });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'QUORUM_UNREACHABLE', error: expect.stringMatching(/^operations: threshold 3 is above the 2 key/) });
    const last = await call('POST', '/v1/governance', {
      identity: A.adi_url,
      operations: [
        { type: 'remove_key', public_key_hash: publicKeyHashHex(a.publicKey) },
        { type: 'remove_key', public_key_hash: publicKeyHashHex(b.publicKey) },
      ],
    });
    expect(last.status).toBe(400);
    expect((await last.json()).error).toMatch(/last key/);
    const forced = await call('POST', '/v1/governance', { identity: A.adi_url, operations: [{ type: 'set_threshold', threshold: 3 }], force: true });
    expect(forced.status).toBe(201);
    const mixed = await call('POST', '/v1/governance', {
      identity: A.adi_url,
      operations: [
        { type: 'add_key', public_key_hash: publicKeyHashHex(c.publicKey) },
        { type: 'add_authority', authority_url: D.book_url },
      ],
    });
    expect(mixed.status).toBe(400);
    expect((await mixed.json()).error).toMatch(/key_page, authority/);
    const stranger = await call('POST', '/v1/governance', {
      identity: A.adi_url,
      operations: [{ type: 'set_threshold', threshold: 1 }],
      signer_public_key: c.publicKey,
    });
    expect(stranger.status).toBe(400);
    expect((await stranger.json()).error).toMatch(/^signer_public_key: not a key of/);
    const badField = await call('POST', '/v1/governance', { identity: A.adi_url, operations: [{ type: 'add_key', public_key_hash: 'zz' }] });
    expect(badField.status).toBe(400);
    expect((await badField.json()).error).toMatch(/^operations\[0\]\.public_key_hash:/);
  });

  it('POST /v1/governance honours Idempotency-Key', async () => {
    const key = randomUUID();
    const body = JSON.stringify({ identity: A.adi_url, operations: [{ type: 'set_threshold', threshold: 1 }] });
    const first = await app.call('/v1/governance', { method: 'POST', key: app.key.key, body, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    const one = await first.json();
    const replay = await app.call('/v1/governance', { method: 'POST', key: app.key.key, body, headers: { 'Idempotency-Key': key } });
    expect(replay.status).toBe(201);
    const two = await replay.json();
    expect(two.governance_op_id).toBe(one.governance_op_id);
    expect(two.idempotent).toBe(true);
  });

  let op2: any;
  it('on the 2-of-2 page the first signature leaves the operation pending_signatures (1 of 2, not ready); the same key again is a 409', async () => {
    op2 = await prepare(A.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(c.publicKey) }]);
    const r = await govSign(op2, a);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'pending_signatures', collected_signatures: 1, required_signatures: 2, is_ready: false });
    const got = await (await call('GET', `/v1/governance/${op2.governance_op_id}`)).json();
    expect(got).toMatchObject({ status: 'pending_signatures', collected_signatures: 1, required_signatures: 2, is_ready: false });
    expect((await dn.ledger.getTransaction(op2.tx_id)).pending).toBe(true);
    const again = await govSign(op2, a);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ALREADY_SIGNED');
  });

  let action: any;
  it('pending discovery lists it for the second seat, once; another organization sees nothing', async () => {
    const workflowId = `pending-scan-test-${randomUUID()}`;
    const result: any = await scan(undefined, workflowId);
    expect(result.degraded).toBe(false);
    // the scan heartbeats, so one on a worker that died is retried after 30 s, not after its 5-minute limit
    const history = await app.deps.temporal.workflow.getHandle(workflowId).fetchHistory();
    const scheduled = history.events!.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'scanOrgPending');
    expect(Number(scheduled!.activityTaskScheduledEventAttributes!.heartbeatTimeout!.seconds)).toBe(30);
    const res = await call('GET', `/v1/pending?identity=${encodeURIComponent(A.adi_url)}&category=governance`);
    expect(res.status).toBe(200);
    const body = await res.json();
    action = body.actions.find((x: any) => x.tx_hash === op2.tx_hash);
    expect(action).toMatchObject({
      identity_id: A.id,
      identity_url: A.adi_url,
      category: 'governance',
      type: 'updateKeyPage',
      status: 'awaiting_others',
      collected_signatures: 1,
      total_authorities: 2,
      required_signatures: 2,
      user_has_signed: true,
      is_ready: false,
      awaiting_authorities: [A.book_url],
    });
    expect(body.stats).toMatchObject({ total: body.pagination.total, governance: expect.any(Number), awaiting_others: expect.any(Number) });
    expect(body.pagination).toMatchObject({ limit: 100, offset: 0 });
    const paged = await (
      await call('GET', `/v1/pending?identity=${encodeURIComponent(A.adi_url)}&category=governance&limit=1&offset=${body.pagination.total}`)
    ).json();
    expect(paged.actions).toEqual([]);
    expect(paged.pagination).toMatchObject({ limit: 1, offset: body.pagination.total, has_more: false });
    expect(body.scan.degraded).toBe(false);
    await scan();
    const evs = await app.db
      .select()
      .from(events)
      .where(and(eq(events.resourceId, action.id), eq(events.type, 'inbox.action_pending')));
    expect(evs).toHaveLength(1);
    expect(evs[0]!.data).toMatchObject({
      pending_action_id: action.id,
      identity_id: A.id,
      category: 'governance',
      tx_hash: op2.tx_hash,
      required_signatures: 2,
      collected_signatures: 1,
      remaining_needed: 1,
    });
    // …and arrives at the organization's endpoint as a signed Standard Webhooks delivery, with the event's id
    const delivered = await eventually(() => receiver.received.find((r) => r.path === '/inbox' && r.headers['webhook-id'] === evs[0]!.id), 30_000);
    const payload = new Webhook(webhookSecret).verify(delivered.body, delivered.headers as Record<string, string>) as {
      type: string;
      data: { pending_action_id: string };
    };
    expect(payload).toMatchObject({ type: 'inbox.action_pending', data: { pending_action_id: action.id } });

    const other = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
    expect((await (await call('GET', '/v1/pending', undefined, other.key)).json()).actions).toEqual([]);
    expect((await call('GET', `/v1/governance/${op2.governance_op_id}`, undefined, other.key)).status).toBe(404);
    expect((await call('POST', '/v1/sign', { type: 'pending_action', target_id: action.id, public_key: b.publicKey }, other.key)).status).toBe(404);
    expect((await call('GET', '/v1/pending?limit=501')).status).toBe(400);
  });

  it('the second seat signs through /v1/sign → executed; the spent sign request is a 404', async () => {
    const number = await call('POST', '/v1/sign', { type: 'pending_action', target_id: action.id, public_key: b.publicKey, vote: 1 });
    expect(number.status).toBe(400);
    expect((await number.json()).error).toMatch(/^vote:/);
    const req = await prepareSign({ type: 'pending_action', target_id: action.id, public_key: b.publicKey });
    expect(req.signing_data).toMatchObject({ transaction_hash: op2.tx_hash, signer_url: A.key_page_url, vote: 'approve', delegators: [] });
    const wrong = await call('POST', `/v1/sign/${req.sign_request_id}/signature`, {
      signature: sign(req.signing_data.data_for_signature, c),
      public_key: b.publicKey,
    });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).code).toBe('INVALID_SIGNATURE');
    // two submissions race: the claim lets exactly one through
    const [r, racer] = await Promise.all([submitSign(req, b), submitSign(req, b)]);
    const [ok, lost] = r.status === 200 ? [r, racer] : [racer, r];
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect([404, 409]).toContain(lost.status);
    expect(ok.body).toMatchObject({ status: 'submitted', tx_hash: op2.tx_hash });
    const spent = await submitSign(req, b);
    expect(spent.status).toBe(404);
    expect(spent.body.code).toBe('SIGN_REQUEST_SPENT');
    const done = await pollGov(op2.governance_op_id, (x) => x.status === 'executed');
    expect(done).toMatchObject({ is_ready: true });
    const page = await dn.ledger.queryKeyPage(A.key_page_url);
    expect(page.keys).toHaveLength(3);
    await scan();
    const after = await (await call('GET', `/v1/pending?identity=${encodeURIComponent(A.adi_url)}`)).json();
    expect(after.actions.find((x: any) => x.tx_hash === op2.tx_hash)).toBeUndefined();
  });

  it('2-of-3: reject votes defeat an operation', async () => {
    const op = await prepare(A.adi_url, [{ type: 'remove_key', public_key_hash: publicKeyHashHex(c.publicKey) }]);
    expect((await govSign(op, a)).body.status).toBe('pending_signatures');
    const one = await cosign({ type: 'pending_tx', target_id: op.tx_hash, identity: A.adi_url, vote: 'reject' }, b);
    expect(one).toMatchObject({ status: 'submitted' });
    const mid = await (await call('GET', `/v1/governance/${op.governance_op_id}`)).json();
    expect(mid.status).toBe('pending_signatures');
    await cosign({ type: 'pending_tx', target_id: op.tx_id, identity: A.adi_url, vote: 'reject' }, c);
    const done = await pollGov(op.governance_op_id, (x) => x.status === 'rejected');
    expect(done.error_message).toMatch(/reject|abstain/);
    expect((await dn.ledger.getTransaction(op.tx_id)).failed).toBe(true);
    expect((await dn.ledger.queryKeyPage(A.key_page_url)).keys).toHaveLength(3);
    const evs = await app.db.select().from(events).where(eq(events.resourceId, op.governance_op_id));
    expect(evs.map((x) => x.type)).toEqual(['governance.rejected']);
  });

  it('2-of-3: abstain is not a reject; the next approval executes it (through a ledger outage: 502, then the retry succeeds)', async () => {
    const op = await prepare(A.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(d.publicKey) }]);
    expect((await govSign(op, a)).body.status).toBe('pending_signatures');
    await cosign({ type: 'pending_tx', target_id: op.tx_hash, identity: A.adi_url, vote: 'abstain' }, b);
    await new Promise((r) => setTimeout(r, 300));
    const mid = await (await call('GET', `/v1/governance/${op.governance_op_id}`)).json();
    expect(mid).toMatchObject({ status: 'pending_signatures', is_ready: false });
    expect((await dn.ledger.getTransaction(op.tx_id)).pending).toBe(true);

    const req = await prepareSign({ type: 'pending_tx', target_id: op.tx_hash, identity: A.adi_url, public_key: c.publicKey });
    proxy.settings.failRate = 1;
    let outage: Awaited<ReturnType<typeof submitSign>>;
    try {
      outage = await submitSign(req, c);
    } finally {
      proxy.settings.failRate = 0;
    }
    expect(outage.status).toBe(502);
    expect(outage.body.code).toBe('LEDGER_UNAVAILABLE');
    const retry = await submitSign(req, c);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    await pollGov(op.governance_op_id, (x) => x.status === 'executed');
    expect((await dn.ledger.queryKeyPage(A.key_page_url)).keys).toHaveLength(4);
  });

  it('a new delegate must approve: awaiting_authorities until the delegate signs through its own identity', async () => {
    const op = await prepare(E.adi_url, [{ type: 'add_delegate', delegate_url: D.book_url }]);
    const r = await govSign(op, e);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'pending_signatures', is_ready: false, awaiting_authorities: [D.book_url] });
    const got = await (await call('GET', `/v1/governance/${op.governance_op_id}`)).json();
    expect(got).toMatchObject({ status: 'pending_signatures', awaiting_authorities: [D.book_url] });

    await scan();
    const inbox = await (await call('GET', `/v1/pending?identity=${encodeURIComponent(D.adi_url)}`)).json();
    expect(inbox.actions.find((x: any) => x.tx_hash === op.tx_hash)).toMatchObject({
      identity_id: D.id,
      status: 'eligible',
      user_has_signed: false,
      awaiting_authorities: [D.book_url],
    });

    const res = await cosign({ type: 'pending_tx', target_id: op.tx_hash, identity: D.adi_url }, d);
    expect(res.status).toBe('submitted');
    const done = await pollGov(op.governance_op_id, (x) => x.status === 'executed');
    expect(done.awaiting_authorities).toEqual([]);
    expect((await dn.ledger.queryKeyPage(E.key_page_url)).keys.some((k) => k.delegate === D.book_url)).toBe(true);
  });

  it('a key of the delegate book co-signs through the delegating page (2-of-2: own key + delegate)', async () => {
    const t = await prepare(E.adi_url, [{ type: 'set_threshold', threshold: 2 }]);
    expect((await govSign(t, e)).status).toBe(200);
    await pollGov(t.governance_op_id, (x) => x.status === 'executed');
    const op = await prepare(E.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(c.publicKey) }]);
    expect((await govSign(op, e)).body).toMatchObject({ status: 'pending_signatures', is_ready: false });
    // D's inbox lists it: D's book is not a required authority, only a delegate on E's page
    expect(((await scan()) as any).degraded).toBe(false);
    const inbox = await (await call('GET', `/v1/pending?identity=${encodeURIComponent(D.adi_url)}`)).json();
    expect(inbox.actions.find((x: any) => x.tx_hash === op.tx_hash)).toMatchObject({ identity_url: D.adi_url, status: 'eligible' });
    const req = await prepareSign({ type: 'pending_tx', target_id: op.tx_hash, identity: D.adi_url, public_key: d.publicKey });
    expect(req.signing_data).toMatchObject({ signer_url: D.key_page_url, delegators: [E.key_page_url] });
    const r = await submitSign(req, d);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await pollGov(op.governance_op_id, (x) => x.status === 'executed');
    expect((await dn.ledger.queryKeyPage(E.key_page_url)).keys).toHaveLength(3);
  });

  it('a ledger outage at the governance signature is a 502 and leaves the operation signing_required; the same signature then succeeds', async () => {
    const op = await prepare(D.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(e.publicKey) }]);
    proxy.settings.failRate = 1;
    let outage: Awaited<ReturnType<typeof govSign>>;
    try {
      outage = await govSign(op, d);
    } finally {
      proxy.settings.failRate = 0;
    }
    expect(outage.status, JSON.stringify(outage.body)).toBe(502);
    expect(outage.body.code).toBe('LEDGER_UNAVAILABLE');
    expect((await (await call('GET', `/v1/governance/${op.governance_op_id}`)).json()).status).toBe('signing_required');
    const retry = await govSign(op, d);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    await pollGov(op.governance_op_id, (x) => x.status === 'executed');
  });

  it('a scan during a ledger outage is degraded and deletes nothing', async () => {
    const op = await prepare(A.adi_url, [{ type: 'remove_key', public_key_hash: publicKeyHashHex(d.publicKey) }]);
    await govSign(op, a);
    await scan();
    const before = await (await call('GET', '/v1/pending')).json();
    expect(before.actions.some((x: any) => x.tx_hash === op.tx_hash)).toBe(true);
    proxy.settings.failRate = 1;
    let result: any;
    try {
      result = await scan();
    } finally {
      proxy.settings.failRate = 0;
    }
    expect(result.degraded).toBe(true);
    const after = await (await call('GET', '/v1/pending')).json();
    expect(after.scan.degraded).toBe(true);
    expect(after.actions.map((x: any) => x.id).sort()).toEqual(before.actions.map((x: any) => x.id).sort());
  });

  it("a scan reads several identities' accounts at once", async () => {
    const { createPendingActivities } = await import('../../src/activities/pending.js');
    const { createLedgerClient } = await import('../../src/ledger/index.js');
    // a ledger route of its own, so that only this scan's reads are counted
    const own = await startFaultProxy(dn.sim.url);
    try {
      const acts = createPendingActivities({ db: app.db, ledger: createLedgerClient({ url: own.url }) });
      const result = await acts.scanOrgPending(app.key.orgId);
      expect(result).toMatchObject({ identities: 3, degraded: false });
      expect(own.stats.maxInFlight).toBeGreaterThan(1);
    } finally {
      await own.close();
    }
  });

  it('the scheduled discovery runs one pending-scan-<orgId> child per organization with an active identity', async () => {
    const run: any = await app.deps.temporal.workflow.execute('pendingDiscoveryWorkflow', {
      workflowId: `pending-discovery-test-${randomUUID()}`,
      taskQueue: app.config.temporal.taskQueue,
      args: [],
    });
    expect(run).toEqual({ organizations: 1, scanned: 1 });
    const child = await app.deps.temporal.workflow.getHandle(`pending-scan-${app.key.orgId}`).result();
    expect(child).toMatchObject({ orgId: app.key.orgId, identities: 3, degraded: false });
    expect((await (await call('GET', '/v1/pending')).json()).scan.degraded).toBe(false);
  });

  it('every event this run emitted is of the event catalogue, stored and served in its forms; so is every delivery', async () => {
    const { types, problems } = await checkOrgEvents(app.db, app.key.orgId);
    expect(problems).toEqual([]);
    expect(types).toEqual(expect.arrayContaining(['identity.active', 'governance.executed', 'governance.rejected', 'inbox.action_pending']));
    const delivered = receiver.received.filter((r) => r.path === '/inbox' && r.headers['webhook-id']);
    expect(delivered.length).toBeGreaterThan(0);
    for (const r of delivered) {
      const e = new Webhook(webhookSecret).verify(r.body, r.headers as Record<string, string>) as { id: string; type: string; data: unknown };
      expect(eventDeviations(e.type, e.id, e.data)).toEqual([]);
    }
  });
});
