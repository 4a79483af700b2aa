/** ledger-sim specifics: block clock, persistence, robustness against bad input, major-block expiry. */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import { LedgerRpcError, createLedgerClient, isNotFound, liteIdentityUrl, tx, type LedgerClient } from '../../src/ledger/index.js';
import { newKey, held } from '../ledger-conformance/harness.js';

const sims: LedgerSimHandle[] = [];
afterEach(async () => {
  while (sims.length) await sims.pop()!.stop();
});

async function manualSim(opts: Parameters<typeof startLedgerSim>[0] = {}) {
  // a block interval of an hour: blocks are produced only by sim.step()
  const sim = await startLedgerSim({ blockIntervalMs: 3_600_000, ...opts });
  sims.push(sim);
  return { sim, c: createLedgerClient({ url: sim.url }) };
}

async function fundLite(sim: LedgerSimHandle, c: LedgerClient) {
  const k = newKey();
  const lite = liteIdentityUrl(k.publicKey);
  await c.faucet(`${lite}/ACME`);
  const { amount, oracle } = await c.acmeForCredits(10_000);
  const r = await c.signAndSubmit(`${lite}/ACME`, tx.addCredits({ recipient: lite, amount, oracle }), held(k, lite));
  sim.step(); // delivers AddCredits
  sim.step(); // synthetic credit deposit lands one block later
  return { k, lite, r };
}

async function rawRpc(url: string, body: string) {
  const res = await fetch(`${url}/v3`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return res.json() as Promise<any>;
}

describe('ledger-sim', () => {
  it('block clock: a submitted transaction is not executed until a block is produced; deposits land a block later', async () => {
    const { sim, c } = await manualSim();
    const k = newKey();
    const lite = liteIdentityUrl(k.publicKey);
    await c.faucet(`${lite}/ACME`);
    const { amount, oracle } = await c.acmeForCredits(100);
    const r = await c.signAndSubmit(`${lite}/ACME`, tx.addCredits({ recipient: lite, amount, oracle }), held(k, lite));
    await expect(c.getTransaction(r.txId)).rejects.toSatisfy(isNotFound);
    sim.step();
    expect((await c.getTransaction(r.txId)).status).toBe('delivered');
    expect((await c.queryAccount(lite)).creditBalance).toBe(0);
    sim.step();
    expect((await c.queryAccount(lite)).creditBalance).toBe(10_000);
  });

  it('persists its state to a file and reloads it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-sim-'));
    try {
      const stateFile = join(dir, 'ledger.json');
      const a = await manualSim({ stateFile });
      const { lite } = await fundLite(a.sim, a.c);
      await a.sim.stop();
      sims.pop();
      const b = await manualSim({ stateFile });
      expect((await b.c.queryAccount(lite)).creditBalance).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers garbage with JSON-RPC errors and keeps serving', async () => {
    const { sim, c } = await manualSim();
    expect((await rawRpc(sim.url, '{not json')).error.code).toBe(-32700);
    expect((await rawRpc(sim.url, '{"jsonrpc":"2.0","id":1}')).error.code).toBe(-32600);
    expect((await rawRpc(sim.url, '{"jsonrpc":"2.0","id":1,"method":"nope"}')).error.code).toBe(-32601);
    const env = await rawRpc(
      sim.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'submit',
        params: {
          envelope: {
            signatures: [
              { type: 'ed25519', publicKey: 'abcd', signature: '00', signer: 'acc://x.acme/book/1', signerVersion: 1, transactionHash: '00'.repeat(32) },
            ],
          },
        },
      }),
    );
    expect(JSON.stringify(env)).toMatch(/publicKey: expected 32 bytes|notFound|badRequest/);
    const bad = await rawRpc(sim.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'submit', params: { envelope: 'x' } }));
    expect(bad.error.code).toBe(-33400);
    const q = await rawRpc(sim.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'query', params: { scope: 'acc://bad name' } }));
    expect(q.error).toMatchObject({ code: -33400, data: { code: 'badRequest' } });
    await expect(c.queryAccount('acc://nobody.acme')).rejects.toBeInstanceOf(LedgerRpcError);
    const batch = await rawRpc(
      sim.url,
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'network-status', params: {} },
        { jsonrpc: '2.0', id: 2, method: 'nope' },
      ]),
    );
    expect(batch[0].result.oracle.price).toBe(50_000_000);
    expect(batch[1].error.code).toBe(-32601);
    expect((await c.networkStatus()).oraclePrice).toBe(50_000_000);
  });

  it('pending transactions are swept as expired on the major block after expire.atTime', async () => {
    const { sim, c } = await manualSim({ globals: { majorBlockIntervalMs: 1000 } });
    const s = await fundLite(sim, c);
    const k1 = newKey();
    const k2 = newKey();
    const url = `acc://sweep${Date.now()}.acme`;
    await c.signAndSubmit(url, tx.createIdentity({ url, keyBookUrl: `${url}/book`, publicKeyHash: k1.publicKeyHash }), held(s.k, s.lite));
    sim.step();
    const page = `${url}/book/1`;
    const { amount, oracle } = await c.acmeForCredits(100);
    await c.signAndSubmit(`${s.lite}/ACME`, tx.addCredits({ recipient: page, amount, oracle }), held(s.k, s.lite));
    sim.step();
    sim.step();
    await c.signAndSubmit(url, tx.createDataAccount({ url: `${url}/data` }), held(k1, page));
    sim.step();
    await c.signAndSubmit(
      page,
      tx.updateKeyPage([
        { type: 'addKey', publicKeyHash: k2.publicKeyHash },
        { type: 'setThreshold', threshold: 2 },
      ]),
      held(k1, page),
    );
    sim.step();
    const r = await c.signAndSubmit(`${url}/data`, tx.writeData(['sweep']), held(k1, page), { expireAt: new Date(Date.now() + 1000) });
    sim.step();
    expect((await c.getTransaction(r.txId)).pending).toBe(true);
    await new Promise((res) => setTimeout(res, 2100));
    sim.step();
    expect((await c.getTransaction(r.txId)).status).toBe('expired');
    // and it is no longer listed as pending
    expect((await c.listPending(`${url}/data`)).length).toBe(0);
  });
});

