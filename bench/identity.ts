/**
 * Identity provisioning latency: POST /v1/identity (two chains, 100 credits) until GET shows `active`, over 20
 * identities, on a local devnet made here (ledger simulator with 20 ms blocks, two anvils with the system
 * contracts, Temporal dev server, in-memory PGlite (or DATABASE_URL), in-process worker and API). Two runs: one identity at a time
 * (latency) and all 20 at once (contention). Prints a table and a JSON line.
 *
 *   npx tsx bench/identity.ts [count=20] [blockIntervalMs=20]
 *   (the Temporal CLI is found as for `npm start`: TEMPORAL_CLI_PATH, PATH or .venv-temporal)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { createActivities } from '../src/activities/index.js';
import { identityActivityDeps } from '../src/activities/identity-deps.js';
import { createApp } from '../src/api/app.js';
import { loadConfig } from '../src/config.js';
import { createApiKey } from '../src/db/api-keys.js';
import { openDatabase } from '../src/db/client.js';
import { createOrganization } from '../src/db/organizations.js';
import { startAnvil } from '../src/devnet/anvil.js';
import { setupIdentityDevnet } from '../src/devnet/identity.js';
import { freePort } from '../src/devnet/ports.js';
import { startTemporalDevServer } from '../src/devnet/temporal.js';
import { startLedgerSim } from '../src/ledger-sim/index.js';
import { createLogger } from '../src/log.js';
import { connectTemporalClient } from '../src/temporal/client.js';
import { loadTemporalProfile } from '../src/temporal/profile.js';
import { createGatewayWorker, installTemporalRuntime } from '../src/temporal/worker.js';

const COUNT = Number(process.argv[2] ?? 20);
const BLOCK_MS = Number(process.argv[3] ?? 20);
const logger = createLogger('error');

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!;
}

async function main() {
  const base = loadConfig();
  const dataDir = mkdtempSync(join(tmpdir(), 'pgw-bench-identity-'));
  const stops: (() => Promise<void>)[] = [];
  try {
    installTemporalRuntime(logger, { shutdownSignals: [] });
    const profile = { ...loadTemporalProfile(), port: await freePort(), dbFilename: null, logLevel: 'error' as const };
    const temporal = await startTemporalDevServer(profile, { cliPath: base.temporal.cliPath, headless: true, logger });
    stops.push(temporal.stop);
    const sim = await startLedgerSim({ port: 0, blockIntervalMs: BLOCK_MS });
    stops.push(sim.stop);
    const anvils = await Promise.all([startAnvil({ chainId: 11155111 }), startAnvil({ chainId: 80002 })]);
    for (const a of anvils) stops.push(a.stop);
    const chains = [
      { name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: anvils[0]!.rpcUrl, confirmations: 2 },
      { name: 'polygon-amoy', chainId: 80002, rpcUrl: anvils[1]!.rpcUrl, confirmations: 2 },
    ];
    const parts = await setupIdentityDevnet({ dataDir, ledgerUrl: sim.url, chains, sponsorKey: undefined, relayerPrivateKey: undefined });
    const config = {
      ...base,
      dataDir,
      ledgerUrl: sim.url,
      ...parts,
      temporal: { ...base.temporal, address: temporal.address, namespace: temporal.namespace, taskQueue: `bench-${randomBytes(4).toString('hex')}` },
    };
    // DATABASE_URL (Postgres) when set, else in-memory PGlite
    const database = await openDatabase(base.databaseUrl ? { databaseUrl: base.databaseUrl } : { pgliteDir: 'memory' });
    stops.push(() => database.close());
    const { worker, connection } = await createGatewayWorker({
      address: config.temporal.address,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      activities: createActivities({ db: database.db, ...identityActivityDeps(config) }),
    });
    const running = worker.run();
    stops.push(async () => {
      worker.shutdown();
      await running;
      await connection.close();
    });
    const client = await connectTemporalClient(config.temporal);
    stops.push(() => client.connection.close());
    const app = createApp({ config, database, temporal: client, logger });
    const org = await createOrganization(database.db, { name: 'bench', identityQuota: 10_000, creditGrant: 10_000_000n });
    const { rawKey } = await createApiKey(database.db, { orgId: org.id, name: 'bench', rateLimitRpm: 1_000_000 });
    const headers = { 'X-API-Key': rawKey, 'content-type': 'application/json' };

    async function provisionOne(pollMs = 10): Promise<{ ms: number; serverMs: number }> {
      const publicKey = Buffer.from(ed25519.getPublicKey(Uint8Array.from(randomBytes(32)))).toString('hex');
      const t0 = performance.now();
      const res = await app.request('/v1/identity', {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `bench-${randomBytes(8).toString('hex')}`, public_key: publicKey, chains: ['ethereum-sepolia', 'polygon-amoy'], credits: 100 }),
      });
      if (res.status !== 202) throw new Error(`POST ${res.status}: ${await res.text()}`);
      const id = ((await res.json()) as { identity: { id: string } }).identity.id;
      for (;;) {
        const g = (await (await app.request(`/v1/identity/${id}`, { headers })).json()) as { status: string; error_message?: string; created_at: string; provisioned_at: string | null };
        if (g.status === 'active') {
          const ms = performance.now() - t0;
          return { ms, serverMs: new Date(g.provisioned_at!).getTime() - new Date(g.created_at).getTime() };
        }
        if (g.status !== 'creating') throw new Error(`identity ${id} ${g.status}: ${g.error_message}`);
        await new Promise((r) => setTimeout(r, pollMs));
      }
    }

    await provisionOne(); // warm-up: workflow cache, connections, viem clients
    const sequential: number[] = [];
    const seqServer: number[] = [];
    for (let i = 0; i < COUNT; i++) {
      const r = await provisionOne();
      sequential.push(r.ms);
      seqServer.push(r.serverMs);
    }
    const t0 = performance.now();
    // 20 clients polling every 10 ms would mostly measure the embedded database; poll as a client would
    const conc = await Promise.all(Array.from({ length: COUNT }, () => provisionOne(200)));
    const wall = performance.now() - t0;
    const concurrent = conc.map((r) => r.serverMs);

    const row = (name: string, xs: number[]) => ({ run: name, n: xs.length, p50_ms: Math.round(pct(xs, 0.5)), p95_ms: Math.round(pct(xs, 0.95)), max_ms: Math.round(Math.max(...xs)) });
    const rows = [
      row('sequential (client: POST → GET active)', sequential),
      row('sequential (server: created_at → provisioned_at)', seqServer),
      row(`concurrent ${COUNT} at once (server: created_at → provisioned_at)`, concurrent),
    ];
    console.log(`\nIdentity provisioning, ${COUNT} identities, 2 chains + 100 credits each, ledger block ${BLOCK_MS} ms\n`);
    console.table(rows);
    console.log(`concurrent wall time: ${Math.round(wall)} ms (${(COUNT / (wall / 1000)).toFixed(1)} identities/s)`);
    console.log(JSON.stringify({ bench: 'identity', count: COUNT, block_interval_ms: BLOCK_MS, results: rows, concurrent_wall_ms: Math.round(wall), target_p50_ms: 2000, pass: rows[0]!.p50_ms <= 2000 }));
  } finally {
    for (const s of stops.reverse()) await s().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
