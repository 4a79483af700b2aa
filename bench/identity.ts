/**
 * Identity provisioning latency: POST /v1/identity (two chains, 100 credits) until GET shows `active`, over 20
 * identities, on a local devnet made here (ledger simulator with 20 ms blocks, two anvils with the system
 * contracts, Temporal dev server, in-memory PGlite (or a fresh database on DATABASE_URL's server), in-process
 * worker and API). Two runs: one identity at a time (latency) and all 20 at once (contention). Prints a table and a
 * JSON line.
 *
 *   npx tsx bench/identity.ts [count=20] [blockIntervalMs=20]
 *   (the Temporal CLI is found as for `npm start`: TEMPORAL_CLI_PATH, PATH or .venv-temporal)
 */
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { benchArgs } from './lib/args.js';
import { pct, startBenchDevnet } from './lib/devnet.js';

const ARGS = benchArgs('npx tsx bench/identity.ts [count=20] [blockIntervalMs=20]', {
  positional: [
    { name: 'count', default: 20, min: 1, max: 1000 },
    { name: 'blockIntervalMs', default: 20, min: 1, max: 60_000 },
  ],
});
const COUNT = ARGS.values.count!;
const BLOCK_MS = ARGS.values.blockIntervalMs!;

async function main() {
  const dn = await startBenchDevnet({ name: 'bench-identity', blockIntervalMs: BLOCK_MS });
  try {
    const { app, headers } = dn;

    async function provisionOne(pollMs = 10): Promise<{ ms: number; serverMs: number }> {
      const publicKey = Buffer.from(ed25519.getPublicKey(Uint8Array.from(randomBytes(32)))).toString('hex');
      const t0 = performance.now();
      const res = await app.request('/v1/identity', {
        method: 'POST',
        headers,
        body: JSON.stringify({
          name: `bench-${randomBytes(8).toString('hex')}`,
          public_key: publicKey,
          chains: ['ethereum-sepolia', 'polygon-amoy'],
          credits: 100,
        }),
      });
      if (res.status !== 202) throw new Error(`POST ${res.status}: ${await res.text()}`);
      const id = ((await res.json()) as { identity: { id: string } }).identity.id;
      for (;;) {
        const g = (await (await app.request(`/v1/identity/${id}`, { headers })).json()) as {
          status: string;
          error_message?: string;
          created_at: string;
          provisioned_at: string | null;
        };
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

    const row = (name: string, xs: number[]) => ({
      run: name,
      n: xs.length,
      p50_ms: Math.round(pct(xs, 0.5)),
      p95_ms: Math.round(pct(xs, 0.95)),
      max_ms: Math.round(Math.max(...xs)),
    });
    const rows = [
      row('sequential (client: POST → GET active)', sequential),
      row('sequential (server: created_at → provisioned_at)', seqServer),
      row(`concurrent ${COUNT} at once (server: created_at → provisioned_at)`, concurrent),
    ];
    console.log(`\nIdentity provisioning, ${COUNT} identities, 2 chains + 100 credits each, ledger block ${BLOCK_MS} ms\n`);
    console.table(rows);
    console.log(`concurrent wall time: ${Math.round(wall)} ms (${(COUNT / (wall / 1000)).toFixed(1)} identities/s)`);
    console.log(
      JSON.stringify({
        bench: 'identity',
        count: COUNT,
        block_interval_ms: BLOCK_MS,
        results: rows,
        concurrent_wall_ms: Math.round(wall),
        target_p50_ms: 2000,
        pass: rows[0]!.p50_ms <= 2000,
      }),
    );
  } finally {
    await dn.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
