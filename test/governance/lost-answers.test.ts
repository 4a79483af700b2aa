/**
 * Governance signatures against the ledger's own record (devnet made here; the ledger simulator behind a fault proxy
 * that can lose the answer to one submit after the ledger took it):
 *   - a governance signature whose answer is lost is the success it was: on a 2-of-2 page pending_signatures, on a
 *     1-of-1 page executed (the retries are refused by the ledger: the timestamp is used, the transaction executed)
 *   - expiry asks the ledger first: an operation whose signature the ledger holds is followed, not expired
 *   - stale signing data (the page's version changed, the key signed something prepared later) answers 409
 *     SIGNING_DATA_STALE naming the cause; the operation stays open, and fresh signing data for it is signed
 */
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519 } from '@noble/curves/ed25519.js';
import { and, eq, sql } from 'drizzle-orm';
import { claimSignRequest, getGovernanceOp, SIGN_REQUEST_CLAIM_LEASE_MS } from '../../src/db/governance.js';
import { events } from '../../src/db/schema.js';
import { submitPrepared } from '../../src/governance/submit.js';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import type { StoredPreparedSignature } from '../../src/ledger/index.js';
import type { GovernanceWorkflowInput } from '../../src/workflows/governance.js';
import { workflowBundle } from '../../src/temporal/worker.js';
import { dbKinds } from '../support/env.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { newClientKey, pollIdentity, startIdentityApp, startIdentityDevnet, startWorker, uniqueName, type IdentityDevnet } from '../identity/devnet.js';

type Key = ReturnType<typeof newClientKey>;

let dn: IdentityDevnet;
let proxy: FaultProxy;
let app: Awaited<ReturnType<typeof startIdentityApp>>;
let worker: Awaited<ReturnType<typeof startWorker>>;

const appIsPostgres = () => dbKinds().includes('postgres');

beforeAll(async () => {
  dn = await startIdentityDevnet();
  proxy = await startFaultProxy(dn.sim.url);
  app = await startIdentityApp(dn, dbKinds().includes('postgres') ? 'postgres' : 'pglite', { env: { LEDGER_URL: proxy.url } });
  worker = await startWorker(app.config, app.db);
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await proxy?.close();
  await dn?.stop();
});

