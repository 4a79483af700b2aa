/**
 * POST /v1/identity refusals and failures, idempotent replay, quota, repair of a hash-only identity, retire,
 * list, org scoping and the portfolio — against a devnet made here (ledger-sim, two anvils, worker, app).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { createApp } from '../../src/api/app.js';
import { ApiError } from '../../src/api/errors.js';
import { NO_PUBLIC_KEY_MESSAGE, requireSigningKey } from '../../src/services/identity-access.js';
import { events, identities, organizations } from '../../src/db/schema.js';
import type { ChainConfig } from '../../src/config.js';
import { createIdentityWithinQuota } from '../../src/db/identities.js';
import { ANVIL_DEV_KEY_0, deployDevnetContracts, devValidatorRegistrations } from '../../src/devnet/contracts.js';
import { identityUrls, publicKeyHashHex } from '../../src/identity/keys.js';
import { createSponsor } from '../../src/identity/sponsor.js';
import { tx } from '../../src/ledger/index.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey } from '../support/platform.js';
import { newClientKey, pollIdentity, startIdentityApp, startIdentityDevnet, startWorker, uniqueName, type IdentityDevnet } from './devnet.js';

let dn: IdentityDevnet;
let app: Awaited<ReturnType<typeof startIdentityApp>>;
let worker: Awaited<ReturnType<typeof startWorker>>;
const kind = dbKinds().includes('postgres') ? 'postgres' : 'pglite';

beforeAll(async () => {
  dn = await startIdentityDevnet();
  app = await startIdentityApp(dn, kind);
  worker = await startWorker(app.config, app.db);
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await dn?.stop();
});

const post = (body: unknown, o: { key?: string; headers?: Record<string, string> } = {}) =>
  app.call('/v1/identity', { method: 'POST', key: o.key ?? app.key.key, body: JSON.stringify(body), headers: o.headers });
const get = async (path: string, key = app.key.key) => await app.call(path, { key });

describe('validation (400, nothing created)', () => {
  it('unknown chain names the chain and the known ones', async () => {
    const res = await post({ name: uniqueName(), public_key: newClientKey().publicKey, chains: ['ethereum-sepolia', 'solana-mainnet'] });
    expect(res.status).toBe(400);
    const b = await res.json();
    expect(b.code).toBe('UNKNOWN_CHAIN');
    expect(b.error).toContain('solana-mainnet');
    expect(b.details.known_chains).toEqual(['ethereum-sepolia', 'polygon-amoy']);
  });

  it('bad keys: not hex, wrong length, not a curve point, small order', async () => {
    const name = uniqueName();
    for (const public_key of ['zz'.repeat(32), 'ab'.repeat(31), 'ff'.repeat(32), `01${'00'.repeat(31)}`]) {
      const res = await post({ name, public_key });
      expect(res.status, public_key).toBe(400);
      const b = await res.json();
      expect(b.error).toMatch(/^public_key: /);
      expect(b.details.field).toBe('public_key');
    }
    const res = await post({ name, public_key_hash: 'xyz' });
    expect((await res.json()).error).toMatch(/^public_key_hash: /);
    const none = await post({ name });
    expect((await none.json()).error).toMatch(/^public_key: required/);
  });

  it('hash/key mismatch: the hash must be SHA-256 of the raw 32 bytes (hashing the hex text is refused)', async () => {
    const k = newClientKey();
    const overHexText = publicKeyHashHex(Buffer.from(k.publicKey, 'utf8').toString('hex').slice(0, 64));
    const res = await post({ name: uniqueName(), public_key: k.publicKey, public_key_hash: overHexText });
    expect(res.status).toBe(400);
    const b = await res.json();
    expect(b.code).toBe('PUBLIC_KEY_HASH_MISMATCH');
    expect(b.error).toMatch(/public_key_hash: does not match public_key/);
    // the right hash, upper-case, is fine
    const ok = await post({ name: uniqueName(), public_key: k.publicKey, public_key_hash: publicKeyHashHex(k.publicKey).toUpperCase() });
    expect(ok.status).toBe(202);
  });

  it('names: ledger-safe labels only; credits: whole, non-negative', async () => {
    for (const name of ['ab', 'Upper-Case', 'has.dot', '-dash', '12345', 'a'.repeat(64), 'spa ce', 'bvn-apollo-partition', 'unknown']) {
      const res = await post({ name, public_key: newClientKey().publicKey });
      expect(res.status, name).toBe(400);
      expect((await res.json()).error).toMatch(/^name: /);
    }
    // a short name costs the sponsor the ledger's sliding fee (the simulator keeps the genesis default: up to 12
    // characters, 1,000 to 2,048,000 credits): refused, naming the fee and the shortest name that pays the base
    const short = await post({ name: 'shortname', public_key: newClientKey().publicKey });
    expect(short.status).toBe(400);
    expect((await short.json()).error).toBe(
      'name: a name of 9 characters costs 8000 credits to register on this ledger (its sliding fee for names of up to 12 characters); choose a name of at least 13 characters',
    );
    for (const credits of [-1, 1.5, 2_000_000_000]) {
      const res = await post({ name: uniqueName(), public_key: newClientKey().publicKey, credits });
      expect(res.status, String(credits)).toBe(400);
      expect((await res.json()).error).toMatch(/^credits: /);
    }
  });
});

describe('name already taken', () => {
  it('by a live identity of the gateway: 409 NAME_TAKEN at once', async () => {
    const name = uniqueName('dup');
    expect((await post({ name, public_key: newClientKey().publicKey })).status).toBe(202);
    const res = await post({ name, public_key: newClientKey().publicKey });
    expect(res.status).toBe(409);
    const b = await res.json();
    expect(b.code).toBe('NAME_TAKEN');
    expect(b.error).toContain(`acc://${name}.acme`);
  });

  it('on the ledger by someone else: 202, then failed with the reason; the credits go back to the grant', async () => {
    const name = uniqueName('taken');
    // someone outside the gateway owns the ADI (a different key on its page)
    const other = createSponsor(randomBytes(32));
    await dn.ledger.faucet(other.liteTokenAccount);
    await waitFor(async () => BigInt((await dn.ledger.tryQueryAccount(other.liteTokenAccount))?.balance ?? '0') > 0n);
    const { amount, oracle } = await dn.ledger.acmeForCredits(10_000);
    const c = await dn.ledger.signAndSubmit(other.liteTokenAccount, tx.addCredits({ recipient: other.liteIdentity, amount, oracle }), other.asLite());
    await dn.ledger.waitForTransaction(c.txId);
    await waitFor(async () => ((await dn.ledger.queryAccount(other.liteIdentity)).creditBalance ?? 0) > 0);
    const adi = `acc://${name}.acme`;
    const r = await dn.ledger.signAndSubmit(
      adi,
      tx.createIdentity({ url: adi, keyBookUrl: `${adi}/book`, publicKeyHash: other.publicKeyHash }),
      other.asLite(),
    );
    expect((await dn.ledger.waitForTransaction(r.txId)).delivered).toBe(true);

    const usedBefore = (await org()).creditsUsed;
    const res = await post({ name, public_key: newClientKey().publicKey, chains: ['ethereum-sepolia'], credits: 50 });
    expect(res.status).toBe(202);
    const id = (await res.json()).identity.id;
    const failed = await pollIdentity(app, id, (b) => b.status !== 'creating');
    expect(failed.status).toBe('failed');
    expect(failed.stage).toBe('failed');
    expect(failed.error_message).toMatch(/name already taken on the ledger/);
    const evs = await app.deps.database.db.select().from(events).where(eq(events.resourceId, id));
    expect(evs.map((e) => e.type)).toEqual(['identity.failed']);
    expect(evs[0].data).toMatchObject({ identity_id: id, error: expect.stringMatching(/name already taken/) });
    expect(failed.chain_accounts).toEqual([]);
    expect((await org()).creditsUsed).toBe(usedBefore);
    // the ADI is untouched: still the other key
    const page = await dn.ledger.queryKeyPage(`${adi}/book/1`);
    expect(page.keys.map((k) => k.publicKeyHash)).toEqual([other.publicKeyHash]);
    await expect(app.deps.temporal.workflow.getHandle(`identity-${id}`).result()).rejects.toThrow();
    const desc = await app.deps.temporal.workflow.getHandle(`identity-${id}`).describe();
    expect(desc.status.name).toBe('FAILED');
  });
});

describe('who may provision a name that exists', () => {
  it("another organization cannot take over a retired identity's ADI with its public key hash; the organization that made it can take it back", async () => {
    const name = uniqueName('adopt');
    const k = newClientKey();
    const a = await post({ name, public_key: k.publicKey, credits: 10 });
    expect(a.status).toBe(202);
    const first = (await a.json()).identity.id;
    await pollIdentity(app, first, (b) => b.status === 'active');
    expect((await app.call(`/v1/identity/${first}`, { method: 'DELETE', key: app.key.key })).status).toBe(200);

    // the key hash is public: another organization presenting it gets nothing
    const other = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
    const b = await post({ name, public_key_hash: publicKeyHashHex(k.publicKey), credits: 10 }, { key: other.key });
    expect(b.status).toBe(202);
    const squat = (await b.json()).identity.id;
    const failed = await pollIdentity({ ...app, key: other }, squat, (x) => x.status !== 'creating');
    expect(failed.status).toBe('failed');
    expect(failed.error_message).toMatch(/name already taken on the ledger/);

    // the organization that created it, with the same key, takes it back (once the failed attempt, which holds the
    // name in the gateway, is retired) and gets the credits it asked for
    expect((await app.call(`/v1/identity/${squat}`, { method: 'DELETE', key: other.key })).status).toBe(200);
    const c = await post({ name, public_key: k.publicKey, credits: 20 });
    expect(c.status).toBe(202);
    const back = await pollIdentity(app, (await c.json()).identity.id, (x) => x.status !== 'creating');
    expect(back.status).toBe('active');
    expect(back.credit_balance).toBeGreaterThanOrEqual(30);
  });

  it('a name retired during provisioning stays reserved until its workflow ends', async () => {
    const name = uniqueName('midway');
    const a = await post({ name, public_key: newClientKey().publicKey, chains: ['ethereum-sepolia'] });
    expect(a.status).toBe(202);
    const first = (await a.json()).identity.id;
    const del = await app.call(`/v1/identity/${first}`, { method: 'DELETE', key: app.key.key });
    expect((await del.json()).identity.status).toBe('retired');

    const other = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
    const b = await post({ name, public_key: newClientKey().publicKey }, { key: other.key });
    expect(b.status).toBe(409);
    expect((await b.json()).code).toBe('NAME_TAKEN');

    // the workflow ends (the retired row records it), and then the name is free again in the gateway; on the
    // ledger it is the first client's now
    await app.deps.temporal.workflow.getHandle(`identity-${first}`).result();
    const [row] = await app.db.select().from(identities).where(eq(identities.id, first));
    expect(row).toMatchObject({ status: 'retired', stage: 'done' });
    const c = await post({ name, public_key: newClientKey().publicKey }, { key: other.key });
    expect(c.status).toBe(202);
    const failed = await pollIdentity({ ...app, key: other }, (await c.json()).identity.id, (x) => x.status !== 'creating');
    expect(failed.error_message).toMatch(/name already taken on the ledger/);
  });

  it("the sponsor's own key is refused as the client key before anything is created; the credits go back", async () => {
    const sponsor = createSponsor(dn.env.SPONSOR_KEY!);
    const usedBefore = (await org()).creditsUsed;
    const name = uniqueName('sponsorkey');
    const res = await post({ name, public_key_hash: sponsor.publicKeyHash, credits: 7 });
    expect(res.status).toBe(202);
    const failed = await pollIdentity(app, (await res.json()).identity.id, (x) => x.status !== 'creating');
    expect(failed.status).toBe('failed');
    expect(failed.error_message).toMatch(/sponsor's key/);
    expect(await dn.ledger.tryQueryAccount(`acc://${name}.acme`)).toBeUndefined();
    expect((await org()).creditsUsed).toBe(usedBefore);
  });

  it('a start whose answer is lost after Temporal started the workflow is accepted, not undone', async () => {
    const client = app.deps.temporal.workflow;
    const realStart = client.start.bind(client);
    client.start = (async (...a: Parameters<typeof realStart>) => {
      await realStart(...a);
      throw new Error('deadline exceeded (answer lost)');
    }) as typeof client.start;
    let res: Response;
    try {
      res = await post({ name: uniqueName('lost'), public_key: newClientKey().publicKey, credits: 3 });
    } finally {
      client.start = realStart;
    }
    expect(res.status).toBe(202);
    const done = await pollIdentity(app, (await res.json()).identity.id, (x) => x.status !== 'creating');
    expect(done.status).toBe('active');
  });

  it.skipIf(kind !== 'postgres')('two organizations taking one name at the same moment: the second gets 409 NAME_TAKEN, not a 500', async () => {
    const other = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
    const name = uniqueName('race');
    const row = (orgId: string) => ({
      id: randomUUID(),
      orgId,
      name,
      ...identityUrls(name, 'acme'),
      publicKey: null,
      publicKeyHash: publicKeyHashHex(newClientKey().publicKey),
      requestedChains: [],
      requestedCredits: 0n,
    });
    // the first insert is held uncommitted while the second passes its name check and waits on the unique index
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    const first = app.db.transaction(async (tx) => {
      await tx.insert(identities).values({ ...row(app.key.orgId), status: 'creating', stage: 'queued' });
      await held;
    });
    await new Promise((r) => setTimeout(r, 200));
    const second = createIdentityWithinQuota(app.db, row(other.orgId));
    await new Promise((r) => setTimeout(r, 300));
    commit();
    await first;
    expect(await second).toMatchObject({ ok: false, reason: 'name_taken' });
  });
});

describe('sponsor out of credits', () => {
  it('ends in failed with the reason (not retried forever)', async () => {
    const poor = randomBytes(32).toString('hex');
    const poorApp = await startIdentityApp(dn, kind, { env: { SPONSOR_KEY: poor } });
    const poorWorker = await startWorker(poorApp.config, poorApp.db);
    try {
      const res = await poorApp.call('/v1/identity', {
        method: 'POST',
        key: poorApp.key.key,
        body: JSON.stringify({ name: uniqueName('poor'), public_key: newClientKey().publicKey }),
      });
      expect(res.status).toBe(202);
      const id = (await res.json()).identity.id;
      const failed = await pollIdentity(poorApp, id, (b) => b.status !== 'creating', 30_000);
      expect(failed.status).toBe('failed');
      expect(failed.error_message).toMatch(/sponsor is out of credits/);
    } finally {
      await poorWorker.stop();
      await poorApp.close();
    }
  });
});

describe('chains whose AccountFactory differs', () => {
  it('fail the identity instead of making it active with a different account address per chain', async () => {
    // polygon-amoy gets a second system deployment (another validator set, so other CREATE2 addresses) and is configured with it
    const chains = JSON.parse(dn.env.CHAINS!) as ChainConfig[];
    const amoy = chains.find((c) => c.name === 'polygon-amoy')!;
    const other = await deployDevnetContracts({ chains: [amoy], deployerKey: ANVIL_DEV_KEY_0, validators: devValidatorRegistrations(7, 'other-set') });
    expect(other.contracts.accountFactory).not.toBe(amoy.contracts!.accountFactory);
    const mixed = chains.map((c) => (c.name === 'polygon-amoy' ? other.chains[0]! : c));
    const mixedApp = await startIdentityApp(dn, kind, { env: { CHAINS: JSON.stringify(mixed) } });
    const mixedWorker = await startWorker(mixedApp.config, mixedApp.db);
    try {
      const res = await mixedApp.call('/v1/identity', {
        method: 'POST',
        key: mixedApp.key.key,
        body: JSON.stringify({ name: uniqueName('mixed'), public_key: newClientKey().publicKey, chains: ['ethereum-sepolia', 'polygon-amoy'] }),
      });
      expect(res.status).toBe(202);
      const failed = await pollIdentity(mixedApp, (await res.json()).identity.id, (b) => b.status !== 'creating');
      expect(failed.status).toBe('failed');
      expect(failed.error_message).toMatch(/address differs between chains/);
    } finally {
      await mixedWorker.stop();
      await mixedApp.close();
    }
  });
});

describe('quota', () => {
  it('refused with quota and used once reached (failed ones count); retiring frees a slot', async () => {
    const q = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
    await app.db.update(organizations).set({ identityQuota: 2 }).where(eq(organizations.id, q.orgId));
    const first = await post({ name: uniqueName('q'), public_key: newClientKey().publicKey }, { key: q.key });
    expect(first.status).toBe(202);
    // an invalid request does not use a slot; a hash-only one does
    const second = await post({ name: uniqueName('q'), public_key_hash: publicKeyHashHex(newClientKey().publicKey) }, { key: q.key });
    expect(second.status).toBe(202);
    const third = await post({ name: uniqueName('q'), public_key: newClientKey().publicKey }, { key: q.key });
    expect(third.status).toBe(403);
    const b = await third.json();
    expect(b.code).toBe('IDENTITY_QUOTA_EXCEEDED');
    expect(b.details).toEqual({ quota: 2, used: 2 });
    expect(b.error).toMatch(/2 of 2/);

    const id = (await first.json()).identity.id;
    const del = await app.call(`/v1/identity/${id}`, { method: 'DELETE', key: q.key });
    expect(del.status).toBe(200);
    expect((await del.json()).identity.status).toBe('retired');
    const again = await app.call(`/v1/identity/${id}`, { method: 'DELETE', key: q.key });
    expect(again.status).toBe(200);
    expect((await get(`/v1/identity/${id}`, q.key).then((r) => r.json())).status).toBe('retired');
    const fourth = await post({ name: uniqueName('q'), public_key: newClientKey().publicKey }, { key: q.key });
    expect(fourth.status).toBe(202);
  });
});

describe('Idempotency-Key', () => {
  it('a replay returns the original response with idempotent: true and creates nothing; another body is 422', async () => {
    const key = randomUUID();
    const body = { name: uniqueName('idem'), public_key: newClientKey().publicKey, chains: ['polygon-amoy'], credits: 5 };
    const a = await post(body, { headers: { 'Idempotency-Key': key } });
    expect(a.status).toBe(202);
    const first = await a.json();
    const b = await post(body, { headers: { 'Idempotency-Key': key } });
    expect(b.status).toBe(202);
    const replay = await b.json();
    expect(replay.idempotent).toBe(true);
    expect(replay.identity.id).toBe(first.identity.id);
    // the same shape as the original: the identity's fields at the top level too
    expect(replay.id).toBe(first.id);
    expect({ ...replay, idempotent: undefined }).toEqual({ ...first, idempotent: undefined });
    const list = await get('/v1/identities?limit=100').then((r) => r.json());
    expect(list.identities.filter((i: any) => i.name === body.name)).toHaveLength(1);
    const c = await post({ ...body, credits: 6 }, { headers: { 'Idempotency-Key': key } });
    expect(c.status).toBe(422);
    expect((await c.json()).code).toBe('IDEMPOTENCY_KEY_MISMATCH');
    // without the key, the same body is a second request: refused as a duplicate name, not a second identity
    expect((await post(body)).status).toBe(409);
    await pollIdentity(app, first.identity.id, (x) => x.status === 'active');
  });
});

describe('hash-only identity', () => {
  it('can_sign false and signing calls get 400 "Identity has no public key configured"; PATCH with the matching key repairs it', async () => {
    const k = newClientKey();
    const res = await post({ name: uniqueName('hash'), public_key_hash: publicKeyHashHex(k.publicKey) });
    expect(res.status).toBe(202);
    const created = await res.json();
    expect(created.identity.can_sign).toBe(false);
    expect(created.identity.public_key).toBeNull();
    expect(created.warnings.join(' ')).toMatch(/cannot sign/);
    const id = created.identity.id;
    const active = await pollIdentity(app, id, (b) => b.status !== 'creating');
    expect(active.status).toBe('active');
    expect(active.can_sign).toBe(false);
    // the guard the signing routes use
    try {
      requireSigningKey({ publicKey: null });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).status).toBe(400);
      expect((e as ApiError).message).toBe(NO_PUBLIC_KEY_MESSAGE);
      expect(NO_PUBLIC_KEY_MESSAGE).toBe('Identity has no public key configured');
    }
    const wrong = await app.call(`/v1/identity/${id}`, { method: 'PATCH', key: app.key.key, body: JSON.stringify({ public_key: newClientKey().publicKey }) });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).code).toBe('PUBLIC_KEY_HASH_MISMATCH');
    const ok = await app.call(`/v1/identity/${id}`, { method: 'PATCH', key: app.key.key, body: JSON.stringify({ public_key: k.publicKey.toUpperCase() }) });
    expect(ok.status).toBe(200);
    const repaired = await ok.json();
    expect(repaired.can_sign).toBe(true);
    expect(repaired.public_key).toBe(k.publicKey);
    expect(requireSigningKey({ publicKey: repaired.public_key })).toBe(k.publicKey);
  });
});

describe('reads', () => {
  it("another organization's identity is a 404, like an unknown id", async () => {
    const res = await post({ name: uniqueName('mine'), public_key: newClientKey().publicKey });
    const id = (await res.json()).identity.id;
    const stranger = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', JSON.stringify({ public_key: newClientKey().publicKey })],
      ['DELETE', undefined],
    ] as const) {
      const r = await app.call(`/v1/identity/${id}`, { method, key: stranger.key, body });
      expect(r.status, method).toBe(404);
    }
    expect((await get(`/v1/identity/${randomUUID()}`)).status).toBe(404);
    expect((await get('/v1/identities', stranger.key).then((r) => r.json())).identities).toEqual([]);
  });

  it('GET /v1/identities: newest first, cursor pagination without gaps or repeats, status filter', async () => {
    const p = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await post({ name: uniqueName('pg'), public_key_hash: publicKeyHashHex(newClientKey().publicKey) }, { key: p.key });
      ids.push((await r.json()).identity.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await get(`/v1/identities?limit=2${cursor ? `&cursor=${cursor}` : ''}`, p.key).then((r) => r.json());
      expect(page.identities.length).toBeLessThanOrEqual(2);
      seen.push(...page.identities.map((i: any) => i.id));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    // by offset: the same order, the total of every identity the filter matches, a cursor to switch to
    const byOffset = await get('/v1/identities?limit=2&offset=2', p.key).then((r) => r.json());
    expect(byOffset.identities.map((i: any) => i.id)).toEqual([...ids].reverse().slice(2, 4));
    expect(byOffset.pagination).toMatchObject({ limit: 2, offset: 2, total: 5, has_more: true });
    const afterOffset = await get(`/v1/identities?limit=2&cursor=${byOffset.pagination.next_cursor}`, p.key).then((r) => r.json());
    expect(afterOffset.identities.map((i: any) => i.id)).toEqual([ids[0]]);
    expect(afterOffset.pagination).toEqual({ limit: 2, offset: null, total: 5, has_more: false, next_cursor: null });
    const past = await get('/v1/identities?offset=99', p.key).then((r) => r.json());
    expect(past.identities).toEqual([]);
    expect(past.pagination).toMatchObject({ offset: 99, total: 5, has_more: false });
    expect((await get(`/v1/identities?offset=1&cursor=${byOffset.pagination.next_cursor}`, p.key)).status).toBe(400);
    // created within one millisecond (parallel POSTs, microseconds apart): a page ending inside that millisecond
    // must not make the next page skip the rest of it
    for (const [i, id] of ids.entries()) {
      await app.db
        .update(identities)
        .set({ createdAt: sql`${`2026-01-01T00:00:00.123${i + 1}00Z`}::timestamptz` })
        .where(eq(identities.id, id));
    }
    const sameMs: string[] = [];
    cursor = null;
    do {
      const page: any = await get(`/v1/identities?limit=2${cursor ? `&cursor=${cursor}` : ''}`, p.key).then((r) => r.json());
      sameMs.push(...page.identities.map((i: any) => i.id));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    expect([...sameMs].sort()).toEqual([...ids].sort());
    await app.call(`/v1/identity/${ids[0]}`, { method: 'DELETE', key: p.key });
    const retired = await get('/v1/identities?status=retired', p.key).then((r) => r.json());
    expect(retired.identities.map((i: any) => i.id)).toEqual([ids[0]]);
    const live = await get('/v1/identities', p.key).then((r) => r.json());
    expect(live.identities.map((i: any) => i.id)).not.toContain(ids[0]);
    expect((await get('/v1/identities?cursor=garbage', p.key)).status).toBe(400);
    expect((await get('/v1/identities?status=bogus', p.key)).status).toBe(400);
  });

  it('GET /v1/chains lists the registry with contract addresses, verified on chain; /v1/chains/{id} by name or id; no key needed', async () => {
    const all = await (await app.call('/v1/chains')).json();
    expect(all.chains.map((c: any) => c.id)).toEqual(['ethereum-sepolia', 'polygon-amoy']);
    expect(all.chains[1]).toMatchObject({ id: 'polygon-amoy', name: 'polygon-amoy', chainId: 80002, evm_chain_id: 80002, family: 'evm' });
    expect(all.chains[0].contracts.account_factory).toEqual({ address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/), verified: true });
    expect(all.chains[0].contracts.proof_anchor.verified).toBe(true);
    expect(all.chains[0].rpcUrl).toBeUndefined();
    expect((await get('/v1/chains/80002').then((r) => r.json())).chain.name).toBe('polygon-amoy');
    expect((await get('/v1/chains/nope')).status).toBe(404);
  });

  it('GET /v1/portfolio: live credits and balances per chain; a chain that does not answer is a per-chain error', async () => {
    const p = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
    const r = await post(
      { name: uniqueName('pf'), public_key: newClientKey().publicKey, chains: ['ethereum-sepolia', 'polygon-amoy'], credits: 7 },
      { key: p.key },
    );
    const id = (await r.json()).identity.id;
    await pollIdentity({ ...app, key: p }, id, (b) => b.status === 'active');
    const pf = await get('/v1/portfolio', p.key).then((x) => x.json());
    expect(pf.total_identities).toBe(1);
    expect(pf.total_chains).toBe(2);
    expect(pf.totals).toEqual({ identities: 1, chains: 2 });
    expect(pf.identities[0]).toMatchObject({ id, credit_balance: 7 });
    for (const c of pf.identities[0].chains) {
      expect(c).toMatchObject({ chain_id: c.chain, deployed: true, balance_wei: '0', balance: '0' });
      expect(c.evm_chain_id).toBe(c.chain === 'polygon-amoy' ? 80002 : 11155111);
      expect(c.balances).toBeUndefined();
    }
    expect(pf.pagination).toEqual({ limit: 50, offset: 0, total: 1, has_more: false, next_cursor: null });

    // include=balances: the native balance as a list entry, in base units; an unknown include is a 400
    const withBalances = await get(`/v1/portfolio?identity=${id}&include=balances`, p.key).then((x) => x.json());
    const amoy = withBalances.identities[0].chains.find((c: any) => c.chain === 'polygon-amoy');
    expect(amoy.balances).toEqual([{ symbol: 'POL', decimals: 18, native: true, amount: '0' }]);
    const badInclude = await get('/v1/portfolio?include=governance', p.key);
    expect(badInclude.status).toBe(400);
    expect((await badInclude.json()).details.field).toBe('include');

    // the live credits of GET /v1/identity/{id}: read from the ledger, not the value recorded at provisioning
    const pageUrl = (await get(`/v1/identity/${id}`, p.key).then((x) => x.json())).key_page_url;
    await app.db.update(identities).set({ creditBalance: 1n }).where(eq(identities.id, id));
    const one = await get(`/v1/identity/${id}`, p.key).then((x) => x.json());
    expect(one).toMatchObject({ credit_balance: 7, credit_balance_stale: false, key_page_url: pageUrl });
    // the list shows the recorded value, marked stale
    const listed = (await get('/v1/identities', p.key).then((x) => x.json())).identities.find((i: any) => i.id === id);
    expect(listed).toMatchObject({ credit_balance: 1, credit_balance_stale: true });

    // paged like /v1/identities, newest first (it was one answer of at most 500, silently cut)
    const second = await post({ name: uniqueName('pf'), public_key: newClientKey().publicKey }, { key: p.key });
    const secondId = (await second.json()).identity.id;
    const first = await get('/v1/portfolio?limit=1', p.key).then((x) => x.json());
    expect(first.identities.map((e: any) => e.id)).toEqual([secondId]);
    expect(first.pagination.has_more).toBe(true);
    // totals cover every identity, not the page
    expect(first.totals).toEqual({ identities: 2, chains: 2 });
    expect(first.total_identities).toBe(2);
    const next = await get(`/v1/portfolio?limit=1&cursor=${first.pagination.next_cursor}`, p.key).then((x) => x.json());
    expect(next.identities.map((e: any) => e.id)).toEqual([id]);
    expect(next.pagination).toEqual({ limit: 1, offset: null, total: 2, has_more: false, next_cursor: null });
    expect((await get('/v1/portfolio?limit=1&offset=1', p.key).then((x) => x.json())).identities.map((e: any) => e.id)).toEqual([id]);

    // same database, polygon-amoy pointing at a dead port: that chain errors, the rest answers
    const broken = createApp({
      ...app.deps,
      config: { ...app.config, chains: app.config.chains.map((c) => (c.name === 'polygon-amoy' ? { ...c, rpcUrl: 'http://127.0.0.1:9' } : c)) },
    });
    const res = await broken.request(`/v1/portfolio?identity=${id}&include=balances`, { headers: { 'X-API-Key': p.key } });
    expect(res.status).toBe(200);
    const body = await res.json();
    const byChain = Object.fromEntries(body.identities[0].chains.map((c: any) => [c.chain, c]));
    expect(byChain['ethereum-sepolia'].balance_wei).toBe('0');
    expect(byChain['polygon-amoy'].balance_wei).toBeNull();
    expect(byChain['polygon-amoy'].balances).toEqual([]);
    expect(byChain['polygon-amoy'].error).toBeTruthy();

    // the ledger not answering: GET /v1/identity/{id} answers the recorded credits, marked stale, and does not fail
    const noLedger = createApp({ ...app.deps, ledger: { ...app.deps.ledger, queryKeyPage: () => new Promise(() => {}) } });
    const stale = await noLedger.request(`/v1/identity/${id}`, { headers: { 'X-API-Key': p.key } });
    expect(stale.status).toBe(200);
    expect(await stale.json()).toMatchObject({ credit_balance: 1, credit_balance_stale: true });
  });
});

async function org() {
  const [o] = await app.db.select().from(organizations).where(eq(organizations.id, app.key.orgId));
  return o!;
}

async function waitFor(fn: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
