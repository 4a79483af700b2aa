/**
 * Provider signing on the devnet (7 validators): an identity whose key the gateway generated and holds completes a
 * contract call and a governance operation with no client signature; its mnemonic is retrievable once, then 404, and
 * expires, and reproduces the key on the page; the policy refuses a prepare outside it (403 naming the rule) and its
 * 24-hour limit holds exactly under 10 concurrent prepares; a rotated KEK still opens the key; switching to external
 * destroys the held key. Throughout, the private key (hex) and the mnemonic appear in no log line, no API answer
 * (the one retrieval aside), no Temporal history or payload of the run, and not in the database.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { eq } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import { parseEther, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerActivityDeps } from '../../src/activities/worker-deps.js';
import { createProviderActivities } from '../../src/activities/provider.js';
import { createChainClients, type ChainWriter } from '../../src/chain/clients.js';
import { providerKeys } from '../../src/db/schema.js';
import { newKekEntry, parseKekList, privateKeyOfMnemonic, publicKeyOf } from '../../src/identity/provider-keys.js';
import { createLogger } from '../../src/log.js';
import { ANVIL_KEYS } from '../chain/fixture.js';
import { dbKinds, startTestWorker } from '../support/env.js';
import { createTestOrgAndKey, startTestApp } from '../support/platform.js';
import { arg, deployTestTarget } from '../transaction/support.js';
import { testTargetLeg } from '../support/test-target.js';
import { newClientKey, startIdentityDevnet, uniqueName, type IdentityDevnet } from './devnet.js';

type Json = any;
const SEPOLIA = { name: 'ethereum-sepolia', chainId: 11155111 } as const;
const AMOY = { name: 'polygon-amoy', chainId: 80002 } as const;
const KEK1 = newKekEntry('kek-1');
const KEK2 = newKekEntry('kek-2');
const TTL_SECONDS = 60;

describe.each(dbKinds())('provider signing (devnet, %s)', (kind) => {
  let dn: IdentityDevnet;
  let app: Awaited<ReturnType<typeof startTestApp>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let writer: ChainWriter;
  let target: Address;
  let plain: string; // read/write key of the organization
  let manager: string; // read/write/provider:manage key of the same organization
  const logLines: string[] = [];
  const answers: string[] = [];
  const recipient = `0x${randomBytes(20).toString('hex')}` as Address;
  const id: { id: string; adi: string; pageUrl: string; account: Address; publicKey: string } = {} as never;
  const secrets: { mnemonic: string; privateKeyHex: string; token: string } = { mnemonic: '', privateKeyHex: '', token: '' };
  /** a client key the governance test adds to the page (a second seat) */
  let extra: ReturnType<typeof newClientKey>;

  async function call(method: string, path: string, body?: unknown, key = plain) {
    const res = await app.call(path, { method, key, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!path.includes('/mnemonic/')) answers.push(text);
    let json: Json = text;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, body: json };
  }

  async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out: ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  const waitIntent = (intentId: string) =>
    until(`intent ${intentId}`, async () => {
      const r = await call('GET', `/v1/transaction/${intentId}`);
      return ['completed', 'failed', 'expired'].includes(r.body.status) ? r.body : undefined;
    });

  const createProvider = async (chains: string[]) => {
    const r = await call('POST', '/v1/identity', { name: uniqueName('prv'), signing_mode: 'provider', chains, credits: 1000 });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    return r.body;
  };

  beforeAll(async () => {
    dn = await startIdentityDevnet({ validators: true });
    const logger = createLogger('debug', { process: 'test' }, (l) => logLines.push(l));
    app = await startTestApp(kind, {
      env: { ...dn.env, PROVIDER_KEKS: KEK1, MNEMONIC_RETRIEVAL_TTL_SECONDS: String(TTL_SECONDS) },
      logger,
    });
    const k = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
    plain = k.key;
    manager = (await createTestOrgAndKey(app.db, { orgId: k.orgId, rateLimitRpm: 100_000, permissions: ['read', 'write', 'provider:manage'] })).key;
    worker = await startTestWorker(app.config, { db: app.db }, { ...workerActivityDeps(app.config), logger }, { shutdownGraceTime: '1s' });
    writer = createChainClients({ rpcUrl: dn.anvils[0]!.rpcUrl, chainId: SEPOLIA.chainId, privateKey: ANVIL_KEYS[1], pollingIntervalMs: 25 });
    target = await deployTestTarget(writer);
  }, 240_000);

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await dn?.stop();
  });

  it('creates a provider identity: 202 with a one-shot mnemonic URL; the mnemonic reproduces the key on the page', async () => {
    const created = await createProvider([SEPOLIA.name, AMOY.name]);
    expect(created.signing_mode).toBe('provider');
    expect(created.can_sign).toBe(true);
    expect(created.public_key).toMatch(/^[0-9a-f]{64}$/);
    expect(created.mnemonic_retrieval.url).toBe(`/v1/identity/${created.id}/mnemonic/${created.mnemonic_retrieval.url.split('/').pop()}`);
    expect(Date.parse(created.mnemonic_retrieval.expires_at) - app.clock.ms).toBe(TTL_SECONDS * 1000);
    Object.assign(id, { id: created.id, adi: created.adi_url, pageUrl: created.key_page_url, publicKey: created.public_key });

    const first = await call('GET', created.mnemonic_retrieval.url);
    expect(first.status).toBe(200);
    expect(first.body.mnemonic.split(' ')).toHaveLength(24);
    expect(first.body.warning).toMatch(/only copy/);
    secrets.mnemonic = first.body.mnemonic;
    secrets.token = created.mnemonic_retrieval.url.split('/').pop();
    const priv = privateKeyOfMnemonic(first.body.mnemonic);
    secrets.privateKeyHex = Buffer.from(priv).toString('hex');
    expect(publicKeyOf(priv)).toBe(created.public_key);

    const again = await call('GET', created.mnemonic_retrieval.url);
    const unknown = await call('GET', `/v1/identity/${created.id}/mnemonic/${randomBytes(32).toString('base64url')}`);
    expect(again.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(again.body).toEqual(unknown.body);

    const active = await until('active', async () => {
      const r = await call('GET', `/v1/identity/${id.id}`);
      return r.body.status === 'creating' ? undefined : r.body;
    });
    expect(active.status).toBe('active');
    expect(active.signing_mode).toBe('provider');
    id.account = active.chain_accounts[0].address;
    const page = await dn.ledger.queryKeyPage(id.pageUrl);
    const onPage = page.keys.map((k) => k.publicKeyHash?.toLowerCase());
    expect(onPage).toContain(
      createHash('sha256')
        .update(Buffer.from(publicKeyOf(priv), 'hex'))
        .digest('hex'),
    );
    const h = await writer.wallet.sendTransaction({ to: id.account, value: parseEther('1') });
    await writer.public.waitForTransactionReceipt({ hash: h });
  }, 180_000);

  it('the mnemonic URL expires (404 after expires_at, before any retrieval)', async () => {
    const created = await createProvider([]);
    const saved = app.clock.ms;
    app.clock.ms = saved + TTL_SECONDS * 1000 + 1;
    try {
      const r = await call('GET', created.mnemonic_retrieval.url);
      expect(r.status).toBe(404);
      expect(r.body.code ?? r.body.error?.code ?? JSON.stringify(r.body)).toMatch(/MNEMONIC_NOT_FOUND/);
    } finally {
      app.clock.ms = saved;
    }
    // spent by expiry: going back in time does not bring it back
    expect((await call('GET', created.mnemonic_retrieval.url)).status).toBe(404);
  });

  const leg = (over: Json = {}, value = '0', t: Address = target, chain: { name: string; chainId: number } = SEPOLIA) =>
    testTargetLeg({ chain, account: id.account, target: t, arg: arg(randomBytes(4).toString('hex')), value, over });
  const prepare = (legs: Json[], key = plain, extra: Json = {}) =>
    call('POST', '/v1/transaction', { identity_id: id.id, intent: { adiUrl: id.adi, legs }, ...extra }, key);
  const transfer = (wei: string) => ({
    legId: `pay-${randomBytes(3).toString('hex')}`,
    chain: SEPOLIA.name,
    chainId: SEPOLIA.chainId,
    fromAddress: id.account,
    toAddress: recipient,
    amount: wei,
  });

  it('policy: none set signs nothing; PATCH needs provider:manage; outside the policy is 403 naming the rule', async () => {
    const none = await prepare([leg()]);
    expect(none.status).toBe(403);
    expect(none.body.details.rule).toBe('provider_policy');
    const policy = { allowed_chains: [SEPOLIA.name], allowed_targets: [target, recipient], max_value_per_leg: '1000', max_value_per_24h: '3500' };
    const unscoped = await call('PATCH', `/v1/identity/${id.id}`, { provider_policy: policy });
    expect(unscoped.status).toBe(403);
    expect(unscoped.body.code ?? unscoped.body.error?.code).toBe('INSUFFICIENT_SCOPE');
    const bad = await call('PATCH', `/v1/identity/${id.id}`, { provider_policy: { ...policy, max_value_per_leg: '-1' } }, manager);
    expect(bad.status).toBe(400);
    const set = await call('PATCH', `/v1/identity/${id.id}`, { provider_policy: policy }, manager);
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.provider_policy).toEqual({ ...policy, allowed_targets: [target.toLowerCase(), recipient.toLowerCase()] });

    const chain = await prepare([{ ...transfer('1'), chain: AMOY.name, chainId: AMOY.chainId }]);
    expect(chain.status).toBe(403);
    expect(chain.body.details.rule).toBe('allowed_chains');
    const other = await prepare([{ ...transfer('1'), toAddress: `0x${'11'.repeat(20)}` }]);
    expect(other.status).toBe(403);
    expect(other.body.details.rule).toBe('allowed_targets');
    const big = await prepare([transfer('1001')]);
    expect(big.status).toBe(403);
    expect(big.body.details.rule).toBe('max_value_per_leg');
    expect(big.body.message ?? big.body.error?.message ?? JSON.stringify(big.body)).toMatch(/max_value_per_leg/);
    const nominated = await prepare([leg()], plain, { signer_public_key: newClientKey().publicKey });
    expect(nominated.status).toBe(400);
  });

  it('a contract call inside the policy completes with no client signature (submitted in the prepare answer)', async () => {
    const p = await prepare([leg()]);
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    expect(p.body).toMatchObject({ status: 'submitted', signing_mode: 'provider', submit_url: null });
    expect(p.body.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    const done = await waitIntent(p.body.intent_id);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.signing_mode).toBe('provider');
  }, 180_000);

  it('the rolling 24-hour limit holds exactly under 10 concurrent prepares', async () => {
    // 3500 per 24 h, 1000 each: exactly 3 of 10 pass, whatever the interleaving
    const results = await Promise.all(Array.from({ length: 10 }, () => prepare([transfer('1000')])));
    const passed = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 403);
    expect(passed.map((r) => r.body.status)).toEqual(['submitted', 'submitted', 'submitted']);
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(r.body.details.rule).toBe('max_value_per_24h');
    const [{ total }] = rowsOf(await app.db.execute(sql`select coalesce(sum(value), 0)::text as total from provider_spends where identity_id = ${id.id}`)) as {
      total: string;
    }[];
    expect(total).toBe('3000');
    // the three were signed and submitted by the gateway (their proof cycles run on; completion is the contract call's test)
    for (const r of passed) expect((await call('GET', `/v1/transaction/${r.body.intent_id}`)).body.status).not.toBe('signing_required');
  }, 300_000);

  it('a rotated KEK still opens the key (and rewraps it under the current one)', async () => {
    const [row] = await app.db.select().from(providerKeys).where(eq(providerKeys.identityId, id.id));
    expect(row!.kekId).toBe('kek-1');
    const intentId = rowsOf(await app.db.execute(sql`select id from intents where identity_id = ${id.id} and signing_mode = 'provider' limit 1`))[0] as {
      id: string;
    };
    const rotated = createProviderActivities({ db: app.db, keks: parseKekList(`${KEK2},${KEK1}`) });
    const out = await rotated.providerSign({ kind: 'intent', id: intentId.id });
    expect(out.publicKey).toBe(id.publicKey);
    const [after] = await app.db.select().from(providerKeys).where(eq(providerKeys.identityId, id.id));
    expect(after!.kekId).toBe('kek-2');
    const only2 = createProviderActivities({ db: app.db, keks: parseKekList(KEK2) });
    const again = await only2.providerSign({ kind: 'intent', id: intentId.id });
    const intent = rowsOf(await app.db.execute(sql`select prepared from intents where id = ${intentId.id}`))[0] as { prepared: Json };
    const hash = (typeof intent.prepared === 'string' ? JSON.parse(intent.prepared) : intent.prepared).hashToSign;
    expect(ed25519.verify(Buffer.from(again.signature, 'hex'), Buffer.from(hash, 'hex'), Buffer.from(id.publicKey, 'hex'))).toBe(true);
    // the worker (configured with kek-1 only) can no longer open it: it is now kek-2's; rotate the app's config too
    await expect(createProviderActivities({ db: app.db, keks: parseKekList(KEK1) }).providerSign({ kind: 'intent', id: intentId.id })).rejects.toThrow(/kek-2/);
  });

  it('a prepare the gateway cannot sign (503) closes its intent and gives its 24-hour spend back', async () => {
    // the previous test rewrapped the key under kek-2; the worker has kek-1 only, so it cannot sign
    const spent = async () =>
      (
        rowsOf(await app.db.execute(sql`select coalesce(sum(value), 0)::text as total from provider_spends where identity_id = ${id.id}`))[0] as {
          total: string;
        }
      ).total;
    const before = await spent();
    const r = await prepare([transfer('400')]);
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(r.body.code).toBe('PROVIDER_SIGNING_FAILED');
    const intentId = r.body.details.intent_id;
    const closed = await call('GET', `/v1/transaction/${intentId}`);
    expect(closed.body.status).toBe('failed');
    expect(closed.body.error_message).toMatch(/could not sign/);
    expect(await spent()).toBe(before);
  }, 120_000);

  it('a governance operation signed by the held key executes with no client signature (provider:manage)', async () => {
    // the previous test rewrapped the key under kek-2: the running worker gets both KEKs
    await worker.stop();
    const keks = parseKekList(`${KEK2},${KEK1}`);
    worker = await startTestWorker(
      app.config,
      { db: app.db },
      { ...workerActivityDeps(app.config), providerKeks: keks, logger: createLogger('debug', {}, (l) => logLines.push(l)) },
      { shutdownGraceTime: '1s' },
    );
    extra = newClientKey();
    const hash = createHash('sha256').update(Buffer.from(extra.publicKey, 'hex')).digest('hex');
    const body = { identity: id.id, operations: [{ type: 'add_key', public_key_hash: hash }] };
    const unscoped = await call('POST', '/v1/governance', body);
    expect(unscoped.status).toBe(403);
    const r = await call('POST', '/v1/governance', body, manager);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.signing_mode).toBe('provider');
    const op = await until('governance executed', async () => {
      const g = await call('GET', `/v1/governance/${r.body.governance_op_id}`);
      return ['executed', 'rejected', 'expired', 'failed'].includes(g.body.status) ? g.body : undefined;
    });
    expect(op.status).toBe('executed');
    const page = await dn.ledger.queryKeyPage(id.pageUrl);
    expect(page.keys.map((k) => k.publicKeyHash?.toLowerCase())).toContain(hash);
  }, 120_000);

  const governanceEnd = (opId: string) =>
    until(`governance ${opId}`, async () => {
      const g = await call('GET', `/v1/governance/${opId}`);
      return ['executed', 'rejected', 'expired', 'failed'].includes(g.body.status) ? g.body : undefined;
    });

  it('POST /v1/sign co-signs with the held key for provider:manage (a 2-of-2 page: a client seat proposes, the gateway approves)', async () => {
    const two = await call('POST', '/v1/governance', { identity: id.id, operations: [{ type: 'set_threshold', threshold: 2 }] }, manager);
    expect(two.status, JSON.stringify(two.body)).toBe(201);
    expect((await governanceEnd(two.body.governance_op_id)).status).toBe('executed');
    await new Promise((r) => setTimeout(r, 2500)); // the API's key page reads are cached for 2 s
    // the client seat proposes to go back to 1-of-2: it needs the held key's signature too
    const back = await call('POST', '/v1/governance', {
      identity: id.id,
      operations: [{ type: 'set_threshold', threshold: 1 }],
      signer_public_key: extra.publicKey,
    });
    expect(back.status, JSON.stringify(back.body)).toBe(201);
    expect(back.body.signing_mode).toBe('external');
    const sig = Buffer.from(ed25519.sign(Buffer.from(back.body.signing_data.hash_to_sign, 'hex'), extra.secretKey)).toString('hex');
    const submitted = await call('POST', `/v1/governance/${back.body.governance_op_id}/signature`, { signature: sig, public_key: extra.publicKey });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    expect(submitted.body.is_ready).toBe(false);
    const cosign = { type: 'pending_tx', target_id: back.body.tx_hash, identity: id.id };
    expect((await call('POST', '/v1/sign', cosign)).status).toBe(403);
    const signed = await call('POST', '/v1/sign', cosign, manager);
    expect(signed.status, JSON.stringify(signed.body)).toBe(201);
    expect(signed.body).toMatchObject({ signing_mode: 'provider', status: 'submitted', submit_url: null });
    expect((await governanceEnd(back.body.governance_op_id)).status).toBe('executed');
    expect((await dn.ledger.queryKeyPage(id.pageUrl)).acceptThreshold).toBe(1);
    await new Promise((r) => setTimeout(r, 2500));
  }, 120_000);

  it('switching to external (PATCH public_key) replaces the key on the page, then destroys the held key', async () => {
    const next = newClientKey();
    const r = await call('PATCH', `/v1/identity/${id.id}`, { public_key: next.publicKey }, manager);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.key_switch.governance_op_id).toBeTruthy();
    const switched = await until('external', async () => {
      const g = await call('GET', `/v1/identity/${id.id}`);
      return g.body.signing_mode === 'external' ? g.body : undefined;
    });
    expect(switched.public_key).toBe(next.publicKey);
    const [row] = await app.db.select().from(providerKeys).where(eq(providerKeys.identityId, id.id));
    expect(row!.destroyedAt).not.toBeNull();
    expect(row!.sealedKey).toBeNull();
    expect(row!.wrappedDataKey).toBeNull();
    const page = await dn.ledger.queryKeyPage(id.pageUrl);
    const hashes = page.keys.map((k) => k.publicKeyHash?.toLowerCase());
    expect(hashes).toContain(createHash('sha256').update(Buffer.from(next.publicKey, 'hex')).digest('hex'));
    expect(hashes).not.toContain(createHash('sha256').update(Buffer.from(id.publicKey, 'hex')).digest('hex'));
  }, 120_000);

  it('the key (hex) and the mnemonic are in no log line, API answer, Temporal history or payload, nor in the database', async () => {
    expect(secrets.privateKeyHex).toMatch(/^[0-9a-f]{64}$/);
    const needles = [secrets.privateKeyHex, secrets.mnemonic, secrets.mnemonic.split(' ').slice(0, 6).join(' ')];
    const histories: string[] = [];
    const client = app.deps.temporal;
    for await (const wf of client.workflow.list({
      query: `OrgId = '${rowsOf(await app.db.execute(sql`select org_id from identities where id = ${id.id}`))[0]!.org_id}'`,
    })) {
      histories.push(historyText(await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()));
    }
    expect(histories.length).toBeGreaterThan(5);
    expect(histories.some((h) => h.includes('providerSign'))).toBe(true);
    const dump = JSON.stringify(
      rowsOf(
        await app.db.execute(
          sql`select (select json_agg(p) from provider_keys p) as k, (select json_agg(m) from mnemonic_retrievals m) as m, (select json_agg(i) from idempotency_keys i) as i`,
        ),
      ),
    );
    expect(logLines.length).toBeGreaterThan(10);
    // the retrieval token is a bearer secret while it is live: the request log shows its path redacted
    expect(secrets.token.length).toBeGreaterThan(20);
    expect(logLines.filter((l) => l.includes(secrets.token))).toEqual([]);
    expect(logLines.some((l) => l.includes('/mnemonic/[redacted]'))).toBe(true);
    for (const needle of needles) {
      expect(logLines.filter((l) => l.includes(needle))).toEqual([]);
      expect(answers.filter((a) => a.includes(needle))).toEqual([]);
      expect(histories.filter((h) => h.includes(needle))).toEqual([]);
      expect(dump.includes(needle)).toBe(false);
    }
  });
});

/** The rows of a raw query on either driver. */
const rowsOf = (r: unknown): any[] => (r as { rows: any[] }).rows;

/** Everything a history holds as text: its JSON, and every payload's bytes decoded (base64 and UTF-8). */
function historyText(history: unknown): string {
  const parts: string[] = [];
  const walk = (v: unknown) => {
    if (v instanceof Uint8Array) {
      parts.push(Buffer.from(v).toString('utf8'), Buffer.from(v).toString('hex'));
      return;
    }
    if (typeof v === 'string') parts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(history);
  return parts.join('\n');
}
