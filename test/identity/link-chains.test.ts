/**
 * PATCH /v1/identity/{id} with link_chains: an active identity's abstract account deployed on one more chain at the
 * address it has on its first (checked on the chain itself), idempotent repeats, the refusals (400 naming
 * link_chains, 409 while not active, an empty body), public_key with link_chains, and a link that fails for good —
 * against a devnet made here (ledger-sim, two anvils, worker, app).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { createPublicClient, http, type Address } from 'viem';
import { predictAccountAddress } from '../../src/chain/account.js';
import type { ChainConfig } from '../../src/config.js';
import { events, identities } from '../../src/db/schema.js';
import { ANVIL_DEV_KEY_0, deployDevnetContracts, devValidatorRegistrations } from '../../src/devnet/contracts.js';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import { linkChainWorkflowId } from '../../src/temporal/identities.js';
import { dbKinds } from '../support/env.js';
import { insertTestIdentity } from '../support/platform.js';
import { newClientKey, pollIdentity, startIdentityApp, startIdentityDevnet, startWorker, uniqueName, type IdentityDevnet } from './devnet.js';

type App = Awaited<ReturnType<typeof startIdentityApp>>;

let dn: IdentityDevnet;
let app: App;
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

const chainsOf = () => JSON.parse(dn.env.CHAINS!) as (ChainConfig & { contracts?: { proofAnchor: Address; accountFactory: Address } })[];

const patch = (a: App, id: string, body: unknown) => a.call(`/v1/identity/${id}`, { method: 'PATCH', key: a.key.key, body: JSON.stringify(body) });

/** An identity created on `chains` and polled until active. */
async function activeIdentity(a: App, body: Record<string, unknown>) {
  const res = await a.call('/v1/identity', { method: 'POST', key: a.key.key, body: JSON.stringify({ name: uniqueName('link'), ...body }) });
  expect(res.status).toBe(202);
  const done = await pollIdentity(a, (await res.json()).identity.id, (b) => b.status !== 'creating');
  expect(done.status).toBe('active');
  return done;
}

async function eventsOf(a: App, id: string, type: string) {
  return a.deps.database.db
    .select()
    .from(events)
    .where(and(eq(events.resourceId, id), eq(events.type, type)));
}

async function codeAt(chain: string, address: string): Promise<string | undefined> {
  const ch = chainsOf().find((c) => c.name === chain)!;
  return createPublicClient({ transport: http(ch.rpcUrl) }).getCode({ address: address as Address });
}

