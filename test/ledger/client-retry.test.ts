/**
 * The ledger client retries reads that failed in transit (a 5xx that is not a JSON-RPC answer, a reset
 * connection) a few times within the call; submissions, JSON-RPC errors and timeouts are never retried. Real ledger
 * simulator behind the fault proxy, with a scripted fault sequence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerClient, type LedgerClient } from '../../src/ledger/client.js';
import { LedgerRpcError, LedgerTransportError } from '../../src/ledger/errors.js';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';

let sim: LedgerSimHandle;
let proxy: FaultProxy;
/** the proxy's random numbers: 0 injects the fault in play, 1 does not; an empty script means no more faults */
const script: number[] = [];

beforeAll(async () => {
  sim = await startLedgerSim({ port: 0, blockIntervalMs: 50 });
  proxy = await startFaultProxy(sim.url, {}, () => script.shift() ?? 1);
});
afterAll(async () => {
  await proxy?.close();
  await sim?.stop();
});

function client(): LedgerClient {
  return createLedgerClient({ url: proxy.url, readRetryDelaysMs: [10, 20] });
}

async function counted<T>(fn: () => Promise<T>): Promise<{ requests: number; result?: T; error?: unknown }> {
  const before = proxy.stats.requests;
  try {
    const result = await fn();
    return { requests: proxy.stats.requests - before, result };
  } catch (error) {
    return { requests: proxy.stats.requests - before, error };
  }
}

describe('ledger client: retries of reads', () => {
  it('a read that gets 503 twice succeeds on the third request', async () => {
    proxy.settings = { failRate: 1 };
    script.push(0, 0);
    const r = await counted(() => client().networkStatus());
    expect(r.error).toBeUndefined();
    expect(r.result!.oraclePrice).toBeGreaterThan(0);
    expect(r.requests).toBe(3);
    expect(proxy.stats.failed).toBe(2);
  });

  it('a reset connection is retried too', async () => {
    proxy.settings = { dropRate: 1 };
    script.push(0);
    const r = await counted(() => client().networkStatus());
    expect(r.error).toBeUndefined();
    expect(r.requests).toBe(2);
  });

  it('gives up after its retries with the transport error', async () => {
    proxy.settings = { failRate: 1 };
    script.push(0, 0, 0, 0);
    const r = await counted(() => client().networkStatus());
    expect(r.error).toBeInstanceOf(LedgerTransportError);
    expect(String(r.error)).toMatch(/HTTP 503/);
    expect(r.requests).toBe(3);
    script.length = 0;
  });

  it('a submission is sent once: its transient failure goes to the caller', async () => {
    proxy.settings = { failRate: 1 };
    script.push(0);
    const r = await counted(() => client().call('submit', { envelope: {} }));
    expect(r.error).toBeInstanceOf(LedgerTransportError);
    expect(r.requests).toBe(1);
    script.length = 0;
  });

  it('a JSON-RPC error is an answer, not retried', async () => {
    proxy.settings = {};
    const r = await counted(() => client().queryAccount('acc://no-such-identity.acme'));
    expect(r.error).toBeInstanceOf(LedgerRpcError);
    expect(r.requests).toBe(1);
  });

  it('retries can be turned off', async () => {
    proxy.settings = { failRate: 1 };
    script.push(0);
    const r = await counted(() => createLedgerClient({ url: proxy.url, readRetryDelaysMs: [] }).networkStatus());
    expect(r.error).toBeInstanceOf(LedgerTransportError);
    expect(r.requests).toBe(1);
    script.length = 0;
  });
});
