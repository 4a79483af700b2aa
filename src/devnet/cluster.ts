/**
 * The production topology on one machine, every gateway part a process of its own running the compiled build
 * (dist/, `npm run build`): N API processes and M worker processes sharing one PostgreSQL database and one Temporal
 * namespace, and the 7 validators as processes (`node dist/src/bin/validator.js`). Around them, as `npm start`
 * starts them: a Temporal dev server (unless one is given), two anvil chains and the ledger simulator (in this
 * process). `npm run cluster` (src/bin/cluster.ts) starts it for a person to look at; test/cluster/cluster.test.ts
 * runs intents through it while it kills and restarts processes.
 *
 *   const cluster = await startCluster({ databaseUrl, dataDir, logger });
 *   cluster.apiUrls                  -> one URL per API process
 *   await cluster.apis[0].kill();    -> SIGKILL, as a crash; .start() brings it back on the same port
 *   await cluster.stop();
 *
 * Every process logs at info level to its file (a worker is ready when it logs "worker running").
 * The validators are set up by the devnet's own code (startDevnetValidators: keys under <dataDir>/validators, the
 * system contracts deployed with their BLS keys, the protocol ledger accounts, the gateway's client key they trust);
 * its in-process servers are then closed and the same nodes started as processes on the same ports.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DEVNET_CHAINS, type ChainConfig } from '../config.js';
import { bootstrapAdminKey } from '../db/api-keys.js';
import { openDatabase } from '../db/client.js';
import { startLedgerSim } from '../ledger-sim/index.js';
import type { Logger } from '../log.js';
import { loadTemporalProfile, type TemporalProfile } from '../temporal/profile.js';
import { startAnvil } from './anvil.js';
import { ANVIL_DEV_KEY_0 } from './contracts.js';
import { setupIdentityDevnet } from './identity.js';
import { freePort } from './ports.js';
import { spawnManaged, waitUntilReady, type ManagedProcess } from './process.js';
import { PROJECT_ROOT, startTemporalDevServer } from './temporal.js';
import { startDevnetValidators, validatorAuthEnv, validatorSummaryRows } from './validators.js';

export interface ClusterOptions {
  /** the PostgreSQL database every API and worker process shares (migrated here before they start) */
  databaseUrl: string;
  /** validator keys and state, the sponsor key, logs (<dataDir>/logs/<process>.log) */
  dataDir: string;
  logger: Logger;
  apis?: number;
  workers?: number;
  /** the API processes' ports (default: free ports) */
  apiPorts?: number[];
  /** an existing Temporal server; default: a dev server of its own (temporal-dev.yml, in memory) */
  temporal?: { address: string; namespace: string };
  temporalProfile?: Partial<TemporalProfile>;
  temporalCliPath?: string;
  /** default `cluster`; tests sharing a Temporal server use one of their own */
  taskQueue?: string;
  ledgerBlockIntervalMs?: number;
}

/** One process of the cluster: started, crashed (SIGKILL), stopped and started again with the same settings. */
export interface ClusterProcess {
  readonly name: string;
  readonly running: boolean;
  readonly pid: number | undefined;
  start(): Promise<void>;
  /** SIGKILL, as a crash: nothing drains */
  kill(): Promise<void>;
  /** SIGTERM, the orderly stop */
  stop(): Promise<void>;
}

export interface Cluster {
  apiUrls: string[];
  apis: ClusterProcess[];
  workers: ClusterProcess[];
  validators: ClusterProcess[];
  /** the environment of the API and worker processes (secrets included: for tests and the operator's eyes only) */
  gatewayEnv: Record<string, string>;
  chains: ChainConfig[];
  ledgerUrl: string;
  temporal: { address: string; namespace: string; uiUrl?: string };
  /** the bootstrap admin key, when this start found an empty database */
  adminKey?: string;
  /** label/value rows for a summary (URLs, chains, validators, logs) */
  rows: [string, string][];
  stop(): Promise<void>;
}

/** `node <args> dist/src/bin/<name>.js`: what `npm run api|worker|validator` runs. */
export function compiledBin(name: 'api' | 'worker' | 'validator'): string {
  return join(PROJECT_ROOT, 'dist', 'src', 'bin', `${name}.js`);
}

function assertBuilt() {
  for (const name of ['api', 'worker', 'validator'] as const) {
    if (!existsSync(compiledBin(name))) throw new Error(`${compiledBin(name)} is missing: run npm run build first`);
  }
}

