/**
 * The live pending inbox on a devnet made here (ledger simulator behind a fault proxy, Temporal, the worker, the
 * app), with no pending-discovery scan run at all:
 *   - a governance operation signed on a 2-of-2 page is in the inbox (with its inbox.action_pending event) within 1 s
 *     of the signature's answer, and leaves it within 1 s of the co-signature that executes it;
 *   - the same key co-signing it again is a 409 ALREADY_SIGNED naming the transaction; signature_count counts the
 *     transaction's signatures (2 on the 2-of-2 page);
 *   - a new delegate's organization (another one) sees the operation at once; the delegate's co-signature executes it
 *     and it leaves both organizations' inboxes;
 *   - a transaction executed by a signature made outside the gateway leaves the inbox on the next read, its action
 *     closed as executed;
 *   - a ledger that does not answer leaves the stored state, said so (live.complete false).
 * Times are measured from the answer that made the change, polling every 25 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519 } from '@noble/curves/ed25519.js';
import { and, eq } from 'drizzle-orm';
import { events, pendingActions } from '../../src/db/schema.js';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey } from '../support/platform.js';
import { newClientKey, startIdentityApp, startIdentityDevnet, startWorker, uniqueName, type IdentityDevnet } from '../identity/devnet.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';

type Key = ReturnType<typeof newClientKey>;

let dn: IdentityDevnet;
let proxy: FaultProxy;
let app: Awaited<ReturnType<typeof startIdentityApp>>;
let worker: Awaited<ReturnType<typeof startWorker>>;
let other: Awaited<ReturnType<typeof createTestOrgAndKey>>;

beforeAll(async () => {
  dn = await startIdentityDevnet();
  proxy = await startFaultProxy(dn.sim.url);
  app = await startIdentityApp(dn, dbKinds().includes('postgres') ? 'postgres' : 'pglite', { env: { LEDGER_URL: proxy.url } });
  worker = await startWorker(app.config, app.db);
  other = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await proxy?.close();
  await dn?.stop();
});

const call = async (method: string, path: string, body?: unknown, key = app.key.key) => {
  const res = await app.call(path, { method, key, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, body: (await res.json()) as any };
};
const sign = (hashHex: string, k: Key) => Buffer.from(ed25519.sign(Buffer.from(hashHex, 'hex'), k.secretKey)).toString('hex');

async function provision(k: Key, key = app.key.key) {
  const res = await call('POST', '/v1/identity', { name: uniqueName('inbox'), public_key: k.publicKey, chains: [], credits: 1000 }, key);
  expect(res.status).toBe(202);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { body } = await call('GET', `/v1/identity/${res.body.identity.id}`, undefined, key);
    if (body.status !== 'creating') {
      expect(body.status).toBe('active');
      return body as { id: string; adi_url: string; book_url: string; key_page_url: string };
    }
    if (Date.now() > deadline) throw new Error(`identity ${res.body.identity.id} still creating`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function govern(identity: string, operations: unknown[], k: Key) {
  const op = await call('POST', '/v1/governance', { identity, operations });
  expect(op.status, JSON.stringify(op.body)).toBe(201);
  const s = await call('POST', `/v1/governance/${op.body.governance_op_id}/signature`, {
    signature: sign(op.body.signing_data.hash_to_sign, k),
    public_key: k.publicKey,
  });
  expect(s.status, JSON.stringify(s.body)).toBe(200);
  return { op: op.body, signed: s.body, answeredAt: Date.now() };
}

async function pollGov(id: string, until: (b: any) => boolean) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { body } = await call('GET', `/v1/governance/${id}`);
    if (until(body)) return body;
    if (Date.now() > deadline) throw new Error(`governance ${id}: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function cosign(txHash: string, identity: string, k: Key, key = app.key.key) {
  const req = await call('POST', '/v1/sign', { type: 'pending_tx', target_id: txHash, identity, public_key: k.publicKey }, key);
  expect(req.status, JSON.stringify(req.body)).toBe(201);
  const r = await call(
    'POST',
    `/v1/sign/${req.body.sign_request_id}/signature`,
    { signature: sign(req.body.signing_data.data_for_signature, k), public_key: k.publicKey },
    key,
  );
  return { ...r, answeredAt: Date.now() };
}

/** The inbox action of `txHash` in `identity`'s inbox, polled until `present` holds; the milliseconds since `from`. */
async function inboxUntil(identity: string, txHash: string, present: boolean, from: number, key = app.key.key) {
  for (;;) {
    const { status, body } = await call('GET', `/v1/pending?identity=${encodeURIComponent(identity)}`, undefined, key);
    expect(status).toBe(200);
    const action = body.actions.find((x: any) => x.tx_hash === txHash);
    const ms = Date.now() - from;
    if (Boolean(action) === present) return { action, ms, body };
    if (ms > 10_000) throw new Error(`${txHash} ${present ? 'never appeared in' : 'never left'} the inbox of ${identity}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const a = newClientKey();
const b = newClientKey();
const c = newClientKey();
const d = newClientKey();
const e = newClientKey();
let A: Awaited<ReturnType<typeof provision>>;
let D: Awaited<ReturnType<typeof provision>>;
let E: Awaited<ReturnType<typeof provision>>;

describe('the live pending inbox', () => {
  it('provisions A (made 2-of-2), E, and D in another organization', async () => {
    [A, E, D] = await Promise.all([provision(a), provision(e), provision(d, other.key)]);
    const { op } = await govern(
      A.adi_url,
      [
        { type: 'add_key', public_key_hash: publicKeyHashHex(b.publicKey) },
        { type: 'set_threshold', threshold: 2 },
      ],
      a,
    );
    await pollGov(op.governance_op_id, (x) => x.status === 'executed');
  }, 120_000);

  let op: any;
  it('a governance operation signed on the 2-of-2 page is in the inbox within 1 s, with its inbox.action_pending event', async () => {
    const g = await govern(A.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(c.publicKey) }], a);
    op = g.op;
    expect(g.signed).toMatchObject({ status: 'pending_signatures', collected_signatures: 1, required_signatures: 2 });
    const { action, ms, body } = await inboxUntil(A.adi_url, op.tx_hash, true, g.answeredAt);
    expect(ms).toBeLessThan(1000);
    expect(action).toMatchObject({
      identity_id: A.id,
      category: 'governance',
      type: 'updateKeyPage',
      status: 'awaiting_others',
      collected_signatures: 1,
      required_signatures: 2,
      user_has_signed: true,
      is_ready: false,
      awaiting_authorities: [A.book_url],
    });
    expect(body.live.complete).toBe(true);
    expect(Date.parse(body.live.read_at)).toBeGreaterThanOrEqual(g.answeredAt);
    // no scan ran: the event was written with the action
    expect(body.scan.last_scan_at).toBeNull();
    const evs = await app.db
      .select()
      .from(events)
      .where(and(eq(events.resourceId, action.id), eq(events.type, 'inbox.action_pending')));
    expect(evs).toHaveLength(1);
    expect(evs[0]!.data).toMatchObject({ pending_action_id: action.id, tx_hash: op.tx_hash, collected_signatures: 1, required_signatures: 2 });
  });

  it('the same key co-signing it again is a 409 ALREADY_SIGNED naming the transaction; nothing is submitted', async () => {
    const before = (await dn.ledger.getTransaction(op.tx_id)).signatures.length;
    const again = await cosign(op.tx_hash, A.adi_url, a);
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body).toMatchObject({ code: 'ALREADY_SIGNED', details: { tx_hash: op.tx_hash } });
    expect(again.body.error).toContain(op.tx_hash);
    const st = await dn.ledger.getTransaction(op.tx_id);
    expect(st.pending).toBe(true);
    expect(st.signatures.length).toBe(before);
  });

  it('the second seat co-signs: signature_count 2 (the transaction), executed, and gone from the inbox within 1 s', async () => {
    const r = await cosign(op.tx_hash, A.adi_url, b);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'submitted', tx_hash: op.tx_hash, signature_count: 2, is_ready: true });
    const { ms } = await inboxUntil(A.adi_url, op.tx_hash, false, r.answeredAt);
    expect(ms).toBeLessThan(1000);
    const rows = await app.db.select().from(pendingActions).where(eq(pendingActions.txHash, op.tx_hash));
    expect(rows.map((x) => x.status)).toEqual(['executed']);
    await pollGov(op.governance_op_id, (x) => x.status === 'executed');
  });

  it("a new delegate's organization sees the operation at once; its co-signature executes it and it leaves both inboxes", async () => {
    const g = await govern(E.adi_url, [{ type: 'add_delegate', delegate_url: D.book_url }], e);
    expect(g.signed).toMatchObject({ status: 'pending_signatures', awaiting_authorities: [D.book_url] });
    const there = await inboxUntil(D.adi_url, g.op.tx_hash, true, g.answeredAt, other.key);
    expect(there.ms).toBeLessThan(1000);
    expect(there.action).toMatchObject({ identity_id: D.id, status: 'eligible', user_has_signed: false, awaiting_authorities: [D.book_url] });
    // E's organization lists it for E, which has signed; D's organization sees only its own identity's action
    expect((await inboxUntil(E.adi_url, g.op.tx_hash, true, g.answeredAt)).action).toMatchObject({ identity_id: E.id, user_has_signed: true });
    expect(there.body.actions.every((x: any) => x.identity_id === D.id)).toBe(true);

    const r = await cosign(g.op.tx_hash, D.adi_url, d, other.key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ signature_count: 2, is_ready: true, awaiting_authorities: [] });
    expect((await inboxUntil(D.adi_url, g.op.tx_hash, false, r.answeredAt, other.key)).ms).toBeLessThan(1000);
    expect((await inboxUntil(E.adi_url, g.op.tx_hash, false, r.answeredAt)).ms).toBeLessThan(1000);
    await pollGov(g.op.governance_op_id, (x) => x.status === 'executed');
  });

  it('a delegate key completing a 2-signature page counts 2, not its own page’s 1', async () => {
    const t = await govern(E.adi_url, [{ type: 'set_threshold', threshold: 2 }], e);
    await pollGov(t.op.governance_op_id, (x) => x.status === 'executed');
    const g = await govern(E.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(c.publicKey) }], e);
    expect((await inboxUntil(D.adi_url, g.op.tx_hash, true, g.answeredAt, other.key)).ms).toBeLessThan(1000);
    const r = await cosign(g.op.tx_hash, D.adi_url, d, other.key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.signature_count).toBe(2);
    await pollGov(g.op.governance_op_id, (x) => x.status === 'executed');
  });

  it('a transaction executed by a signature made outside the gateway leaves the inbox on the next read, closed as executed', async () => {
    const g = await govern(A.adi_url, [{ type: 'remove_key', public_key_hash: publicKeyHashHex(c.publicKey) }], a);
    const listed = await inboxUntil(A.adi_url, g.op.tx_hash, true, g.answeredAt);
    expect(listed.action).toMatchObject({ collected_signatures: 1, is_ready: false });
    await dn.ledger.signPending(g.op.tx_id, { privateKey: b.secretKey, signerUrl: A.key_page_url });
    const executedAt = Date.now();
    await dn.ledger.waitForTransaction(g.op.tx_id);
    const gone = await inboxUntil(A.adi_url, g.op.tx_hash, false, executedAt);
    expect(gone.ms).toBeLessThan(1000);
    const rows = await app.db.select().from(pendingActions).where(eq(pendingActions.txHash, g.op.tx_hash));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'executed', isReady: true });
    expect(rows[0]!.resolvedAt).not.toBeNull();
  });

  it('a ledger that does not answer: the stored state, said so', async () => {
    const g = await govern(A.adi_url, [{ type: 'add_key', public_key_hash: publicKeyHashHex(c.publicKey) }], a);
    await inboxUntil(A.adi_url, g.op.tx_hash, true, g.answeredAt);
    // past the shared reads' life, so that this read goes to the ledger
    await new Promise((r) => setTimeout(r, 600));
    proxy.settings.failRate = 1;
    let res: Awaited<ReturnType<typeof call>>;
    const t0 = Date.now();
    try {
      res = await call('GET', `/v1/pending?identity=${encodeURIComponent(A.adi_url)}`);
    } finally {
      proxy.settings.failRate = 0;
    }
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(res.status).toBe(200);
    expect(res.body.live.complete).toBe(false);
    expect(res.body.actions.find((x: any) => x.tx_hash === g.op.tx_hash)).toMatchObject({ collected_signatures: 1, is_ready: false });
  });
});
