/**
 * API throughput and memory: autocannon against `POST /v1/transaction` (prepare: validation, calldata and
 * commitments, the ledger queries, the intent row; its workflow starts only with a signature) and
 * `GET /v1/transaction/{id}`, and in the same run against a bare Hono handler that does one Postgres insert (and one
 * select) — the ratio is the figure. The API and the worker run as their own processes from the compiled build, as
 * deployed (`npm run api`, `npm run worker`; the build is made first when it is missing or older than the source), on
 * a Postgres cluster made here (or DATABASE_URL), so their memory (RSS, sampled every 200 ms) is measured under that
 * load. Each run prints the CPU per request of the server under load and of the PostgreSQL backends serving it.
 *
 *   npx tsx bench/api-throughput.ts [seconds=10] [connections=10]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ed25519 } from '@noble/curves/ed25519.js';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import { createApiKey } from '../src/db/api-keys.js';
import { openDatabase } from '../src/db/client.js';
import { createOrganization } from '../src/db/organizations.js';
import { startAnvil } from '../src/devnet/anvil.js';
import { ANVIL_DEV_KEY_0 } from '../src/devnet/contracts.js';
import { setupIdentityDevnet } from '../src/devnet/identity.js';
import { freePort } from '../src/devnet/ports.js';
import { createScratchDatabase, startLocalPostgres } from '../src/devnet/postgres.js';
import { startTemporalDevServer } from '../src/devnet/temporal.js';
import { startDevnetValidators } from '../src/devnet/validators.js';
import { startLedgerSim } from '../src/ledger-sim/index.js';
import { createLogger } from '../src/log.js';
import { loadTemporalProfile } from '../src/temporal/profile.js';
import { compiledEntry } from '../test/support/build.js';
import { benchArgs } from './lib/args.js';
import { cpuDuring } from './lib/devnet.js';

const ARGS = benchArgs('npx tsx bench/api-throughput.ts [seconds=10] [connections=10]', {
  positional: [
    { name: 'seconds', default: 10, min: 1, max: 3600 },
    { name: 'connections', default: 10, min: 1, max: 10_000 },
  ],
});
const SECONDS = ARGS.values.seconds!;
const CONNECTIONS = ARGS.values.connections!;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const logger = createLogger('error');
/** at 10 connections: rps as a share of the bare server's in the same run, p99, peak RSS under the load */
const TARGET = { prepareRatio: 0.2, prepareP99Ms: 60, getRatio: 0.45, apiRssMb: 250, workerRssMb: 400 };

/**
 * `entry`: node's arguments that run the program (a compiled entry point, or a .ts file through tsx). Its output
 * goes to `logFile`, as a deployed process's goes to a file or the journal: a pipe that this busy process drains
 * late would make the program's synchronous log writes wait.
 */