describe('linking a chain to an active identity', () => {
  it('deploys the account on the new chain at the same address; concurrent and repeated requests start it once', async () => {
    const first = await activeIdentity(app, { public_key: newClientKey().publicKey, chains: ['ethereum-sepolia'] });
    expect(first.chain_accounts.map((a: any) => a.chain)).toEqual(['ethereum-sepolia']);
    expect(first.linking_chains).toEqual([]);
    const address = first.chain_accounts[0].address;
    expect(await codeAt('polygon-amoy', address)).toBeUndefined();

    // two requests at once: both accepted, one workflow, one deployment
    const [r1, r2] = await Promise.all([patch(app, first.id, { link_chains: ['polygon-amoy'] }), patch(app, first.id, { link_chains: ['polygon-amoy'] })]);
    expect([r1.status, r2.status]).toEqual([202, 202]);
    const accepted = await r1.json();
    expect(accepted.status).toBe('active');
    expect(accepted.requested_chains).toEqual(['ethereum-sepolia', 'polygon-amoy']);
    // the deployment shows: linking until its account is recorded
    expect([...accepted.linking_chains, ...accepted.chain_accounts.map((a: any) => a.chain)].sort()).toEqual(['ethereum-sepolia', 'polygon-amoy']);

    const linked = await pollIdentity(app, first.id, (b) => b.chain_accounts.length === 2);
    expect(linked.status).toBe('active');
    expect(linked.linking_chains).toEqual([]);
    const amoy = linked.chain_accounts.find((a: any) => a.chain === 'polygon-amoy');
    expect(amoy).toMatchObject({ address, evm_chain_id: 80002 });
    expect(amoy.deployment_tx).toMatch(/^0x[0-9a-f]{64}$/);
    // on the chain: code at the address, which the factory's CREATE2 formula gives for this ADI
    const code = await codeAt('polygon-amoy', address);
    expect(code?.length).toBeGreaterThan(2);
    expect(address).toBe(predictAccountAddress({ ...chainsOf().find((c) => c.name === 'polygon-amoy')!.contracts!, adiUrl: linked.adi_url }));
    // the event is written after the account is recorded, as the workflow's last step
    const handle = app.deps.temporal.workflow.getHandle(linkChainWorkflowId(first.id, 'polygon-amoy'));
    await handle.result();
    const desc = await handle.describe();
    expect(desc.status.name).toBe('COMPLETED');
    const evs = await eventsOf(app, first.id, 'identity.chain_linked');
    expect(evs).toHaveLength(1);
    expect((evs[0]!.data as any).chain_account).toMatchObject({ chain: 'polygon-amoy', evm_chain_id: 80002, address });

    // already linked: 200, nothing started, nothing recorded
    for (const body of [{ link_chains: ['polygon-amoy'] }, { link_chains: ['ethereum-sepolia', 'polygon-amoy'] }]) {
      const again = await patch(app, first.id, body);
      expect(again.status).toBe(200);
      const b = await again.json();
      expect(b.linking_chains).toEqual([]);
      expect(b.requested_chains).toEqual(['ethereum-sepolia', 'polygon-amoy']);
    }
    const after = await app.deps.temporal.workflow.getHandle(linkChainWorkflowId(first.id, 'polygon-amoy')).describe();
    expect(after.runId).toBe(desc.runId);
    expect(await eventsOf(app, first.id, 'identity.chain_linked')).toHaveLength(1);
  });

  it('public_key and link_chains together: the key is supplied and the chain linked; a wrong key changes nothing', async () => {
    const k = newClientKey();
    const hashOnly = await activeIdentity(app, { public_key_hash: publicKeyHashHex(k.publicKey), chains: ['polygon-amoy'] });
    expect(hashOnly.can_sign).toBe(false);

    const wrong = await patch(app, hashOnly.id, { public_key: newClientKey().publicKey, link_chains: ['ethereum-sepolia'] });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).code).toBe('PUBLIC_KEY_HASH_MISMATCH');
    const [row] = await app.db.select().from(identities).where(eq(identities.id, hashOnly.id));
    expect(row!.requestedChains).toEqual(['polygon-amoy']);

    const res = await patch(app, hashOnly.id, { public_key: k.publicKey, link_chains: ['ethereum-sepolia'] });
    expect(res.status).toBe(202);
    const b = await res.json();
    expect(b.can_sign).toBe(true);
    expect(b.public_key).toBe(k.publicKey);
    const linked = await pollIdentity(app, hashOnly.id, (x) => x.chain_accounts.length === 2);
    const [a1, a2] = linked.chain_accounts;
    expect(a1.address).toBe(a2.address);
    expect((await codeAt('ethereum-sepolia', a1.address))!.length).toBeGreaterThan(2);
  });
});