describe('ledger-sim robustness', () => {
  it('survives mutated envelopes: every answer is a JSON-RPC result or error and the clock keeps running', async () => {
    const sim = await startLedgerSim({ blockIntervalMs: 10 });
    sims.push(sim);
    const c = createLedgerClient({ url: sim.url });
    const k = newKey();
    const lite = liteIdentityUrl(k.publicKey);
    await c.faucet(`${lite}/ACME`);
    const p = await c.prepareExternalSignature({
      principal: `${lite}/ACME`,
      body: tx.sendTokens([{ url: `${lite}/ACME`, amount: 1n }]),
      signerUrl: lite,
      publicKey: k.publicKey,
    });
    const { ed25519Sign } = await import('../../src/protocol/ed25519.js');
    const sig = { ...p.metadataJson, signature: Buffer.from(ed25519Sign(Buffer.from(p.hashToSign, 'hex'), k.seed)).toString('hex'), transactionHash: p.txHash };
    const base = { transaction: [p.transactionJson], signatures: [sig] };
    const junk = [null, 0, -1, 1e300, '', 'zz', 'acc://', [], {}, true, '00'.repeat(32), 'x'.repeat(600)];
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const paths = (o: any, pre: string[] = []): string[][] =>
      o && typeof o === 'object' ? Object.keys(o).flatMap((key) => [[...pre, key], ...paths(o[key], [...pre, key])]) : [];
    const all = paths(base);
    const before = sim.ledger.state.block;
    for (let i = 0; i < 120; i++) {
      const env = JSON.parse(JSON.stringify(base));
      const path = all[rnd(all.length)]!;
      let o = env;
      for (const key of path.slice(0, -1)) o = o[key];
      if (rnd(3) === 0) delete o[path.at(-1)!];
      else o[path.at(-1)!] = junk[rnd(junk.length)];
      const res = await rawRpc(sim.url, JSON.stringify({ jsonrpc: '2.0', id: i, method: 'submit', params: { envelope: env } }));
      expect(res.jsonrpc).toBe('2.0');
      expect('result' in res || 'error' in res).toBe(true);
      if (res.error) expect(res.error.code).not.toBe(-33500);
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(sim.ledger.state.block).toBeGreaterThan(before);
    expect((await c.networkStatus()).oraclePrice).toBe(50_000_000);
  });
});
