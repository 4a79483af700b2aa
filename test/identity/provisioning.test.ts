/**
 * Identity provisioning end to end on a devnet made here: POST /v1/identity → workflow → ADI, credits, data
 * account, client key on the page, abstract accounts on two chains → active. Checked against the ledger and the
 * chains themselves, not only the API's answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, type Address } from 'viem';
import { eq } from 'drizzle-orm';
import { predictAccountAddress } from '../../src/chain/account.js';
import { events } from '../../src/db/schema.js';
import { eventDeviations } from '../support/event-catalogue.js';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import { dbKinds } from '../support/env.js';
import { newClientKey, pollIdentity, startIdentityApp, startIdentityDevnet, startWorker, uniqueName, type IdentityDevnet } from './devnet.js';

let dn: IdentityDevnet;
let app: Awaited<ReturnType<typeof startIdentityApp>>;
let worker: Awaited<ReturnType<typeof startWorker>>;

beforeAll(async () => {
  dn = await startIdentityDevnet();
  app = await startIdentityApp(dn, dbKinds().includes('postgres') ? 'postgres' : 'pglite');
  worker = await startWorker(app.config, app.db);
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await dn?.stop();
});

const post = (body: unknown, headers: Record<string, string> = {}) =>
  app.call('/v1/identity', { method: 'POST', key: app.key.key, body: JSON.stringify(body), headers });

describe('POST /v1/identity → active', () => {
  it('two chains: active, same account address on both, key page holds the client key hash, credits on the page', async () => {
    const k = newClientKey();
    const name = uniqueName('two');
    const res = await post({ name, public_key: k.publicKey, chains: ['ethereum-sepolia', 'polygon-amoy'], credits: 100 });
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body.identity).toMatchObject({
      status: 'creating',
      chain_accounts: [],
      credit_balance: 0,
      can_sign: true,
      adi_url: `acc://${name}.acme`,
      book_url: `acc://${name}.acme/book`,
      key_page_url: `acc://${name}.acme/book/1`,
      public_key_hash: publicKeyHashHex(k.publicKey),
    });
    // the identity's own fields are also at the top level (Certen clients read `id` there), the same values
    const { identity, status_url, polling, warnings, ...top } = body;
    expect(top).toEqual(identity);
    expect(warnings).toBeUndefined();
    expect(body.credit_balance_stale).toBe(true);
    expect(status_url).toBe(`/v1/identity/${body.id}`);
    expect(body.status_url).toBe(`/v1/identity/${body.identity.id}`);
    expect(polling.terminal_states).toEqual(expect.arrayContaining(['active', 'failed']));
    expect(body.polling.first_poll_after_seconds).toBeGreaterThanOrEqual(1);

    const done = await pollIdentity(app, body.identity.id, (b) => b.status !== 'creating');
    expect(done.error_message).toBeUndefined();
    expect(done.status).toBe('active');
    expect(done.stage).toBe('done');
    expect(done.chain_accounts).toHaveLength(2);
    // exactly one identity.active event, written with the transition, listing both accounts
    const evs = await app.deps.database.db.select().from(events).where(eq(events.resourceId, body.identity.id));
    expect(evs.map((e) => [e.type, e.sequence])).toEqual([['identity.active', 1]]);
    expect((evs[0].data as any).chain_accounts.map((x: any) => x.chain).sort()).toEqual(['ethereum-sepolia', 'polygon-amoy']);
    // the payload names and shows what the REST view does: the same chain accounts, book_url, credit_balance a number
    const byChain = (xs: any[]) => [...xs].sort((x, y) => x.chain.localeCompare(y.chain));
    expect(byChain((evs[0].data as any).chain_accounts)).toEqual(byChain(done.chain_accounts));
    expect(evs[0].data).toMatchObject({ book_url: done.book_url, public_key_hash: done.public_key_hash, credit_balance: done.credit_balance });
    expect(eventDeviations(evs[0].type, evs[0].id, evs[0].data)).toEqual([]);
    const [a, b] = done.chain_accounts;
    expect(a.address).toBe(b.address);
    expect(new Set(done.chain_accounts.map((x: any) => x.chain))).toEqual(new Set(['ethereum-sepolia', 'polygon-amoy']));
    // chain_id is the registry id (as Certen names it), the EVM chain id is evm_chain_id
    for (const acc of done.chain_accounts) expect(acc).toMatchObject({ chain_id: acc.chain, deployed: true });
    expect(new Set(done.chain_accounts.map((x: any) => x.evm_chain_id))).toEqual(new Set([11155111, 80002]));

    // the ledger: page 1 holds exactly the client's key hash and the credits
    const page = await dn.ledger.queryKeyPage(done.key_page_url);
    expect(page.keys.map((x) => x.publicKeyHash)).toEqual([publicKeyHashHex(k.publicKey)]);
    expect(Math.floor(page.creditBalance / 100)).toBe(100);
    expect(done.credit_balance).toBe(100);
    expect(done.credit_balance_stale).toBe(false);
    expect((await dn.ledger.queryAccount(done.data_account_url)).type).toBe('dataAccount');

    // the chains: code at the address on both, the offline prediction agrees, the deployment tx is real
    const chains = JSON.parse(dn.env.CHAINS!) as { name: string; rpcUrl: string; contracts: { proofAnchor: Address; accountFactory: Address } }[];
    for (const acc of done.chain_accounts) {
      const ch = chains.find((c) => c.name === acc.chain)!;
      expect(acc.address).toBe(predictAccountAddress({ ...ch.contracts, adiUrl: done.adi_url }));
      const pub = createPublicClient({ transport: http(ch.rpcUrl) });
      expect(await pub.getCode({ address: acc.address })).toMatch(/^0x[0-9a-f]{10,}/);
      const receipt = await pub.getTransactionReceipt({ hash: acc.deployment_tx });
      expect(receipt.status).toBe('success');
    }

    // the workflow: completed, with the search attributes an operator filters on
    const desc = await app.deps.temporal.workflow.getHandle(`identity-${done.id}`).describe();
    expect(desc.status.name).toBe('COMPLETED');
    const sa = desc.searchAttributes as Record<string, unknown[]>;
    expect(sa.OrgId).toEqual([app.key.orgId]);
    expect(sa.IdentityId).toEqual([done.id]);
    expect(sa.Stage).toEqual(['done']);
  });

  it('no chains, no credits: active with no accounts and 0 credits, and the response warns', async () => {
    const k = newClientKey();
    const res = await post({ name: uniqueName('bare'), public_key: k.publicKey });
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body.warnings.join(' ')).toMatch(/credits is 0/);
    const done = await pollIdentity(app, body.identity.id, (b) => b.status !== 'creating');
    expect(done.status).toBe('active');
    expect(done.chain_accounts).toEqual([]);
    expect(done.credit_balance).toBe(0);
    const page = await dn.ledger.queryKeyPage(done.key_page_url);
    expect(page.keys.map((x) => x.publicKeyHash)).toEqual([publicKeyHashHex(k.publicKey)]);
  });
});
