/**
 * The local devnet the benches and scripts/record-histories.ts make in-process (nothing from test/): Temporal dev
 * server (in memory), ledger simulator, two anvils with the system contracts (optionally deployed with the 7
 * validators' set and the validators running), in-memory PGlite (or a fresh database on DATABASE_URL's server,
 * dropped at the end), one worker, the API app (called in-process with app.request) with an organization and a
 * key; plus helpers to make an active identity, deploy TestTarget, and prepare, sign, submit and follow an intent
 * through the API.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { inArray } from 'drizzle-orm';
import { parseEther, type Address, type Hex } from 'viem';
import { createApp } from '../../src/api/app.js';
import { testTargetAbi, testTargetBytecode } from '../../src/chain/abi/index.js';
import { createChainClients, type ChainWriter } from '../../src/chain/clients.js';
import { loadConfig, type ChainConfig, type Config } from '../../src/config.js';
import { createApiKey } from '../../src/db/api-keys.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { createOrganization } from '../../src/db/organizations.js';
import { intentChains } from '../../src/db/schema.js';
import { startAnvil, type AnvilHandle } from '../../src/devnet/anvil.js';
import { ANVIL_DEV_KEY_0 } from '../../src/devnet/contracts.js';
import { setupIdentityDevnet } from '../../src/devnet/identity.js';
import { freePort } from '../../src/devnet/ports.js';
import { createScratchDatabase } from '../../src/devnet/postgres.js';
import { spawnManaged, waitUntilReady } from '../../src/devnet/process.js';
import { PROJECT_ROOT, startTemporalDevServer } from '../../src/devnet/temporal.js';
import { startDevnetValidators, validatorAuthEnv, type DevnetValidators } from '../../src/devnet/validators.js';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import { createLogger } from '../../src/log.js';
import { connectTemporalClient } from '../../src/temporal/client.js';
import { loadTemporalProfile } from '../../src/temporal/profile.js';
import { createConfiguredWorker, installTemporalRuntime } from '../../src/temporal/worker.js';
import { ensureIntentExpiry } from '../../src/temporal/intents.js';
import { compiledEntry } from '../../test/support/build.js';
import { testTargetLeg } from '../../test/support/test-target.js';

/** anvil's second and third development accounts: not the relayer (account 0) */
export const ANVIL_KEY_1: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
export const ANVIL_KEY_2: Hex = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a';

export const CHAINS = [
  { name: 'ethereum-sepolia', chainId: 11155111 },
  { name: 'polygon-amoy', chainId: 80002 },
] as const;

export type Json = any;

export interface BenchDevnet {
  config: Config;
  database: Database;
  client: Awaited<ReturnType<typeof connectTemporalClient>>;
  app: ReturnType<typeof createApp>;
  sim: LedgerSimHandle;
  anvils: AnvilHandle[];
  validators?: DevnetValidators;
  /** the organization's API key headers */
  headers: Record<string, string>;
  /** the scratch PostgreSQL database of this run (undefined on PGlite) */
  databaseName?: string;
  /** in-process API call with the organization's key (and `extra` headers); the body parsed as JSON (text when it is not JSON) */
  call(method: string, path: string, body?: unknown, extra?: Record<string, string>): Promise<{ status: number; body: Json; headers: Headers }>;
  stop(): Promise<void>;
}

export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `validators: true` starts the 7 validator nodes in this process and deploys the system contracts with their BLS
 * keys as the set (what the proof cycle needs); `'processes'` then moves each node to its own process
 * (src/bin/validator.ts, same keys, state and port), as deployed; otherwise the contracts get a throwaway set.
 */
