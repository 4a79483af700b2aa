/**
 * GET /v1/chains and /v1/chains/{id}: public (no key, counted per client IP), Certen's shape (id, name, chainId,
 * evm_chain_id, contracts with `verified` read from the chain and cached), a chain that does not answer shown
 * unverified without failing the request, and any id that names no chain a 404 CHAIN_NOT_FOUND, whatever its length.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type AnvilHandle } from '../../src/devnet/anvil.js';
import { createTestOrgAndKey, startTestApp, type TestApp } from '../support/platform.js';

const ANCHOR = '0x1111111111111111111111111111111111111111';
const FACTORY = '0x2222222222222222222222222222222222222222';

async function setCode(rpcUrl: string, address: string, code: string) {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_setCode', params: [address, code] }),
  });
  expect((await res.json()).error).toBeUndefined();
}

describe('GET /v1/chains', () => {
  let anvil: AnvilHandle;
  let t: TestApp;

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 80002 });
    await setCode(anvil.rpcUrl, ANCHOR, '0x6080604052');
    const chains = [
      {
        name: 'ethereum-sepolia',
        chainId: 11155111,
        rpcUrl: 'http://127.0.0.1:9',
        confirmations: 2,
        contracts: { proofAnchor: ANCHOR, accountFactory: FACTORY },
      },
      { name: 'polygon-amoy', chainId: 80002, rpcUrl: anvil.rpcUrl, confirmations: 2, contracts: { proofAnchor: ANCHOR, accountFactory: FACTORY } },
      { name: 'base-sepolia', chainId: 84532, rpcUrl: 'http://127.0.0.1:9', confirmations: 3 },
    ];
    t = await startTestApp('pglite', { env: { CHAINS: JSON.stringify(chains), RATE_LIMIT_IP_RPM: '1000' } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await anvil?.stop();
  });

  it('answers without a key, in the Certen shape, with verified read from the chain', async () => {
    const res = await t.call('/v1/chains');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000'); // the client IP's limit
    const { chains } = await res.json();
    const amoy = chains.find((c: any) => c.id === 'polygon-amoy');
    expect(amoy).toEqual({
      id: 'polygon-amoy',
      name: 'polygon-amoy',
      chainId: 80002,
      evm_chain_id: 80002,
      family: 'evm',
      confirmations: 2,
      contracts: { proof_anchor: { address: ANCHOR, verified: true }, account_factory: { address: FACTORY, verified: false } },
    });
    // a chain whose RPC does not answer: unverified, and the request still answers
    expect(chains.find((c: any) => c.id === 'ethereum-sepolia').contracts).toEqual({
      proof_anchor: { address: ANCHOR, verified: false },
      account_factory: { address: FACTORY, verified: false },
    });
    expect(chains.find((c: any) => c.id === 'base-sepolia').contracts).toBeNull();
    expect(JSON.stringify(chains)).not.toContain('127.0.0.1');
  });

  it('caches the check: code appearing later shows once the negative answer expires', async () => {
    await t.call('/v1/chains');
    await setCode(anvil.rpcUrl, FACTORY, '0x6080604052');
    const cached = (await (await t.call('/v1/chains/polygon-amoy')).json()).chain;
    expect(cached.contracts.account_factory.verified).toBe(false);
    t.clock.ms += 61_000;
    const fresh = (await (await t.call('/v1/chains/polygon-amoy')).json()).chain;
    expect(fresh.contracts.account_factory.verified).toBe(true);
  });

  it('one chain by registry id or EVM chain id, as { chain }; any other id is a 404 CHAIN_NOT_FOUND, whatever its length', async () => {
    const byName = await (await t.call('/v1/chains/polygon-amoy')).json();
    const byId = await (await t.call('/v1/chains/80002')).json();
    expect(byName.chain.id).toBe('polygon-amoy');
    expect(byId).toEqual(byName);
    for (const id of ['nope', '1', '080002', 'x'.repeat(65), 'y'.repeat(300)]) {
      const res = await t.call(`/v1/chains/${id}`);
      expect(res.status, id).toBe(404);
      const body = await res.json();
      expect(body.code).toBe('CHAIN_NOT_FOUND');
      expect(body.details.known_chains).toEqual(['ethereum-sepolia', 'polygon-amoy', 'base-sepolia']);
    }
  });

  it('a key is not needed, and a wrong one is not refused; other methods are 405', async () => {
    const key = await createTestOrgAndKey(t.db, {});
    expect((await t.call('/v1/chains', { key: key.key })).status).toBe(200);
    expect((await t.call('/v1/chains/polygon-amoy', { headers: { 'X-API-Key': 'ck_live_wrong' } })).status).toBe(200);
    expect((await t.call('/v1/chains', { method: 'POST' })).status).toBe(405);
    expect((await t.call('/v1/chains/polygon-amoy', { method: 'DELETE' })).status).toBe(405);
  });

  it('the OpenAPI document marks both public; /v1/scopes lists them under no scope', async () => {
    const doc = await (await t.call('/docs/json')).json();
    for (const path of ['/v1/chains', '/v1/chains/{id}']) {
      expect(doc.paths[path].get.security).toEqual([]);
      expect(doc.paths[path].get.responses['401']).toBeUndefined();
    }
    const scopes = await (await t.call('/v1/scopes')).json();
    for (const s of scopes.scopes) expect(s.operations.filter((o: string) => o.includes('/v1/chains'))).toEqual([]);
  });
});
