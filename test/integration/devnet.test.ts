/**
 * The launcher behind `npm start`, on free ports: everything answers, and stopping leaves no process behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { formatSummary, startDevnet, type Devnet } from '../../src/devnet/index.js';
import { freePortDevnet } from '../support/devnet-config.js';
import { quietLogger } from '../support/env.js';

function childPids(): number[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes(dataDirMarker))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}
let dataDirMarker = '';

describe('devnet launcher', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-devnet-'));
  dataDirMarker = dataDir;
  let devnet: Devnet | undefined;
  afterAll(async () => {
    await devnet?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // generous: the launcher starts five processes, which takes a while on a loaded 2-core machine
  it('starts Temporal, both chains, worker and API; stops them all', { timeout: 180_000 }, async () => {
    const { config, temporalProfile } = await freePortDevnet(dataDir);
    devnet = await startDevnet(config, quietLogger, {
      temporalProfile: { ...temporalProfile, dbFilename: join(dataDir, 'temporal.sqlite') },
    });
    const s = devnet.summary;
    expect(formatSummary(s)).toContain(s.temporalUiUrl!);
    // an empty database: the bootstrap admin key is printed once and works
    expect(s.adminKey).toMatch(/^ck_live_/);
    expect(formatSummary(s)).toContain(s.adminKey!);
    expect((await fetch(`${s.apiUrl}/v1/admin/api-keys`, { headers: { 'X-API-Key': s.adminKey! } })).status).toBe(200);

    const health = await fetch(`${s.apiUrl}/v1/health`);
    expect(health.status).toBe(200);
    expect((await health.json()).status).toBe('healthy');
    expect((await fetch(s.temporalUiUrl!)).status).toBe(200);
    for (const [i, chain] of s.chains.entries()) {
      const res = await fetch(chain.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      expect(Number(BigInt((await res.json()).result))).toBe([11155111, 80002][i]);
    }
    const status = await fetch(`${s.ledgerUrl}/v3`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'network-status', params: { partition: 'Directory' } }),
    });
    expect((await status.json()).result.oracle.price).toBeGreaterThan(0);
    expect(formatSummary(s)).toContain(`${s.ledgerUrl}/v3`);
    // the validator network: 7 nodes answering, contracts deployed, rows in the summary
    const vRows = s.validatorRows.filter(([k]) => k.startsWith('Validator '));
    expect(vRows).toHaveLength(7 + 1); // seven nodes and the validators' key page
    expect(devnet.config.validatorUrls).toHaveLength(7);
    for (const url of devnet.config.validatorUrls) expect((await fetch(`${url}/v1/info`)).status).toBe(200);
    expect(devnet.config.chains.every((c) => c.contracts?.proofAnchor)).toBe(true);
    // the Temporal server runs with its database file inside our data dir, which marks it in `ps`
    expect(childPids().length).toBeGreaterThan(0);

    await devnet.stop();
    devnet = undefined;
    expect(childPids()).toEqual([]);
    await expect(fetch(`${s.apiUrl}/v1/health`)).rejects.toThrow();
    for (const chain of s.chains) await expect(fetch(chain.rpcUrl)).rejects.toThrow();
    await expect(fetch(`${s.ledgerUrl}/v3`)).rejects.toThrow();
  });
});
