/**
 * Start-up time and memory of the production entry points, from source through tsx (`npm run dev:api|dev:worker`)
 * and from the compiled build (`npm run api|worker`, node dist/src/bin/*.js):
 *   - start-up: process spawn → ready: the api's "api listening" log line (database open, Temporal client
 *     connected, the app built, the port bound); the worker's "worker running" (connected, schedules made sure of,
 *     its workers created with the workflow bundle);
 *   - RSS of the process once ready (VmRSS from /proc), and 5 s later (the worker idle, polling).
 * Each figure is the median of `runs` starts (default 3). The api and the worker need a Temporal server and a
 * PostgreSQL database: a headless dev server is started here, the database is DATABASE_URL or TEST_DATABASE_URL
 * (or a local PostgreSQL started here). The worker's ledger, chains and validators are placeholders: it does not
 * reach them before it is ready.
 *
 *   npm run bench:startup            (builds first)
 *   npx tsx bench/startup.ts [runs]  (with an existing build)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger } from '../src/log.js';
import { freePort } from '../src/devnet/ports.js';
import { createScratchDatabase, startLocalPostgres } from '../src/devnet/postgres.js';
import { PROJECT_ROOT, startTemporalDevServer } from '../src/devnet/temporal.js';
import { loadTemporalProfile } from '../src/temporal/profile.js';

type Role = 'api' | 'worker';
type Mode = 'tsx' | 'compiled';

const runs = Number(process.argv[2] ?? 3);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hex = (n: number) => randomBytes(n).toString('hex');

function argv(mode: Mode, role: Role): string[] {
  return mode === 'tsx' ? ['--import', 'tsx', join('src', 'bin', `${role}.ts`)] : ['--enable-source-maps', join('dist', 'src', 'bin', `${role}.js`)];
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** One start: ms to ready, RSS at ready and 5 s later. */
async function once(mode: Mode, role: Role, env: Record<string, string>): Promise<{ ms: number; rss: number; rssLater: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, argv(mode, role), {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, API_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => void (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => void (out += d.toString()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${mode} ${role} exited ${child.exitCode}: ${out.slice(-2000)}`);
      if (out.includes(role === 'worker' ? '"worker running"' : '"api listening"')) break;
      if (performance.now() - t0 > 120_000) throw new Error(`${mode} ${role} not ready in 120 s: ${out.slice(-2000)}`);
      await sleep(10);
    }
    const ms = performance.now() - t0;
    const rss = rssMb(child.pid!);
    await sleep(5000);
    return { ms, rss, rssLater: rssMb(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  if (!existsSync(join(PROJECT_ROOT, 'dist', 'src', 'bin', 'api.js'))) throw new Error('no build: run npm run build (or npm run bench:startup)');
  const logger = createLogger('warn', { process: 'bench-startup' });
  const profile = { ...loadTemporalProfile(), port: await freePort(), dbFilename: null, logLevel: 'error' as const };
  const temporal = await startTemporalDevServer(profile, { headless: true, logger });
  const pg = process.env.DATABASE_URL || process.env.TEST_DATABASE_URL ? undefined : await startLocalPostgres();
  const server = process.env.DATABASE_URL || process.env.TEST_DATABASE_URL || pg?.url;
  if (!server) throw new Error('no PostgreSQL: set DATABASE_URL or TEST_DATABASE_URL, or install postgresql');
  const scratch = await createScratchDatabase(server);
  const contracts = { proofAnchor: `0x${hex(20)}`, accountFactory: `0x${hex(20)}` };
  const env: Record<string, string> = {
    GATEWAY_ENV: 'production',
    DATABASE_URL: scratch.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TEMPORAL_TASK_QUEUE: 'bench-startup',
    LOG_LEVEL: 'info',
    LEDGER_URL: 'http://127.0.0.1:9',
    CHAINS: JSON.stringify([{ name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: 'http://127.0.0.1:9', confirmations: 2, contracts }]),
    VALIDATOR_URLS: 'http://127.0.0.1:9',
    VALIDATOR_CLIENT_KEY: hex(32),
    SPONSOR_KEY: hex(32),
    RELAYER_PRIVATE_KEY: `0x${hex(32)}`,
  };
  const rows: Record<string, string | number>[] = [];
  try {
    // the first start of each pays the database migration and schedule creation: not measured
    await once('compiled', 'api', env);
    await once('compiled', 'worker', env);
    for (const role of ['api', 'worker'] as const) {
      for (const mode of ['tsx', 'compiled'] as const) {
        const r = [];
        for (let i = 0; i < runs; i++) r.push(await once(mode, role, env));
        rows.push({
          process: role,
          run: mode === 'tsx' ? `tsx src/bin/${role}.ts` : `node dist/src/bin/${role}.js`,
          'start-up ms (median)': Math.round(median(r.map((x) => x.ms))),
          'RSS at ready MB': Math.round(median(r.map((x) => x.rss))),
          'RSS 5 s later MB': Math.round(median(r.map((x) => x.rssLater))),
        });
      }
    }
  } finally {
    await scratch.drop();
    await pg?.stop();
    await temporal.stop();
  }
  console.table(rows);
  console.log(JSON.stringify({ startup: rows, runs }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