const call = (method: string, path: string, body?: unknown) =>
  app.call(path, { method, key: app.key.key, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
const sign = (hashHex: string, k: Key) => Buffer.from(ed25519.sign(Buffer.from(hashHex, 'hex'), k.secretKey)).toString('hex');

/** Lose the ledger's answer to the next `n` submits (the ledger takes them). */
function loseNextSubmits(n = 1) {
  proxy.settings.dropAfter = (_path, body) => {
    if (n <= 0 || body?.method !== 'submit') return false;
    n--;
    return true;
  };
}

async function provision(k: Key) {
  const res = await call('POST', '/v1/identity', { name: uniqueName('lost'), public_key: k.publicKey, chains: [], credits: 1000 });
  expect(res.status).toBe(202);
  const { identity } = await res.json();
  const done = await pollIdentity(app, identity.id, (b) => b.status !== 'creating');
  expect(done.status).toBe('active');
  return done as { id: string; adi_url: string; book_url: string; key_page_url: string };
}

async function prepare(identity: string, operations: unknown[]) {
  const res = await call('POST', '/v1/governance', { identity, operations });
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

async function getGov(id: string) {
  return (await call('GET', `/v1/governance/${id}`)).json();
}

async function pollGov(id: string, until: (b: any) => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await getGov(id);
    if (until(body)) return body;
    if (Date.now() > deadline) throw new Error(`governance ${id} did not reach the expected state: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function cosign(identity: string, txHash: string, k: Key) {
  const prep = await call('POST', '/v1/sign', { type: 'pending_tx', target_id: txHash, identity, public_key: k.publicKey });
  const req = await prep.json();
  expect(prep.status, JSON.stringify(req)).toBe(201);
  const res = await call('POST', `/v1/sign/${req.sign_request_id}/signature`, {
    signature: sign(req.signing_data.data_for_signature, k),
    public_key: k.publicKey,
  });
  return { status: res.status, body: await res.json() };
}

const signersOf = async (txId: string) => (await dn.ledger.getTransaction(txId)).signatures.map((s) => s.publicKey?.toLowerCase());

const y1 = newClientKey();
const y2 = newClientKey();
const y3 = newClientKey();
const z = newClientKey();
const k1 = newClientKey();
const k2 = newClientKey();
const k3 = newClientKey();
const k4 = newClientKey();
let Y: Awaited<ReturnType<typeof provision>>;
let Z: Awaited<ReturnType<typeof provision>>;

describe('governance signatures whose ledger answer is lost', () => {
  it('provisions Y (made 2-of-2) and Z (1-of-1)', async () => {
    [Y, Z] = await Promise.all([provision(y1), provision(z)]);
    const op = await prepare(Y.adi_url, [
      { type: 'add_key', public_key_hash: publicKeyHashHex(y2.publicKey) },
      { type: 'set_threshold', threshold: 2 },
    ]);
    expect((await govSign(op, y1)).status).toBe(200);
    await pollGov(op.governance_op_id, (b) => b.status === 'executed');
  }, 90_000);

  it('2-of-2: the signature reached the ledger, its answer was lost: the operation is pending_signatures, and executes with the co-signature', async () => {
    const op = await prepare(Y.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(y3.publicKey) }]);
    loseNextSubmits(1);
    const r = await govSign(op, y1);
    expect(proxy.stats.droppedAfter).toBeGreaterThan(0);
    expect(await signersOf(op.tx_id)).toContain(y1.publicKey.toLowerCase());
    // before: the retry was refused (badTimestamp) → 400 LEDGER_REFUSED and the operation stayed signing_required
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'pending_signatures', collected_signatures: 1, required_signatures: 2, is_ready: false });
    expect((await getGov(op.governance_op_id)).status).toBe('pending_signatures');
    // the retry that found the signature on the ledger wrote the inbox (no scan ran)
    const inbox = await (await call('GET', `/v1/pending?identity=${encodeURIComponent(Y.adi_url)}`)).json();
    expect(inbox.actions.find((x: any) => x.tx_hash === op.tx_hash)).toMatchObject({ collected_signatures: 1, user_has_signed: true, is_ready: false });
    expect((await cosign(Y.adi_url, op.tx_hash, y2)).status).toBe(200);
    await pollGov(op.governance_op_id, (b) => b.status === 'executed');
  }, 60_000);

  // (passes on the old code too: the simulator, like the Go node, answers a finished transaction's resubmission with
  // its status, so the activity's retry succeeded; kept as a guard for the pre-submission ledger read)
  it('1-of-1: the ledger executed it, its answer was lost: the operation is executed', async () => {
    const op = await prepare(Z.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(k1.publicKey) }]);
    loseNextSubmits(1);
    const r = await govSign(op, z);
    expect((await dn.ledger.getTransaction(op.tx_id)).delivered).toBe(true);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.status).toBe('executed');
    expect((await getGov(op.governance_op_id)).status).toBe('executed');
  }, 60_000);

  it('expiry asks the ledger first: a signature the ledger holds (the workflow never heard of it) is followed, not expired', async () => {
    const op = await prepare(Z.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(k2.publicKey) }]);
    const row = (await getGovernanceOp(app.db, op.governance_op_id))!;
    // the signature reaches the ledger on a path whose answer never came back to the workflow
    await submitPrepared(dn.ledger, row.prepared as unknown as StoredPreparedSignature, sign(op.signing_data.hash_to_sign, z));
    await expect.poll(async () => (await dn.ledger.getTransaction(op.tx_id).catch(() => undefined))?.delivered, { timeout: 10_000 }).toBe(true);
    // the same operation's workflow with a one-second signing window
    const wf = app.deps.temporal.workflow;
    await wf.getHandle(`governance-${op.governance_op_id}`).terminate('test: restart with a short signing window');
    const input: GovernanceWorkflowInput = { opId: op.governance_op_id, orgId: app.key.orgId, nominatedPublicKey: z.publicKey, signingWindowSeconds: 1 };
    const h = await wf.start('governanceWorkflow', {
      workflowId: `governance-${op.governance_op_id}`,
      taskQueue: app.config.temporal.taskQueue,
      args: [input],
    });
    // before: 'expired' and governance.rejected, although the ledger had executed it
    expect(await h.result()).toEqual({ status: 'executed' });
    expect((await getGov(op.governance_op_id)).status).toBe('executed');
    const rejected = await app.db
      .select()
      .from(events)
      .where(and(eq(events.resourceId, op.governance_op_id), eq(events.type, 'governance.rejected')));
    expect(rejected).toEqual([]);
  }, 60_000);
});

describe('expiry and a signature at the same moment', () => {
  it.runIf(appIsPostgres())(
    'a signature arriving while the operation is being expired is refused (409 GOVERNANCE_CLOSED) and never reaches the ledger',
    async () => {
      const op = await prepare(Z.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(newClientKey().publicKey) }]);
      const id = op.governance_op_id as string;
      const wf = app.deps.temporal.workflow;
      await wf.getHandle(`governance-${id}`).terminate('test: restart with a short signing window');
      // hold the operation's row so that expiry, once it starts, cannot finish until the signature has had its chance
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const holder = app.db.transaction(async (tx) => {
        await tx.execute(sql`select id from governance_ops where id = ${id} for update`);
        locked();
        await released;
      });
      await isLocked;
      let update: Promise<{ status: number; body: any }> | undefined;
      try {
        const input: GovernanceWorkflowInput = { opId: id, orgId: app.key.orgId, nominatedPublicKey: z.publicKey, signingWindowSeconds: 1 };
        const h = await wf.start('governanceWorkflow', { workflowId: `governance-${id}`, taskQueue: app.config.temporal.taskQueue, args: [input] });
        // the signing window has ended and expiry is under way
        await expect
          .poll(
            async () =>
              (await h.fetchHistory()).events?.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'expireGovernanceOp') ?? false,
            { timeout: 15_000, interval: 50 },
          )
          .toBe(true);
        update = govSign(op, z);
        // before: the signature was accepted and submitted while expiry went on, the ledger executed the operation and
        // the gateway recorded it expired. Give it the time it would need to land.
        await new Promise((r) => setTimeout(r, 1500));
        expect(
          await dn.ledger.getTransaction(op.tx_id).then(
            () => true,
            () => false,
          ),
        ).toBe(false);
      } finally {
        release();
        await holder;
      }
      const r = await update!;
      expect(r.status, JSON.stringify(r.body)).toBe(409);
      expect(r.body.code).toBe('GOVERNANCE_CLOSED');
      await pollGov(id, (b) => b.status === 'expired');
      expect(
        await dn.ledger.getTransaction(op.tx_id).then(
          () => true,
          () => false,
        ),
      ).toBe(false);
    },
    60_000,
  );
});

describe('stale signing data leaves the operation open for fresh signing data', () => {
  async function refresh(op: any) {
    const res = await call('POST', `/v1/governance/${op.governance_op_id}/signing-data`);
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.governance_op_id).toBe(op.governance_op_id);
    expect(body.status).toBe('signing_required');
    expect(body.signing_data.hash_to_sign).not.toBe(op.signing_data.hash_to_sign);
    return body;
  }

  it("the page's version changed since preparing (badSignerVersion): 409 SIGNING_DATA_STALE, fresh signing data, then it executes", async () => {
    const p1 = await prepare(Z.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(k3.publicKey) }]);
    const p2 = await prepare(Z.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(k4.publicKey) }]);
    expect((await govSign(p2, z)).status).toBe(200);
    await pollGov(p2.governance_op_id, (b) => b.status === 'executed');
    const r = await govSign(p1, z);
    // before: the operation failed and had to be prepared again (earlier still: 400 LEDGER_REFUSED, unsignable until it expired)
    expect(r.status, JSON.stringify(r.body)).toBe(409);
    expect(r.body.code).toBe('SIGNING_DATA_STALE');
    expect(r.body.details).toMatchObject({ cause: 'key_page_version', signing_data_url: `/v1/governance/${p1.governance_op_id}/signing-data` });
    expect((await getGov(p1.governance_op_id)).status).toBe('signing_required');
    const fresh = await refresh(p1);
    expect(fresh.signing_data.key_page_version).toBeGreaterThan(p1.signing_data.key_page_version);
    expect((await govSign(fresh, z)).status).toBe(200);
    await pollGov(p1.governance_op_id, (b) => b.status === 'executed');
    // the run with the stale signature and the refreshSigningData Update replays deterministically
    const history = await app.deps.temporal.workflow.getHandle(`governance-${p1.governance_op_id}`).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, `governance-${p1.governance_op_id}`);
    // executed: no fresh signing data any more
    expect((await call('POST', `/v1/governance/${p1.governance_op_id}/signing-data`)).status).toBe(409);
  }, 60_000);

  it('the key signed an operation prepared later (badTimestamp): 409 SIGNING_DATA_STALE, fresh signing data, then it is submitted', async () => {
    const g1 = await prepare(Y.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(k3.publicKey) }]);
    const g2 = await prepare(Y.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(k4.publicKey) }]);
    expect((await govSign(g2, y1)).body.status).toBe('pending_signatures');
    const r = await govSign(g1, y1);
    expect(r.status, JSON.stringify(r.body)).toBe(409);
    expect(r.body.code).toBe('SIGNING_DATA_STALE');
    expect(r.body.details.cause).toBe('timestamp');
    expect((await getGov(g1.governance_op_id)).status).toBe('signing_required');
    const fresh = await refresh(g1);
    const s = await govSign(fresh, y1);
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    expect(s.body.status).toBe('pending_signatures');
    expect((await call('POST', `/v1/governance/${g1.governance_op_id}/signing-data`)).status).toBe(409);
  }, 60_000);
});

describe('co-signatures', () => {
  const w1 = newClientKey();
  const w2 = newClientKey();
  const w3 = newClientKey();
  let W: Awaited<ReturnType<typeof provision>>;

  async function prepareSign(body: Record<string, unknown>) {
    const res = await call('POST', '/v1/sign', body);
    return { status: res.status, body: await res.json() };
  }
  async function submitSign(req: any, k: Key) {
    const res = await call('POST', `/v1/sign/${req.sign_request_id}/signature`, {
      signature: sign(req.signing_data.data_for_signature, k),
      public_key: k.publicKey,
    });
    return { status: res.status, body: await res.json() };
  }

  it('W becomes 2-of-3', async () => {
    W = await provision(w1);
    const op = await prepare(W.adi_url, [
      { type: 'add_key', public_key_hash: publicKeyHashHex(w2.publicKey) },
      { type: 'add_key', public_key_hash: publicKeyHashHex(w3.publicKey) },
      { type: 'set_threshold', threshold: 2 },
    ]);
    expect((await govSign(op, w1)).status).toBe(200);
    await pollGov(op.governance_op_id, (b) => b.status === 'executed');
  }, 60_000);

  it('a co-signature whose answer was lost (502) is a success when retried, not a 400 that settles the request failed', async () => {
    const op = await prepare(W.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(k1.publicKey) }]);
    expect((await govSign(op, w1)).body.status).toBe('pending_signatures');
    const req = await prepareSign({ type: 'pending_tx', target_id: op.tx_hash, identity: W.adi_url, public_key: w2.publicKey });
    expect(req.status).toBe(201);
    loseNextSubmits(1);
    expect((await submitSign(req.body, w2)).status).toBe(502);
    await expect.poll(() => signersOf(op.tx_id), { timeout: 10_000 }).toContain(w2.publicKey.toLowerCase());
    const retry = await submitSign(req.body, w2);
    // before: 400 LEDGER_REFUSED (badTimestamp) and the sign request settled failed
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.status).toBe('submitted');
    await pollGov(op.governance_op_id, (b) => b.status === 'executed');
    // spent now
    expect((await submitSign(req.body, w2)).status).toBe(404);
  }, 60_000);

  it('a transaction that finished between prepare and submit is a 409 TX_NOT_PENDING', async () => {
    const op = await prepare(W.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(k2.publicKey) }]);
    expect((await govSign(op, w1)).body.status).toBe('pending_signatures');
    const r2 = await prepareSign({ type: 'pending_tx', target_id: op.tx_hash, identity: W.adi_url, public_key: w2.publicKey });
    const r3 = await prepareSign({ type: 'pending_tx', target_id: op.tx_hash, identity: W.adi_url, public_key: w3.publicKey });
    expect((await submitSign(r3.body, w3)).status).toBe(200);
    await expect.poll(async () => (await dn.ledger.getTransaction(op.tx_id)).delivered, { timeout: 10_000 }).toBe(true);
    const late = await submitSign(r2.body, w2);
    expect(late.status, JSON.stringify(late.body)).toBe(409);
    expect(late.body.code).toBe('TX_NOT_PENDING');
    expect(await signersOf(op.tx_id)).not.toContain(w2.publicKey.toLowerCase());
  }, 60_000);

  it('an identity that is not active cannot co-sign (409 IDENTITY_NOT_ACTIVE)', async () => {
    const v = newClientKey();
    const V = await provision(v);
    const op = await prepare(W.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(k3.publicKey) }]);
    expect((await govSign(op, w1)).body.status).toBe('pending_signatures');
    expect((await call('DELETE', `/v1/identity/${V.id}`)).status).toBe(200);
    const r = await prepareSign({ type: 'pending_tx', target_id: op.tx_hash, identity: V.id, public_key: v.publicKey });
    // before: 201, signing data for a retired identity
    expect(r.status, JSON.stringify(r.body)).toBe(409);
    expect(r.body.code).toBe('IDENTITY_NOT_ACTIVE');
  }, 60_000);

  it('a claim left by a submission that never settled (its process died) is reclaimed once its lease has passed', async () => {
    const op = await prepare(W.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(newClientKey().publicKey) }]);
    expect((await govSign(op, w1)).body.status).toBe('pending_signatures');
    const req = await prepareSign({ type: 'pending_tx', target_id: op.tx_hash, identity: W.adi_url, public_key: w2.publicKey });
    expect(req.status).toBe(201);
    // an API process claimed it and died before submitting or settling
    expect(await claimSignRequest(app.db, app.key.orgId, req.body.sign_request_id, new Date(app.clock.ms))).toBeDefined();
    const held = await submitSign(req.body, w2);
    expect(held.status).toBe(409);
    expect(held.body.code).toBe('SIGN_REQUEST_IN_FLIGHT');
    const start = app.clock.ms;
    app.clock.ms = start + SIGN_REQUEST_CLAIM_LEASE_MS + 1000;
    try {
      // before: 409 SIGN_REQUEST_IN_FLIGHT forever
      const r = await submitSign(req.body, w2);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.status).toBe('submitted');
    } finally {
      app.clock.ms = start;
    }
    await pollGov(op.governance_op_id, (b) => b.status === 'executed');
  }, 60_000);

  it('a page change voids the votes it collected: they are not counted, and the key has not signed in the inbox', async () => {
    const g1 = await prepare(W.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(k4.publicKey) }]);
    expect((await govSign(g1, w1)).body.collected_signatures).toBe(1);
    // another operation changes the page (its version) while g1 waits
    const g2 = await prepare(W.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(newClientKey().publicKey) }]);
    expect((await govSign(g2, w1)).body.status).toBe('pending_signatures');
    expect((await cosign(W.adi_url, g2.tx_hash, w2)).status).toBe(200);
    await pollGov(g2.governance_op_id, (b) => b.status === 'executed');
    // before: 1 of 2 and user_has_signed true, though the ledger had discarded w1's vote
    const g = await getGov(g1.governance_op_id);
    expect(g.collected_signatures).toBe(0);
    expect(g.is_ready).toBe(false);
    await app.deps.temporal.workflow.execute('pendingScanWorkflow', {
      workflowId: `pending-scan-lost-${Date.now()}`,
      taskQueue: app.config.temporal.taskQueue,
      args: [{ orgId: app.key.orgId }],
    });
    const inbox = await (await call('GET', `/v1/pending?identity=${encodeURIComponent(W.adi_url)}`)).json();
    const a = inbox.actions.find((x: any) => x.tx_hash === g1.tx_hash);
    expect(a).toMatchObject({ user_has_signed: false, status: 'eligible', collected_signatures: 0, required_signatures: 2 });
    // one co-signature now is one of two, as the ledger counts
    const r = await cosign(W.adi_url, g1.tx_hash, w3);
    expect(r.body).toMatchObject({ signature_count: 1, is_ready: false, ledger_status: 'pending' });
  }, 60_000);
});

describe('operations the ledger would refuse are refused when prepared, naming the operation', () => {
  const p = newClientKey();
  const x = publicKeyHashHex(newClientKey().publicKey);
  let P: Awaited<ReturnType<typeof provision>>;
  const attempt = async (operations: unknown[], extra: Record<string, unknown> = {}) => {
    const res = await call('POST', '/v1/governance', { identity: P.adi_url, operations, ...extra });
    return { status: res.status, body: await res.json() };
  };

  it('provisions P (1-of-1)', async () => {
    P = await provision(p);
  }, 60_000);

  it('the threshold is checked after each step, not only at the end', async () => {
    // before: 201 (3 keys, threshold 2 at the end), and the ledger rejected it after it was signed
    const r = await attempt([
      { type: 'set_threshold', threshold: 2 },
      { type: 'add_key', public_key_hash: x },
    ]);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body).toMatchObject({
      code: 'QUORUM_UNREACHABLE',
      error: expect.stringMatching(/threshold 2 is above the 1 key\(s\) the page would hold after operations\[0\]/),
    });
    expect(
      (
        await attempt([
          { type: 'add_key', public_key_hash: x },
          { type: 'set_threshold', threshold: 2 },
        ])
      ).status,
    ).toBe(201);
  });

  it('an operation that changes nothing (adding what is there, removing what is not, the current threshold) is a 400 naming the operation, force or not', async () => {
    const own = publicKeyHashHex(p.publicKey);
    for (const [ops, field, text] of [
      [[{ type: 'add_key', public_key_hash: own }], 'operations[0]', /already on the key page/],
      [
        [
          { type: 'add_key', public_key_hash: x },
          { type: 'add_key', public_key_hash: x },
        ],
        'operations[1]',
        /already on the key page/,
      ],
      [[{ type: 'remove_key', public_key_hash: publicKeyHashHex(newClientKey().publicKey) }], 'operations[0]', /not on the key page/],
      [
        [{ type: 'remove_delegate', delegate_url: 'acc://nobody-here.acme/book' }],
        'operations[0]',
        /delegate acc:\/\/nobody-here\.acme\/book is not on the key page/,
      ],
      [[{ type: 'set_threshold', threshold: 1 }], 'operations[0]', /threshold is already 1/],
      [[{ type: 'add_authority', authority_url: P.book_url }], 'operations[0]', /is already an authority of/],
      [[{ type: 'remove_authority', authority_url: 'acc://nobody-here.acme/book' }], 'operations[0]', /is not an authority of/],
    ] as [unknown[], string, RegExp][]) {
      for (const force of [false, true]) {
        const r = await attempt(ops, { force });
        expect(r.status, JSON.stringify(r.body)).toBe(400);
        expect(r.body.details).toEqual({ field });
        expect(r.body.error).toMatch(text);
        // one code for every operation that changes nothing
        expect(r.body).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.stringMatching(/the operation changes nothing$/) });
      }
    }
    // the data account inherits the ADI's authorities: removing the inherited book from it changes nothing either
    const inherited = await attempt([{ type: 'remove_authority', authority_url: P.book_url }], { account_url: `${P.adi_url}/data` });
    expect(inherited.status, JSON.stringify(inherited.body)).toBe(400);
    expect(inherited.body.error).toMatch(/is not an authority of .*\/data \(it has no authorities of its own: it inherits those of/);
  });

  it('prototype names are not operation types', async () => {
    // before: 201 with kind "function toString() { [native code] }"
    const r = await attempt([{ type: 'toString', public_key_hashes: [x] }]);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.details).toEqual({ field: 'operations[0].type' });
  });

  it('prototype names are not votes', async () => {
    // before: accepted as a vote (the request went on to look for the transaction: 404)
    for (const vote of ['constructor', 'toString', '__proto__']) {
      const res = await call('POST', '/v1/sign', { type: 'pending_tx', target_id: 'ab'.repeat(32), identity: P.adi_url, vote });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.details).toEqual({ field: 'vote' });
    }
  });
});