async function spawnProcess(entry: string[], env: Record<string, string>, ready: string, logFile: string, flags: string[] = []): Promise<ChildProcess> {
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...flags, ...entry], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited: number | null | undefined;
  child.once('exit', (code) => {
    exited = code;
  });
  for (;;) {
    const out = readFileSync(logFile, 'utf8');
    if (out.includes(ready)) return child;
    if (exited !== undefined) throw new Error(`${entry.join(' ')} exited (${exited}):\n${out.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Peak and last RSS (MB) of a process, sampled from /proc while `during` runs. */
async function sampleRss<T>(
  pids: Record<string, number>,
  during: () => Promise<T>,
): Promise<{ result: T; rss: Record<string, { peak_mb: number; end_mb: number }> }> {
  const peak: Record<string, number> = {};
  const last: Record<string, number> = {};
  const read = () => {
    for (const [name, pid] of Object.entries(pids)) {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      const mb = m ? Number(m[1]) / 1024 : 0;
      last[name] = mb;
      peak[name] = Math.max(peak[name] ?? 0, mb);
    }
  };
  read();
  const t = setInterval(read, 200);
  try {
    const result = await during();
    read();
    return { result, rss: Object.fromEntries(Object.keys(pids).map((k) => [k, { peak_mb: Math.round(peak[k]!), end_mb: Math.round(last[k]!) }])) };
  } finally {
    clearInterval(t);
  }
}

interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

/** the scratch database of this run: its PostgreSQL backends' CPU is counted per request */
let benchDatabase: string | undefined;

/** CPU time (user + system, ms) a process has used so far, from /proc (clock ticks of 10 ms) */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * One autocannon run, with the CPU time per request of the processes in `cpuOf` (the api's for the gateway's runs,
 * the bare server's for its own): on a loaded machine the rps move with the load, the CPU per request much less.
 */
async function cannon(name: string, opts: Parameters<typeof autocannon>[0], cpuOf: Record<string, number> = {}) {
  const before = Object.fromEntries(Object.entries(cpuOf).map(([k, pid]) => [k, cpuMs(pid)]));
  const { result: r, byProcess } = await cpuDuring(
    async () => (await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts })) as unknown as CannonResult,
    { database: benchDatabase },
  );
  const perReq = (ms: number) => +(ms / Math.max(1, r.requests.total)).toFixed(3);
  const cpu = Object.fromEntries(Object.entries(cpuOf).map(([k, pid]) => [`${k}_cpu_ms_per_req`, perReq(cpuMs(pid) - before[k]!)]));
  // what PostgreSQL's backends serving the bench's database spent (the gateway's queries, or the bare server's)
  cpu.db_cpu_ms_per_req = perReq(byProcess.postgres ?? 0);
  return {
    name,
    rps: Math.round(r.requests.average),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    requests: r.requests.total,
    failed: r.non2xx + r.errors + r.timeouts,
    ...cpu,
  };
}

async function main() {
  const base = loadConfig();
  const dataDir = mkdtempSync(join(tmpdir(), 'pgw-bench-api-'));
  const stops: (() => Promise<void>)[] = [];
  const children: ChildProcess[] = [];
  try {
    let serverUrl = base.databaseUrl;
    if (!serverUrl) {
      const pg = await startLocalPostgres();
      if (!pg) throw new Error('needs PostgreSQL: set DATABASE_URL or install the postgresql package');
      stops.push(pg.stop);
      serverUrl = pg.url;
    }
    const scratch = await createScratchDatabase(serverUrl);
    stops.push(scratch.drop);
    benchDatabase = new URL(scratch.url).pathname.slice(1);
    const profile = { ...loadTemporalProfile(), port: await freePort(), dbFilename: null, logLevel: 'error' as const };
    const temporal = await startTemporalDevServer(profile, { cliPath: base.temporal.cliPath, headless: true, logger });
    stops.push(temporal.stop);
    const sim = await startLedgerSim({ port: 0, blockIntervalMs: 20 });
    stops.push(sim.stop);
    const anvils = await Promise.all([startAnvil({ chainId: 11155111 }), startAnvil({ chainId: 80002 })]);
    for (const a of anvils) stops.push(a.stop);
    const chains = [
      { name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: anvils[0]!.rpcUrl, confirmations: 2 },
      { name: 'polygon-amoy', chainId: 80002, rpcUrl: anvils[1]!.rpcUrl, confirmations: 2 },
    ];
    // the worker process refuses to start without validators (VALIDATOR_URLS), as deployed
    const vn = await startDevnetValidators({ dataDir, ledgerUrl: sim.url, chains, deployerKey: ANVIL_DEV_KEY_0 });
    stops.push(vn.stop);
    const parts = await setupIdentityDevnet({
      dataDir,
      ledgerUrl: sim.url,
      chains: chains.map((c) => ({ ...c, contracts: vn.contracts })),
      sponsorKey: undefined,
      relayerPrivateKey: undefined,
    });
    const apiPort = await freePort();
    const barePort = await freePort();
    const env = {
      DATABASE_URL: scratch.url,
      DATA_DIR: dataDir,
      LEDGER_URL: sim.url,
      CHAINS: JSON.stringify(parts.chains),
      SPONSOR_KEY: parts.sponsorKey,
      RELAYER_PRIVATE_KEY: parts.relayerPrivateKey,
      VALIDATOR_URLS: vn.validators.map((v) => v.url).join(','),
      VALIDATOR_CLIENT_KEY: vn.clientKey,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      TEMPORAL_TASK_QUEUE: `bench-${randomBytes(4).toString('hex')}`,
      API_PORT: String(apiPort),
      LOG_LEVEL: 'info',
      BARE_PORT: String(barePort),
    };
    const database = await openDatabase({ databaseUrl: scratch.url }); // migrates before the processes start
    stops.push(() => database.close());
    const worker = await spawnProcess(compiledEntry('worker'), env, '"worker running"', join(dataDir, 'worker.log'));
    // BENCH_CPU_PROFILE=<dir>: the api process writes a V8 CPU profile there on exit
    const profileDir = process.env.BENCH_CPU_PROFILE;
    const api = await spawnProcess(
      compiledEntry('api'),
      env,
      '"api listening"',
      join(dataDir, 'api.log'),
      profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    );
    const bare = await spawnProcess(['--import', 'tsx', 'bench/support/bare-insert-server.ts'], env, 'bare listening', join(dataDir, 'bare.log'));
    children.push(worker, api, bare);

    const org = await createOrganization(database.db, { name: 'bench', identityQuota: 1000, creditGrant: 10_000_000n });
    const { rawKey } = await createApiKey(database.db, { orgId: org.id, name: 'bench', rateLimitRpm: 100_000_000 });
    const gw = `http://127.0.0.1:${apiPort}`;
    const headers = { 'X-API-Key': rawKey, 'content-type': 'application/json' };
    const secret = Uint8Array.from(randomBytes(32));
    const created = (await (
      await fetch(`${gw}/v1/identity`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          name: `bench-${randomBytes(6).toString('hex')}`,
          public_key: Buffer.from(ed25519.getPublicKey(secret)).toString('hex'),
          chains: ['ethereum-sepolia'],
          credits: 1000,
        }),
      })
    ).json()) as { identity: { id: string } };
    let identity: { status: string; adi_url: string; chain_accounts: { address: string }[] };
    for (;;) {
      identity = (await (await fetch(`${gw}/v1/identity/${created.identity.id}`, { headers })).json()) as typeof identity;
      if (identity.status === 'active') break;
      if (identity.status !== 'creating') throw new Error(`identity ${identity.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const account = identity.chain_accounts[0]!.address;
    const prepareBody = JSON.stringify({
      identity_id: created.identity.id,
      intent: {
        adiUrl: identity.adi_url,
        legs: [
          {
            legId: 'l1',
            chain: 'ethereum-sepolia',
            chainId: 11155111,
            fromAddress: account,
            toAddress: '0x000000000000000000000000000000000000bEEF',
            amount: '0',
            contractCall: {
              target: '0x000000000000000000000000000000000000bEEF',
              value: '0',
              functionSignature: 'record(bytes32)',
              args: [`0x${'ab'.repeat(32)}`],
            },
          },
        ],
      },
    });
    const one = (await (await fetch(`${gw}/v1/transaction`, { method: 'POST', headers, body: prepareBody })).json()) as { intent_id: string };
    const bareOne = (await (await fetch(`http://127.0.0.1:${barePort}/insert`, { method: 'POST', headers, body: prepareBody })).json()) as { id: string };

    const { result, rss } = await sampleRss({ api: api.pid!, worker: worker.pid! }, async () => [
      await cannon(
        'POST /v1/transaction (prepare)',
        { url: `${gw}/v1/transaction`, method: 'POST', headers, body: prepareBody },
        { api: api.pid!, worker: worker.pid! },
      ),
      await cannon(
        'bare Hono: one Postgres insert',
        { url: `http://127.0.0.1:${barePort}/insert`, method: 'POST', headers, body: prepareBody },
        { bare: bare.pid! },
      ),
      await cannon('GET /v1/transaction/{id}', { url: `${gw}/v1/transaction/${one.intent_id}`, headers }, { api: api.pid! }),
      await cannon('bare Hono: one Postgres select', { url: `http://127.0.0.1:${barePort}/row/${bareOne.id}`, headers }, { bare: bare.pid! }),
    ]);
    const [prep, bareIns, get, bareSel] = result;
    console.log(`\nAPI throughput, ${SECONDS} s per run, ${CONNECTIONS} connections (api and worker as their own processes, Postgres)\n`);
    console.table(result);
    console.table(Object.entries(rss).map(([process, m]) => ({ process, ...m })));
    const ratios = { prepare_vs_bare_insert: +(prep!.rps / bareIns!.rps).toFixed(3), get_vs_bare_select: +(get!.rps / bareSel!.rps).toFixed(3) };
    console.log(`ratios (gateway rps / bare rps): prepare ${ratios.prepare_vs_bare_insert}, get ${ratios.get_vs_bare_select}`);
    // a run with failed requests measured error answers: no throughput target holds in it
    const clean = (...rs: (typeof prep)[]) => rs.every((r) => r!.failed === 0);
    const holds = {
      prepare_ratio: clean(prep, bareIns) && ratios.prepare_vs_bare_insert >= TARGET.prepareRatio,
      prepare_p99: clean(prep) && prep!.p99_ms <= TARGET.prepareP99Ms,
      get_ratio: clean(get, bareSel) && ratios.get_vs_bare_select >= TARGET.getRatio,
      api_rss: rss.api!.peak_mb <= TARGET.apiRssMb,
      worker_rss: rss.worker!.peak_mb <= TARGET.workerRssMb,
    };
    const verdict = (ok: boolean) => (ok ? 'holds' : 'MISSED');
    console.log(
      `targets: prepare ≥ ${TARGET.prepareRatio} × bare ${verdict(holds.prepare_ratio)}, prepare p99 ≤ ${TARGET.prepareP99Ms} ms ${verdict(holds.prepare_p99)}, ` +
        `GET ≥ ${TARGET.getRatio} × bare ${verdict(holds.get_ratio)}, api RSS ≤ ${TARGET.apiRssMb} MB ${verdict(holds.api_rss)}, worker RSS ≤ ${TARGET.workerRssMb} MB ${verdict(holds.worker_rss)}`,
    );
    console.log(JSON.stringify({ bench: 'api-throughput', seconds: SECONDS, connections: CONNECTIONS, results: result, ratios, memory: rss, holds }));
    if (result.some((r) => r.failed > 0)) throw new Error(`failed requests: ${result.map((r) => `${r.name} ${r.failed}`).join(', ')}`);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
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