describe('refusals', () => {
  it('empty body, empty or unknown link_chains: 400 naming the fields; nothing changes', async () => {
    const one = await activeIdentity(app, { public_key: newClientKey().publicKey, chains: ['ethereum-sepolia'] });
    const empty = await patch(app, one.id, {});
    expect(empty.status).toBe(400);
    const e = await empty.json();
    expect(e.code).toBe('VALIDATION_ERROR');
    expect(e.details).toMatchObject({ field: 'body', accepted_fields: ['public_key', 'link_chains', 'provider_policy'] });
    expect(e.error).toMatch(/public_key/);
    expect(e.error).toMatch(/link_chains/);

    const none = await patch(app, one.id, { link_chains: [] });
    expect(none.status).toBe(400);
    expect((await none.json()).details.field).toBe('link_chains');

    const unknown = await patch(app, one.id, { link_chains: ['polygon-amoy', 'solana-mainnet'] });
    expect(unknown.status).toBe(400);
    const u = await unknown.json();
    expect(u).toMatchObject({ code: 'UNKNOWN_CHAIN', details: { field: 'link_chains', chain: 'solana-mainnet' } });
    expect(u.error).toMatch(/^link_chains: /);

    const notArray = await patch(app, one.id, { link_chains: 'polygon-amoy' });
    expect(notArray.status).toBe(400);

    const read = await (await app.call(`/v1/identity/${one.id}`, { key: app.key.key })).json();
    expect(read.requested_chains).toEqual(['ethereum-sepolia']);
    expect(read.linking_chains).toEqual([]);
  });

  it('an identity that is not active: 409 IDENTITY_NOT_ACTIVE (creating, retired)', async () => {
    const res = await app.call('/v1/identity', {
      method: 'POST',
      key: app.key.key,
      body: JSON.stringify({ name: uniqueName('busy'), public_key: newClientKey().publicKey, chains: ['ethereum-sepolia'] }),
    });
    const id = (await res.json()).identity.id;
    const creating = await patch(app, id, { link_chains: ['polygon-amoy'] });
    expect(creating.status).toBe(409);
    expect(await creating.json()).toMatchObject({ code: 'IDENTITY_NOT_ACTIVE', details: { field: 'link_chains', status: 'creating' } });
    await pollIdentity(app, id, (b) => b.status === 'active');

    expect((await app.call(`/v1/identity/${id}`, { method: 'DELETE', key: app.key.key })).status).toBe(200);
    const retired = await patch(app, id, { link_chains: ['polygon-amoy'] });
    expect(retired.status).toBe(409);
    expect(await retired.json()).toMatchObject({ code: 'IDENTITY_NOT_ACTIVE', details: { status: 'retired' } });
    const [row] = await app.db.select().from(identities).where(eq(identities.id, id));
    expect(row!.requestedChains).toEqual(['ethereum-sepolia']);
  });

  it('a chain without system contracts: 400 CHAIN_UNAVAILABLE naming link_chains', async () => {
    const bare = { name: 'base-sepolia', chainId: 84532, rpcUrl: chainsOf()[0]!.rpcUrl, confirmations: 1 };
    const apiOnly = await startIdentityApp(dn, kind, { env: { CHAINS: JSON.stringify([...chainsOf(), bare]) } });
    try {
      const { id } = await insertTestIdentity(apiOnly.db, apiOnly.key.orgId, 'bare', apiOnly.config.adiSuffix);
      const res = await patch(apiOnly, id, { link_chains: ['base-sepolia'] });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'CHAIN_UNAVAILABLE', details: { field: 'link_chains', chain: 'base-sepolia' } });
    } finally {
      await apiOnly.close();
    }
  });
});

describe('a link that fails for good', () => {
  it('a chain whose factory would give another address: nothing deployed, the chain leaves requested_chains with the event; a new request tries again', async () => {
    // polygon-amoy configured with a second system deployment (another validator set: other CREATE2 addresses)
    const chains = chainsOf();
    const amoy = chains.find((c) => c.name === 'polygon-amoy')!;
    const other = await deployDevnetContracts({ chains: [amoy], deployerKey: ANVIL_DEV_KEY_0, validators: devValidatorRegistrations(7, 'link-other-set') });
    const mixed = chains.map((c) => (c.name === 'polygon-amoy' ? other.chains[0]! : c));
    const mixedApp = await startIdentityApp(dn, kind, { env: { CHAINS: JSON.stringify(mixed) } });
    const mixedWorker = await startWorker(mixedApp.config, mixedApp.db);
    try {
      const one = await activeIdentity(mixedApp, { public_key: newClientKey().publicKey, chains: ['ethereum-sepolia'] });
      const address = one.chain_accounts[0].address;
      const elsewhere = predictAccountAddress({ ...other.contracts, adiUrl: one.adi_url });
      expect(elsewhere).not.toBe(address);

      for (const attempt of [1, 2]) {
        const res = await patch(mixedApp, one.id, { link_chains: ['polygon-amoy'] });
        expect(res.status, `attempt ${attempt}`).toBe(202);
        const handle = mixedApp.deps.temporal.workflow.getHandle(linkChainWorkflowId(one.id, 'polygon-amoy'));
        await expect(handle.result()).rejects.toThrow();
        const after = await pollIdentity(mixedApp, one.id, (b) => b.linking_chains.length === 0);
        expect(after.status).toBe('active');
        expect(after.requested_chains).toEqual(['ethereum-sepolia']);
        expect(after.chain_accounts.map((a: any) => a.chain)).toEqual(['ethereum-sepolia']);
        const failed = await eventsOf(mixedApp, one.id, 'identity.chain_link_failed');
        expect(failed).toHaveLength(attempt);
        expect(failed[0]!.data).toMatchObject({ chain: 'polygon-amoy' });
        expect((failed[0]!.data as any).error).toMatch(/would deploy the account at/);
      }
      expect(await codeAt('polygon-amoy', elsewhere)).toBeUndefined();
      expect(await eventsOf(mixedApp, one.id, 'identity.chain_linked')).toHaveLength(0);
    } finally {
      await mixedWorker.stop();
      await mixedApp.close();
    }
  });
});
