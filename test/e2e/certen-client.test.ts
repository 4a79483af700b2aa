/**
 * A Certen client's documented flow against our devnet, over HTTP as the SDK speaks it (an access token in
 * `Authorization: Bearer`), written from the flow, not from the SDK's code: create an identity and wait for it by
 * reading `id` at the top level; list the chains without a key and map the identity's `chain_accounts[].chain_id`
 * to one; prepare, sign and submit a call there; page through `/v1/transactions` by `offset` to the end; and the
 * self-check routes. Then the API conventions (docs/api-conventions.md) over every answer the flow saw plus every
 * list, event, proof artifact, pending action, governance, webhook and API key answer of the same organization.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { parseEther, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/net/server.js';
import { answerDeviations } from '../support/conventions.js';
import { createTestOrgAndKey } from '../support/platform.js';
import { startReceiver } from '../support/receiver.js';
import { newClientKey, uniqueName } from '../identity/devnet.js';
import { arg, testTargetLeg } from '../support/test-target.js';
import { AMOY, startCycleBench, type CycleBench, type Json } from '../transaction/support.js';

describe('a Certen client against the devnet', () => {
  let b: CycleBench;
  let server: RunningServer;
  let base: string;
  /** every JSON answer the test saw, for the conventions check */
  const answers: { what: string; body: Json }[] = [];

  const http = async (method: string, path: string, opts: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? b.app.key.key : opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    const body = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
    if (typeof body === 'object') answers.push({ what: `${method} ${path} ${res.status}`, body });
    return { status: res.status, body: body as Json };
  };
  const until = async <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  let registry: Json[];
  let identity: Json;
  const clientKey = newClientKey();
  let intentId: string;
  /** a TestTarget.record call from this identity's own account */
  const ownLeg = (chain: { name: string; chainId: number }, label: string) =>
    testTargetLeg({ chain, account: identity.chain_accounts[0].address, target: b.targets[chain.name]!, arg: arg(label), legId: `certen-${label}` });

  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    b = await startCycleBench();
    server = await listen(b.app.app, '127.0.0.1', 0);
    base = `http://127.0.0.1:${server.port}`;
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await b?.stop();
  });

  it('checks itself: health/ready without a key, me, scopes and errors with the token', async () => {
    const ready = await http('GET', '/v1/health/ready', { token: null });
    expect(ready.status).toBe(200);
    const me = await http('GET', '/v1/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ organization: { id: b.app.key.orgId } });
    expect(me.body.permissions).toEqual(expect.arrayContaining(['read', 'write']));
    const scopes = await http('GET', '/v1/scopes');
    expect(scopes.status).toBe(200);
    expect(scopes.body.scopes.map((s: Json) => s.name)).toEqual(expect.arrayContaining(['read', 'write', 'proof:read', 'admin']));
    const errors = await http('GET', '/v1/errors');
    expect(errors.status).toBe(200);
    expect(errors.body.errors.map((e: Json) => e.code)).toEqual(expect.arrayContaining(['VALIDATION_ERROR', 'RATE_LIMIT_EXCEEDED', 'INTENT_NOT_FOUND']));
  });

  it('lists the chains without a key and finds both with their contract addresses', async () => {
    const list = await http('GET', '/v1/chains', { token: null });
    expect(list.status).toBe(200);
    registry = list.body.chains;
    for (const name of ['ethereum-sepolia', 'polygon-amoy']) {
      const c = registry.find((x) => x.id === name);
      expect(c, name).toBeDefined();
      expect(typeof c.chainId).toBe('number');
      for (const role of ['proof_anchor', 'account_factory']) {
        expect(c.contracts[role].address, `${name} ${role}`).toMatch(/^0x[0-9a-fA-F]{40}$/);
        expect(c.contracts[role].verified, `${name} ${role} has code`).toBe(true);
      }
      const one = await http('GET', `/v1/chains/${name}`, { token: null });
      expect(one.status).toBe(200);
      expect(one.body.chain).toEqual(c);
    }
    expect((await http('GET', `/v1/chains/${'x'.repeat(80)}`, { token: null })).body.code).toBe('CHAIN_NOT_FOUND');
  });

  it('creates an identity and waits for it by reading id at the top level', async () => {
    const created = await http('POST', '/v1/identity', {
      body: { name: uniqueName('certen'), public_key: clientKey.publicKey, chains: ['polygon-amoy'], credits: 500 },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    expect(created.status).toBe(202);
    expect(typeof created.body.id).toBe('string');
    expect(created.body.identity.id).toBe(created.body.id); // the contract's wrapper, the same object
    expect(created.body.status_url).toBe(`/v1/identity/${created.body.id}`);
    identity = await until('the identity to be active', async () => {
      const r = await http('GET', created.body.status_url);
      if (r.body.status === 'failed') throw new Error(`identity failed: ${r.body.error_message}`);
      return r.body.status === 'active' ? r.body : undefined;
    });
    expect(identity.chain_accounts).toHaveLength(1);
  });

  it('prepares, signs and submits a call on the chain named by chain_accounts[].chain_id', async () => {
    const account = identity.chain_accounts[0];
    const chain = registry.find((c) => c.id === account.chain_id);
    expect(chain, `chain_accounts[0].chain_id ${account.chain_id} maps to a chain of the registry`).toBeDefined();
    expect(chain.id).toBe(AMOY.name);
    const w = b.wallets[AMOY.name]!;
    await w.public.waitForTransactionReceipt({ hash: await w.wallet.sendTransaction({ to: account.address as Address, value: parseEther('0.1') }) });
    const leg = ownLeg({ name: chain.id, chainId: chain.chainId }, 'certen');
    const prepared = await http('POST', '/v1/transaction', {
      body: { identity_id: identity.id, intent: { adiUrl: identity.adi_url, legs: [leg] } },
    });
    expect(prepared.status, JSON.stringify(prepared.body)).toBe(201);
    intentId = prepared.body.intent_id;
    const signature = Buffer.from(ed25519.sign(Buffer.from(prepared.body.signing_data.hash_to_sign, 'hex'), clientKey.secretKey)).toString('hex');
    const submitted = await http('POST', prepared.body.submit_url, { body: { signature, public_key: clientKey.publicKey } });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const done = await until('the intent to finish', async () => {
      const r = await http('GET', `/v1/transaction/${intentId}`);
      return ['completed', 'failed', 'expired'].includes(r.body.status) ? r.body : undefined;
    });
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.accum_tx_hash).toBe(done.tx_hash);
    expect(done.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(done.proof_id).toEqual(expect.any(String));
  }, 180_000);

  it('pages through /v1/transactions by offset to the end, each intent once', async () => {
    for (let i = 0; i < 4; i++) {
      const r = await http('POST', '/v1/transaction', {
        body: {
          identity_id: identity.id,
          intent: { adiUrl: identity.adi_url, legs: [ownLeg(AMOY, `page-${i}`)] },
        },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    const seen: string[] = [];
    let total: number | undefined;
    for (let offset = 0, pages = 0; ; pages++) {
      expect(pages, 'paging by offset ends').toBeLessThan(50);
      const page = await http('GET', `/v1/transactions?limit=2&offset=${offset}`);
      expect(page.status).toBe(200);
      total ??= page.body.pagination.total;
      expect(page.body.pagination).toMatchObject({ limit: 2, offset, total });
      seen.push(...page.body.transactions.map((t: Json) => t.intent_id ?? t.id));
      if (!page.body.pagination.has_more) break;
      offset += page.body.transactions.length;
    }
    expect(seen.length).toBe(total);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toContain(intentId);
    const past = await http('GET', `/v1/transactions?limit=2&offset=${total! + 10}`);
    expect(past.body.transactions).toEqual([]);
    expect(past.body.pagination.has_more).toBe(false);
  });

  it('every answer of the organization follows the API conventions', async () => {
    const admin = await createTestOrgAndKey(b.app.db, { orgId: b.app.key.orgId, isAdmin: true, rateLimitRpm: 100_000 });
    const intent = (await http('GET', `/v1/transaction/${intentId}`)).body;
    const reads = [
      `/v1/identity/${identity.id}`,
      '/v1/identities',
      '/v1/portfolio?include=balances',
      '/v1/transactions',
      `/v1/transaction/${intentId}`,
      `/v1/proof/${intent.proof_id}`,
      `/v1/proof/${intent.proof_id}/bundle`,
      `/v1/proof/${intent.proof_id}/custody`,
      `/v1/proof/tx/${intent.tx_hash}`,
      `/v1/proof/tx/${intent.tx_hash}/receipt`,
      '/v1/pending',
      '/v1/events?limit=100',
      '/v1/webhooks/deliveries',
    ];
    for (const p of reads) expect((await http('GET', p)).status, p).toBe(200);
    expect(answers.find((a) => a.what.startsWith('GET /v1/events'))!.body.events.length).toBeGreaterThan(3);
    const newKeyHash = Buffer.from(await crypto.subtle.digest('SHA-256', Buffer.from(newClientKey().publicKey, 'hex'))).toString('hex');
    const gov = await http('POST', '/v1/governance', { body: { identity: identity.adi_url, operations: [{ type: 'add_key', public_key_hash: newKeyHash }] } });
    expect(gov.status, JSON.stringify(gov.body)).toBe(201);
    expect((await http('GET', `/v1/governance/${gov.body.governance_op_id}`)).status).toBe(200);
    const ep = await http('POST', '/v1/webhooks/endpoints', { body: { url: receiver.url('/certen'), event_types: ['transaction.completed'] } });
    expect(ep.status, JSON.stringify(ep.body)).toBe(201);
    expect((await http('GET', '/v1/webhooks/endpoints')).status).toBe(200);
    const key = await http('POST', '/v1/admin/api-keys', { token: admin.key, body: { name: 'certen cli', permissions: ['read'] } });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    expect((await http('GET', '/v1/admin/api-keys', { token: admin.key })).status).toBe(200);

    const problems = answers.flatMap((a) => answerDeviations(a.body).map((p) => `${a.what}: ${p}`));
    expect(problems).toEqual([]);
    expect(answers.length).toBeGreaterThan(25);
  }, 120_000);
});