export async function startBenchDevnet(opts: {
  name: string;
  validators?: boolean | 'processes';
  /** 'process': the worker runs as its own process from the compiled build (`npm run worker`, as deployed); needs DATABASE_URL */
  worker?: 'in-process' | 'process';
  blockIntervalMs?: number;
  logLevel?: 'error' | 'warn' | 'info';
}): Promise<BenchDevnet> {
  const base = loadConfig();
  if (opts.worker === 'process' && !base.databaseUrl) throw new Error('a worker process needs a database it can share: set DATABASE_URL');
  const logger = createLogger(opts.logLevel ?? 'error');
  const dataDir = mkdtempSync(join(tmpdir(), `pgw-${opts.name}-`));
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
    stops.length = 0;
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    installTemporalRuntime(logger, { shutdownSignals: [] });
    const profile = { ...loadTemporalProfile(), port: await freePort(), dbFilename: null, logLevel: 'error' as const };
    const temporal = await startTemporalDevServer(profile, { cliPath: base.temporal.cliPath, headless: true, logger });
    stops.push(temporal.stop);
    const sim = await startLedgerSim({ port: 0, blockIntervalMs: opts.blockIntervalMs ?? 20 });
    stops.push(sim.stop);
    const anvils = await Promise.all(CHAINS.map((c) => startAnvil({ chainId: c.chainId })));
    for (const a of anvils) stops.push(a.stop);
    let chains: ChainConfig[] = CHAINS.map((c, i) => ({ ...c, rpcUrl: anvils[i]!.rpcUrl, confirmations: 2 }));
    let validators: DevnetValidators | undefined;
    if (opts.validators) {
      const vn = await startDevnetValidators({ dataDir, ledgerUrl: sim.url, chains, deployerKey: ANVIL_DEV_KEY_0, observeTimeoutMs: 30_000 });
      validators = vn;
      stops.push(vn.stop);
      chains = chains.map((c) => ({ ...c, contracts: vn.contracts }));
      if (opts.validators === 'processes') {
        await vn.stop();
        const env = { ...process.env, DATA_DIR: dataDir, LEDGER_URL: sim.url, CHAINS: JSON.stringify(chains), LOG_LEVEL: 'error', ...validatorAuthEnv(vn) };
        const children = vn.validators.map((v) =>
          spawnManaged(
            `validator ${v.index}`,
            process.execPath,
            [
              '--import',
              'tsx',
              join(PROJECT_ROOT, 'src/bin/validator.ts'),
              '--index',
              String(v.index),
              '--port',
              new URL(v.url).port,
              '--proof-anchor',
              vn.contracts.proofAnchor,
              '--account-factory',
              vn.contracts.accountFactory,
              '--protocol-adi',
              vn.protocol.adiUrl,
            ],
            { cwd: PROJECT_ROOT, env },
          ),
        );
        stops.push(async () => void (await Promise.all(children.map((c) => c.stop()))));
        await Promise.all(
          vn.validators.map((v, i) =>
            waitUntilReady(`validator ${v.index}`, async () => (await fetch(`${v.url}/v1/health`)).ok, { timeoutMs: 60_000, process: children[i] }),
          ),
        );
      }
    }
    const parts = await setupIdentityDevnet({ dataDir, ledgerUrl: sim.url, chains, sponsorKey: undefined, relayerPrivateKey: undefined });
    const config: Config = {
      ...base,
      dataDir,
      ledgerUrl: sim.url,
      validatorUrls: validators?.validators.map((v) => v.url) ?? [],
      validatorClientSeed: validators?.clientKey,
      ...parts,
      temporal: { ...base.temporal, address: temporal.address, namespace: temporal.namespace, taskQueue: `${opts.name}-${randomBytes(4).toString('hex')}` },
    };
    // DATABASE_URL (Postgres) when set: a fresh database on that cluster, dropped at the end, so that no run pays
    // for an earlier run's rows (the pending scan reads every active identity's accounts); else in-memory PGlite
    let databaseUrl: string | undefined;
    if (base.databaseUrl) {
      const scratch = await createScratchDatabase(base.databaseUrl);
      stops.push(scratch.drop);
      databaseUrl = scratch.url;
    }
    const databaseName = databaseUrl ? decodeURIComponent(new URL(databaseUrl).pathname.slice(1)) : undefined;
    const database = await openDatabase(databaseUrl ? { databaseUrl } : { pgliteDir: 'memory' });
    stops.push(() => database.close());
    if (opts.worker === 'process') {
      const logFile = join(dataDir, 'worker.log');
      const env = {
        ...process.env,
        DATABASE_URL: databaseUrl,
        DATA_DIR: dataDir,
        LEDGER_URL: config.ledgerUrl,
        CHAINS: JSON.stringify(config.chains),
        VALIDATOR_URLS: config.validatorUrls.join(','),
        VALIDATOR_CLIENT_KEY: config.validatorClientSeed,
        SPONSOR_KEY: config.sponsorKey,
        RELAYER_PRIVATE_KEY: config.relayerPrivateKey,
        TEMPORAL_ADDRESS: config.temporal.address,
        TEMPORAL_NAMESPACE: config.temporal.namespace,
        TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
        LOG_LEVEL: 'info',
      };
      // PROFILE_DIR=dir: the worker writes a V8 CPU profile of its whole run there when it stops
      const profile = process.env.PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : [];
      const child = spawnManaged('worker', process.execPath, [...profile, ...compiledEntry('worker')], {
        cwd: PROJECT_ROOT,
        env,
        logFile,
      });
      stops.push(() => child.stop());
      await waitUntilReady('worker', async () => readFileSync(logFile, 'utf8').includes('"worker running"'), { timeoutMs: 60_000, process: child });
    } else {
      const { worker, connection } = await createConfiguredWorker(config, { db: database.db, shutdownGraceTime: '1s' });
      const running = worker.run();
      stops.push(async () => {
        worker.shutdown();
        await running;
        await connection.close();
      });
    }
    const client = await connectTemporalClient(config.temporal);
    stops.push(() => client.connection.close());
    // as at a worker's start-up (the worker process does it itself): the expiry sweep of unsigned intents
    await ensureIntentExpiry(client, config.temporal.taskQueue);
    const app = createApp({ config, database, temporal: client, logger });
    const org = await createOrganization(database.db, { name: opts.name, identityQuota: 10_000, creditGrant: 100_000_000n });
    const { rawKey } = await createApiKey(database.db, { orgId: org.id, name: opts.name, rateLimitRpm: 1_000_000 });
    const headers = { 'X-API-Key': rawKey, 'content-type': 'application/json' };
    const call = async (method: string, path: string, body?: unknown, extra?: Record<string, string>) => {
      const res = await app.request(path, {
        method,
        headers: extra ? { ...headers, ...extra } : headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let json: Json = text;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: res.status, body: json, headers: res.headers };
    };
    return { config, database, client, app, sim, anvils, validators, headers, databaseName, call, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** A funded wallet per chain that is not the relayer. */
export function benchWallets(dn: BenchDevnet, privateKey: Hex = ANVIL_KEY_1): ChainWriter[] {
  return CHAINS.map((c, i) => createChainClients({ rpcUrl: dn.anvils[i]!.rpcUrl, chainId: c.chainId, privateKey, pollingIntervalMs: 25 }));
}

/** TestTarget on every chain (same address on both: same deployer, same nonce is not assumed). */
export async function deployTestTargets(wallets: ChainWriter[]): Promise<Address[]> {
  const out: Address[] = [];
  for (const w of wallets) {
    const hash = await w.wallet.deployContract({ abi: testTargetAbi, bytecode: testTargetBytecode });
    out.push((await w.public.waitForTransactionReceipt({ hash })).contractAddress as Address);
  }
  return out;
}

export interface BenchIdentity {
  id: string;
  adiUrl: string;
  keyPageUrl: string;
  dataAccountUrl: string;
  account: Address;
  secretKey: Uint8Array;
  publicKey: string;
}

/** POST /v1/identity on both chains and wait until active. */
export async function createBenchIdentity(dn: BenchDevnet, credits = 1000, pollMs = 50): Promise<BenchIdentity> {
  const secretKey = Uint8Array.from(randomBytes(32));
  const publicKey = Buffer.from(ed25519.getPublicKey(secretKey)).toString('hex');
  const r = await dn.call('POST', '/v1/identity', {
    name: `bench-${randomBytes(6).toString('hex')}`,
    public_key: publicKey,
    chains: CHAINS.map((c) => c.name),
    credits,
  });
  if (r.status !== 202) throw new Error(`identity: ${r.status} ${JSON.stringify(r.body)}`);
  const id = r.body.identity.id as string;
  for (;;) {
    const g = await dn.call('GET', `/v1/identity/${id}`);
    if (g.body.status === 'active') {
      return {
        id,
        adiUrl: g.body.adi_url,
        keyPageUrl: g.body.key_page_url,
        dataAccountUrl: g.body.data_account_url,
        account: g.body.chain_accounts[0].address,
        secretKey,
        publicKey,
      };
    }
    if (g.body.status !== 'creating') throw new Error(`identity ${id} ${g.body.status}: ${g.body.error_message}`);
    await sleep(pollMs);
  }
}

/** 1 ETH into the identity's account on every chain. */
export async function fundAccount(wallets: ChainWriter[], account: Address): Promise<void> {
  for (const w of wallets) {
    const h = await w.wallet.sendTransaction({ to: account, value: parseEther('1') });
    await w.public.waitForTransactionReceipt({ hash: h });
  }
}

export { arg, CALLED_EVENT } from '../../test/support/test-target.js';

/** A TestTarget.record(a) leg with the Called event (from the account) and the lastArg slot (3) expected. */
export function recordLeg(chain: { name: string; chainId: number }, account: Address, target: Address, a: Hex) {
  return testTargetLeg({ chain, account, target, arg: a });
}

/** POST /v1/transaction → the prepared intent (201 body). */
export async function prepareIntent(dn: BenchDevnet, who: BenchIdentity, legs: Json[]): Promise<Json> {
  const r = await dn.call('POST', '/v1/transaction', { identity_id: who.id, intent: { adiUrl: who.adiUrl, legs } });
  if (r.status !== 201) throw new Error(`prepare: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Sign hash_to_sign and POST /v1/transaction/{id}/signature. */
export async function submitIntent(dn: BenchDevnet, who: BenchIdentity, prepared: Json): Promise<Json> {
  const signature = Buffer.from(ed25519.sign(Buffer.from(prepared.signing_data.hash_to_sign, 'hex'), who.secretKey)).toString('hex');
  const r = await dn.call('POST', `/v1/transaction/${prepared.intent_id}/signature`, { signature, public_key: who.publicKey });
  if (r.status !== 200) throw new Error(`submit: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** GET /v1/transaction/{id} every pollMs until completed; throws on failed/expired. */
const STAGES = ['attested', 'anchored', 'executed', 'observed', 'recorded'] as const;

/**
 * Median and max ms of each step of the intents' chain cycles (each intent as GET /v1/transaction/{id} answered
 * it once completed, with its row's step times): submitted → attested → anchored (created + proven) → executed →
 * observed → recorded → completed. For a batched intent "attested" is its batch's round (the window included) and
 * "anchored" its batch's anchor.
 */
export async function stageSplit(dn: BenchDevnet, intents: Json[]) {
  const rows = await dn.database.db
    .select({ intentId: intentChains.intentId, stepTimes: intentChains.stepTimes })
    .from(intentChains)
    .where(
      inArray(
        intentChains.intentId,
        intents.map((i) => i.intent_id as string),
      ),
    );
  const byId = new Map(rows.map((r) => [r.intentId, r.stepTimes]));
  const names = [
    'submitted → attested',
    'attested → anchored (createAnchor + executeComprehensiveProof)',
    'anchored → executed (executeGovernanceProofDirect)',
    'executed → observed (finality + observe quorum)',
    'observed → recorded (proof_result on the ledger)',
    'recorded → completed (intent finalised)',
  ];
  const deltas: number[][] = names.map(() => []);
  for (const intent of intents) {
    const st = byId.get(intent.intent_id) ?? {};
    const ts = [Date.parse(intent.submitted_at), ...STAGES.map((s) => Date.parse(st[s]!)), Date.parse(intent.completed_at)];
    for (let i = 0; i < names.length; i++) deltas[i]!.push(ts[i + 1]! - ts[i]!);
  }
  return names.map((stage, i) => ({ stage, median_ms: Math.round(pct(deltas[i]!, 0.5)), max_ms: Math.round(Math.max(...deltas[i]!)) }));
}

/**
 * The intent once completed, followed as a client should: each GET sends the ETag of the last answer with
 * `Prefer: wait`, so the API answers when the intent changes (or after the wait, 304) instead of being polled.
 */
export async function waitCompleted(dn: BenchDevnet, intentId: string, timeoutMs = 120_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  let r = await dn.call('GET', `/v1/transaction/${intentId}`);
  let etag = r.headers.get('etag') ?? undefined;
  for (;;) {
    if (r.status !== 200) throw new Error(`GET intent ${intentId}: ${r.status} ${JSON.stringify(r.body)}`);
    if (r.body.status === 'completed') return r.body;
    if (['failed', 'expired'].includes(r.body.status)) throw new Error(`intent ${intentId} ${r.body.status}: ${r.body.error_message}`);
    if (Date.now() > deadline) {
      // a worker of its own logs to a file in the data directory: its warnings and errors go with the report
      const workerLog = join(dn.config.dataDir, 'worker.log');
      const warnings = existsSync(workerLog)
        ? readFileSync(workerLog, 'utf8')
            .split('\n')
            .filter((l) => /"level":"(warn|error)"/.test(l))
            .slice(-20)
        : [];
      throw new Error(
        `intent ${intentId} not completed: ${JSON.stringify(r.body)}; workflows: ${await workflowState(dn, intentId)}; chains: ${await chainState(dn)}; worker warnings: ${warnings.join('\n') || 'none'}`,
      );
    }
    const wait = Math.max(1, Math.min(30, Math.ceil((deadline - Date.now()) / 1000)));
    const next = await dn.call('GET', `/v1/transaction/${intentId}`, undefined, etag ? { 'If-None-Match': etag, Prefer: `wait=${wait}` } : undefined);
    if (next.status === 304) continue;
    r = next;
    etag = r.headers.get('etag') ?? undefined;
  }
}

/**
 * Where an intent's workflows stand, for a bench that gave up on it: per workflow (the intent's and each chain's),
 * its status, a pending workflow task, the pending activities with their last failure, and its last history events.
 */
async function workflowState(dn: BenchDevnet, intentId: string): Promise<string> {
  const out: string[] = [];
  for (const c of [null, ...CHAINS.map((x) => x.name)]) {
    const id = c ? `intent-${intentId}-${c}` : `intent-${intentId}`;
    const handle = dn.client.workflow.getHandle(id);
    const d = await handle.describe().catch(() => undefined);
    if (!d) continue;
    const task = d.raw.pendingWorkflowTask;
    out.push(`${id} ${d.status.name}${task ? ` workflow task ${task.state} attempt ${task.attempt}` : ''}`);
    for (const a of d.raw.pendingActivities ?? []) {
      out.push(`${id} ${a.activityType?.name} attempt ${a.attempt} state ${a.state} last failure: ${a.lastFailure?.message ?? 'none'}`);
    }
    const events = (await handle.fetchHistory().catch(() => undefined))?.events ?? [];
    // a long local activity shows as a run of workflow tasks (the SDK extends the task while it runs): count those
    // and show the events before them
    const isTask = (e: (typeof events)[number]) =>
      !!(e.workflowTaskScheduledEventAttributes || e.workflowTaskStartedEventAttributes || e.workflowTaskCompletedEventAttributes);
    let trailing = 0;
    while (trailing < events.length && isTask(events[events.length - 1 - trailing]!)) trailing++;
    const last = events
      .slice(0, events.length - trailing)
      .slice(-8)
      .map((e) => {
        const failure = e.workflowTaskFailedEventAttributes?.failure?.message ?? e.activityTaskFailedEventAttributes?.failure?.message;
        const marker = e.markerRecordedEventAttributes?.failure?.message;
        // the event's kind is the one *EventAttributes field it carries
        const kind = Object.keys(e)
          .find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k])
          ?.replace(/EventAttributes$/, '');
        return `${e.eventId} ${kind ?? 'event'}${failure || marker ? ` (${failure ?? marker})` : ''}`;
      });
    out.push(`${id} last events: ${last.join(', ')}${trailing ? `, then ${trailing} workflow task events` : ''}`);
  }
  return out.join(' | ') || 'none';
}

/**
 * What each chain's node holds, for a bench that gave up on an intent: the latest block and its base fee, and every
 * transaction in the mempool (pending: minable now; queued: behind a nonce gap) with its sender, nonce and fee cap,
 * beside each sender's mined and pending nonce counts.
 */
async function chainState(dn: BenchDevnet): Promise<string> {
  const out: string[] = [];
  for (const [i, anvil] of dn.anvils.entries()) {
    const rpc = async (method: string, params: unknown[] = []) => {
      const res = await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return ((await res.json()) as { result?: unknown }).result;
    };
    try {
      const block = (await rpc('eth_getBlockByNumber', ['latest', false])) as { number: string; baseFeePerGas?: string };
      type PoolTx = { hash: string; nonce: string; maxFeePerGas?: string; gasPrice?: string };
      const pool = (await rpc('txpool_content')) as Record<'pending' | 'queued', Record<string, Record<string, PoolTx>>>;
      const senders = new Set([...Object.keys(pool?.pending ?? {}), ...Object.keys(pool?.queued ?? {})]);
      const txs: string[] = [];
      for (const kind of ['pending', 'queued'] as const) {
        for (const [from, byNonce] of Object.entries(pool?.[kind] ?? {})) {
          for (const tx of Object.values(byNonce))
            txs.push(`${kind} ${from.slice(0, 10)} nonce ${Number(tx.nonce)} ${tx.hash.slice(0, 12)} fee cap ${Number(tx.maxFeePerGas ?? tx.gasPrice)}`);
        }
      }
      const nonces: string[] = [];
      for (const from of senders) {
        nonces.push(
          `${from.slice(0, 10)} mined ${Number(await rpc('eth_getTransactionCount', [from, 'latest']))} pending ${Number(await rpc('eth_getTransactionCount', [from, 'pending']))}`,
        );
      }
      out.push(
        `${CHAINS[i]?.name ?? i}: block ${Number(block.number)} base fee ${Number(block.baseFeePerGas ?? 0)}; mempool: ${txs.join(', ') || 'empty'}${nonces.length ? `; ${nonces.join(', ')}` : ''}`,
      );
    } catch (e) {
      out.push(`${CHAINS[i]?.name ?? i}: unreadable (${(e as Error).message})`);
    }
  }
  return out.join(' | ');
}

/**
 * CPU time spent on this machine while `during` runs, from /proc (Linux). `devnetMs` counts only what the run
 * itself costs: this process and every process it started (Temporal, anvils, the ledger's and validators' or the
 * worker's processes), plus the PostgreSQL backends serving `database` (the bench's scratch database);
 * `byProcess` splits it by name (`node` split into this bench, each validator process by its --index, and the
 * worker), and `otherMs` is what the rest of the machine (other work, shared PostgreSQL processes, the kernel)
 * spent meanwhile. A figure of cost, not of latency: on a machine with C cores, n cycles at x CPU-ms each cannot
 * finish in less than n·x/C ms however they are scheduled.
 */
export async function cpuDuring<T>(
  during: () => Promise<T>,
  opts: { database?: string } = {},
): Promise<{ result: T; machineMs: number; devnetMs: number; otherMs: number; byProcess: Record<string, number> }> {
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  const machine = () => {
    try {
      const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
      // user nice system idle iowait irq softirq steal: everything but idle and iowait
      return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + (f[7] ?? 0)) * tick;
    } catch {
      return NaN;
    }
  };
  // by pid: a kernel worker's name changes with the work item it runs, so a name is no key
  const processes = () => {
    const out = new Map<string, { name: string; ms: number; ppid: string; database?: string }>();
    let pids: string[] = [];
    try {
      pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
    } catch {
      return out;
    }
    for (const pid of pids) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ms = (Number(f[11]) + Number(f[12])) * tick; // utime + stime
        let name = comm.startsWith('kworker/') ? 'kernel workers (kworker)' : comm;
        let database: string | undefined;
        if (comm.startsWith('node')) {
          const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
          const i = args.indexOf('--index');
          name =
            Number(pid) === process.pid
              ? 'bench process (API, ledger simulator, and the worker and validators unless they run as processes)'
              : i >= 0
                ? 'validator process'
                : args.some((a) => a.endsWith('bin/worker.js'))
                  ? 'worker process'
                  : 'node (other)';
        } else if (comm === 'postgres' && opts.database) {
          // a backend's title: "postgres: <user> <database> <client> <state>"
          database = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]+/)[2];
        }
        out.set(pid, { name, ms, ppid: f[1]!, database });
      } catch {
        /* ended meanwhile */
      }
    }
    return out;
  };
  const m0 = machine();
  const p0 = processes();
  const result = await during();
  const m1 = machine();
  const p1 = processes();
  const ours = new Set([String(process.pid)]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, p] of p1) {
      if (ours.has(pid) || !ours.has(p.ppid)) continue;
      ours.add(pid);
      grew = true;
    }
  }
  const byProcess: Record<string, number> = {};
  let devnetMs = 0;
  for (const [pid, p] of p1) {
    if (!ours.has(pid) && !(opts.database && p.database === opts.database)) continue;
    const d = p.ms - (p0.get(pid)?.ms ?? 0);
    if (d <= 0) continue;
    byProcess[p.name] = (byProcess[p.name] ?? 0) + d;
    devnetMs += d;
  }
  return { result, machineMs: m1 - m0, devnetMs, otherMs: Math.max(0, m1 - m0 - devnetMs), byProcess };
}