/** The log file's text written since `from` (its size when the process was started). */
function logSince(file: string, from: number): string {
  if (!existsSync(file)) return '';
  return readFileSync(file).subarray(from).toString();
}

async function answers(url: string, ok: (status: number) => boolean): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.body?.cancel();
  return ok(res.status);
}

function clusterProcess(p: {
  name: string;
  bin: 'api' | 'worker' | 'validator';
  args?: string[];
  env: Record<string, string>;
  logFile: string;
  ready: (proc: ManagedProcess, logFrom: number) => Promise<boolean>;
}): ClusterProcess {
  let proc: ManagedProcess | undefined;
  const alive = () => !!proc && proc.child.exitCode === null && proc.child.signalCode === null;
  return {
    name: p.name,
    get running() {
      return alive();
    },
    get pid() {
      return alive() ? proc?.child.pid : undefined;
    },
    async start() {
      if (alive()) return;
      const from = existsSync(p.logFile) ? statSync(p.logFile).size : 0;
      const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...p.env };
      const started = spawnManaged(p.name, process.execPath, ['--enable-source-maps', compiledBin(p.bin), ...(p.args ?? [])], {
        cwd: PROJECT_ROOT,
        env,
        logFile: p.logFile,
      });
      proc = started;
      await waitUntilReady(p.name, () => p.ready(started, from), { timeoutMs: 90_000, intervalMs: 100, process: started });
    },
    async kill() {
      if (!proc || !alive()) return;
      try {
        process.kill(-proc.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      await proc.exited;
    },
    async stop() {
      await proc?.stop();
    },
  };
}

export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  assertBuilt();
  const log = o.logger;
  const logDir = join(o.dataDir, 'logs');
  const stack: { name: string; stop: () => Promise<void> }[] = [];
  const stopAll = async () => {
    for (const part of stack.reverse()) {
      await part.stop().catch((err: unknown) => log.warn(`stopping ${part.name} failed`, { err }));
    }
    stack.length = 0;
  };
  try {
    let temporal: Cluster['temporal'];
    if (o.temporal) temporal = o.temporal;
    else {
      const profile = { ...loadTemporalProfile(), dbFilename: null, ...o.temporalProfile };
      log.info('starting Temporal dev server', { port: profile.port, ui_port: profile.uiPort });
      const server = await startTemporalDevServer(profile, { cliPath: o.temporalCliPath, logFile: join(logDir, 'temporal.log'), logger: log });
      stack.push({ name: 'temporal', stop: server.stop });
      temporal = { address: server.address, namespace: server.namespace, uiUrl: server.uiUrl };
    }

    const anvils = await Promise.all(
      DEVNET_CHAINS.map((c) =>
        startAnvil({ chainId: c.chainId, logFile: join(logDir, `anvil-${c.name}.log`), stateFile: join(o.dataDir, 'chains', `${c.name}.json`) }),
      ),
    );
    for (const a of anvils) stack.push({ name: `anvil ${a.chainId}`, stop: a.stop });
    const sim = await startLedgerSim({ port: 0, blockIntervalMs: o.ledgerBlockIntervalMs, stateFile: join(o.dataDir, 'ledger-sim.json') });
    stack.push({ name: 'ledger simulator', stop: sim.stop });
    let chains: ChainConfig[] = DEVNET_CHAINS.map((c, i) => ({ ...c, rpcUrl: anvils[i]!.rpcUrl }));

    // the devnet's validator set-up, then its nodes as processes of their own on the same ports
    log.info('setting up the validators (contracts, protocol ledger accounts)');
    const vn = await startDevnetValidators({ dataDir: o.dataDir, ledgerUrl: sim.url, chains, deployerKey: ANVIL_DEV_KEY_0, log: (m) => log.info(m) });
    await vn.stop();
    chains = chains.map((c) => ({ ...c, contracts: vn.contracts }));
    const identity = await setupIdentityDevnet({ dataDir: o.dataDir, ledgerUrl: sim.url, chains, sponsorKey: undefined, relayerPrivateKey: undefined });
    const auth = validatorAuthEnv(vn);
    const common = { DATA_DIR: o.dataDir, LEDGER_URL: sim.url, CHAINS: JSON.stringify(identity.chains), LOG_LEVEL: 'info' };
    const validators = vn.validators.map((v) =>
      clusterProcess({
        name: `validator-${v.index}`,
        bin: 'validator',
        args: [
          ...['--index', String(v.index), '--port', new URL(v.url).port, '--finality', 'confirmations'],
          ...['--proof-anchor', vn.contracts.proofAnchor, '--account-factory', vn.contracts.accountFactory],
        ],
        env: { ...common, TRUSTED_GATEWAY_KEYS: auth.TRUSTED_GATEWAY_KEYS },
        logFile: join(logDir, `validator-${v.index}.log`),
        ready: () => answers(`${v.url}/v1/health`, () => true),
      }),
    );
    stack.push({ name: 'validators', stop: () => Promise.all(validators.map((v) => v.stop())).then(() => {}) });
    await Promise.all(validators.map((v) => v.start()));

    // the schema (and the first admin key) before any gateway process opens the database
    const database = await openDatabase({ databaseUrl: o.databaseUrl });
    const bootstrap = await bootstrapAdminKey(database.db, { rateLimitRpm: 60 });
    await database.close();

    const gatewayEnv: Record<string, string> = {
      ...common,
      GATEWAY_ENV: 'production',
      DATABASE_URL: o.databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      TEMPORAL_TASK_QUEUE: o.taskQueue ?? 'cluster',
      ...(temporal.uiUrl ? { TEMPORAL_UI_URL: temporal.uiUrl } : {}),
      VALIDATOR_URLS: vn.validators.map((v) => v.url).join(','),
      VALIDATOR_CLIENT_KEY: auth.VALIDATOR_CLIENT_KEY,
      SPONSOR_KEY: identity.sponsorKey,
      RELAYER_PRIVATE_KEY: identity.relayerPrivateKey,
      SHUTDOWN_GRACE_MS: '2000',
    };
    const workers = Array.from({ length: o.workers ?? 2 }, (_, i) => {
      const logFile = join(logDir, `worker-${i}.log`);
      return clusterProcess({
        name: `worker-${i}`,
        bin: 'worker',
        env: gatewayEnv,
        logFile,
        ready: async (_p, from) => logSince(logFile, from).includes('"worker running"'),
      });
    });
    stack.push({ name: 'workers', stop: () => Promise.all(workers.map((w) => w.stop())).then(() => {}) });
    // the first creates the schedules alone; the others find them
    await workers[0]?.start();
    await Promise.all(workers.slice(1).map((w) => w.start()));

    const ports = o.apiPorts ?? (await Promise.all(Array.from({ length: o.apis ?? 2 }, () => freePort())));
    const apiUrls = ports.map((port) => `http://127.0.0.1:${port}`);
    const apis = ports.map((port, i) =>
      clusterProcess({
        name: `api-${i}`,
        bin: 'api',
        env: { ...gatewayEnv, API_PORT: String(port), PUBLIC_BASE_URL: apiUrls[i]! },
        logFile: join(logDir, `api-${i}.log`),
        ready: () => answers(`${apiUrls[i]}/v1/health`, (s) => s === 200),
      }),
    );
    stack.push({ name: 'apis', stop: () => Promise.all(apis.map((a) => a.stop())).then(() => {}) });
    await Promise.all(apis.map((a) => a.start()));

    const rows: [string, string][] = [
      ...apiUrls.map((u, i) => [`API ${i}`, `${u}  (docs ${u}/docs, health ${u}/v1/health)`] as [string, string]),
      ...workers.map((_, i) => [`Worker ${i}`, `task queue ${gatewayEnv.TEMPORAL_TASK_QUEUE}`] as [string, string]),
      ['Temporal UI', temporal.uiUrl ?? '(headless)'],
      ['Temporal gRPC', temporal.address],
      ['Ledger (simulator)', `${sim.url}/v3`],
      ...chains.map((c) => [`Chain ${c.name}`, `${c.rpcUrl} (chain id ${c.chainId})`] as [string, string]),
      ...validatorSummaryRows(vn),
      ['Database', 'Postgres (DATABASE_URL)'],
      ['Logs', logDir],
      ...(bootstrap?.rawKey ? [['Admin API key', `${bootstrap.rawKey}  (shown once: store it now)`] as [string, string]] : []),
    ];
    return {
      apiUrls,
      apis,
      workers,
      validators,
      gatewayEnv,
      chains: identity.chains,
      ledgerUrl: sim.url,
      temporal,
      adminKey: bootstrap?.rawKey,
      rows,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

export function formatClusterSummary(rows: [string, string][]): string {
  const w = Math.max(...rows.map(([k]) => k.length));
  return [
    '',
    'Gateway cluster is up (compiled build, every part a process):',
    ...rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`),
    '',
    'Ctrl-C stops everything.',
    '',
  ].join('\n');
}
