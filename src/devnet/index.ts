/**
 * The local stack behind `npm start`: Temporal dev server → chains (anvil) → database → worker → API, each
 * started only after the previous one answered. Later parts (ledger simulator, contracts, validators) plug in here.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '../api/app.js';
import { listen, type RunningServer } from '../net/server.js';
import type { Config } from '../config.js';
import { bootstrapAdminKey } from '../db/api-keys.js';
import { openDatabase, type Database } from '../db/client.js';
import { countIdentities } from '../db/identities.js';
import type { Logger } from '../log.js';
import { apiLedgerClient } from '../services/deps.js';
import { connectTemporalClient } from '../temporal/client.js';
import { loadTemporalProfile, withDataDir, type TemporalProfile } from '../temporal/profile.js';
import { ensureSchedules } from '../temporal/schedules.js';
import { createConfiguredWorker, installTemporalRuntime } from '../temporal/worker.js';
import { startLedgerSim, type LedgerSimHandle } from '../ledger-sim/index.js';
import { startAnvil, type AnvilHandle } from './anvil.js';
import { ANVIL_DEV_KEY_0, ensureExampleContract } from './contracts.js';
import { setupIdentityDevnet } from './identity.js';
import { devnetProviderKeks } from './provider-kek.js';
import { startDevnetValidators, validatorSummaryRows } from './validators.js';
import { PROJECT_ROOT, startTemporalDevServer, type TemporalServerHandle } from './temporal.js';

export interface DevnetSummary {
  apiUrl: string;
  docsUrl: string;
  temporalAddress: string;
  temporalUiUrl?: string;
  ledgerUrl: string;
  chains: { name: string; chainId: number; rpcUrl: string }[];
  database: string;
  /** the bootstrap admin key, only on the start that found an empty database (printed once, never stored raw) */
  adminKey?: string;
  /** validators, protocol ledger accounts, system contracts */
  validatorRows: [string, string][];
  /** TestTarget (record(bytes32)) deployed on every local chain, for the README's transaction example */
  exampleContract?: string;
}

export interface Devnet {
  summary: DevnetSummary;
  config: Config;
  stop(): Promise<void>;
}

function loopbackPort(rpcUrl: string): number | undefined {
  const u = new URL(rpcUrl);
  return ['127.0.0.1', 'localhost'].includes(u.hostname) ? Number(u.port) : undefined;
}

/** Where the devnet keeps a local chain's state (anvil --state) between restarts. */
export function chainStateFile(dataDir: string, chainName: string): string {
  return join(dataDir, 'chains', `${chainName}.json`);
}

export class DevnetStateError extends Error {
  override name = 'DevnetStateError';
}

function missingChainStateMessage(dataDir: string, what: string, chains: string[]): string {
  return (
    `${what}, but no saved chain state for ${chains.join(', ')} ` +
    `(${chains.map((c) => chainStateFile(dataDir, c)).join(', ')}): the identities' accounts and the system contracts ` +
    `would not exist on chain, and their transactions would fail. Start with a fresh DATA_DIR ` +
    `(e.g. DATA_DIR=.data-new npm start, or delete ${dataDir}).`
  );
}

/**
 * The local chains without saved state (they start empty). The local chains keep their state under <dataDir>/chains;
 * a data dir that has a ledger, database or validator keys from an earlier run but lacks a chain's state would come
 * up with identities pointing at nothing: refused.
 */
function freshLocalChains(base: Config): string[] {
  const localChainNames = base.chains.filter((c) => loopbackPort(c.rpcUrl) !== undefined).map((c) => c.name);
  const freshChains = localChainNames.filter((name) => !existsSync(chainStateFile(base.dataDir, name)));
  const earlier = ['ledger-sim.json', 'pglite', 'validators'].filter((f) => existsSync(join(base.dataDir, f)));
  if (freshChains.length > 0 && earlier.length > 0) {
    throw new DevnetStateError(missingChainStateMessage(base.dataDir, `DATA_DIR ${base.dataDir} holds an earlier devnet (${earlier.join(', ')})`, freshChains));
  }
  return freshChains;
}

export interface DevnetOptions {
  /** overrides of temporal-dev.yml (tests use free ports and an in-memory store) */
  temporalProfile?: Partial<TemporalProfile>;
}

export async function startDevnet(base: Config, logger: Logger, opts: DevnetOptions = {}): Promise<Devnet> {
  const stack: { name: string; stop: () => Promise<void> }[] = [];
  const stopAll = async () => {
    for (const part of stack.reverse()) {
      try {
        await part.stop();
      } catch (err) {
        logger.warn(`stopping ${part.name} failed`, { err });
      }
    }
    stack.length = 0;
  };
  try {
    const logDir = join(base.dataDir, 'logs');
    // Our own signal handling (bin/devnet.ts) stops everything in order; the worker must not grab SIGINT first.
    installTemporalRuntime(logger, { shutdownSignals: [] });

    const freshChains = freshLocalChains(base);

    const profile = withDataDir({ ...loadTemporalProfile(), ...opts.temporalProfile }, base.dataDir);
    logger.info('starting Temporal dev server', { port: profile.port, ui_port: profile.uiPort });
    const temporal: TemporalServerHandle = await startTemporalDevServer(profile, {
      cliPath: base.temporal.cliPath,
      logFile: join(logDir, 'temporal.log'),
      logger,
      cwd: PROJECT_ROOT,
    });
    stack.push({ name: 'temporal', stop: temporal.stop });

    const anvils: AnvilHandle[] = [];
    for (const chain of base.chains) {
      const port = loopbackPort(chain.rpcUrl);
      if (port === undefined) continue; // a remote chain: not ours to start
      logger.info('starting anvil', { chain: chain.name, chain_id: chain.chainId, port });
      const anvil = await startAnvil({
        chainId: chain.chainId,
        port,
        logFile: join(logDir, `anvil-${chain.name}.log`),
        stateFile: chainStateFile(base.dataDir, chain.name),
      });
      anvils.push(anvil);
      stack.push({ name: `anvil ${chain.name}`, stop: anvil.stop });
    }

    // The ledger: our simulator serving Accumulate v3 JSON-RPC, state kept across restarts.
    let ledgerUrl = base.ledgerUrl;
    const ledgerPort = loopbackPort(base.ledgerUrl);
    if (ledgerPort !== undefined) {
      logger.info('starting ledger simulator', { port: ledgerPort });
      const sim: LedgerSimHandle = await startLedgerSim({ port: ledgerPort, stateFile: join(base.dataDir, 'ledger-sim.json') });
      stack.push({ name: 'ledger simulator', stop: sim.stop });
      ledgerUrl = sim.url;
    }

    // The validator network: 7 nodes with keys kept under <dataDir>/validators, the system contracts deployed on the
    // local chains with their BLS keys as the set, their Ed25519 keys on the protocol ADI's key page.
    const localChains = base.chains.filter((c) => anvils.some((a) => a.chainId === c.chainId));
    let chains = base.chains;
    let validatorUrls = base.validatorUrls;
    let validatorClientSeed = base.validatorClientSeed;
    let validatorRows: [string, string][] = [];
    if (localChains.length > 0 && ledgerPort !== undefined) {
      logger.info('starting validators', { chains: localChains.map((c) => c.name) });
      const vn = await startDevnetValidators({
        dataDir: base.dataDir,
        ledgerUrl,
        chains: localChains,
        deployerKey: ANVIL_DEV_KEY_0,
        log: (msg) => logger.info(msg),
      });
      stack.push({ name: 'validators', stop: vn.stop });
      chains = base.chains.map((c) => (localChains.includes(c) ? { ...c, contracts: vn.contracts } : c));
      validatorUrls = vn.validators.map((v) => v.url);
      validatorClientSeed = vn.clientKey;
      validatorRows = validatorSummaryRows(vn);
    }

    // Identity provisioning: funded sponsor, system contracts on the local chains (already there when the validators
    // deployed them), relayer.
    const identity = await setupIdentityDevnet({ ...base, ledgerUrl, chains }, { logger, localChains: localChains.map((c) => c.name) });

    // The example contract for the README's transaction example (no-op when a restored chain has it).
    const exampleContract = localChains.length > 0 ? ensureExampleContract(localChains, ANVIL_DEV_KEY_0) : undefined;
    exampleContract?.catch(() => {}); // awaited below; no unhandled rejection meanwhile

    const config: Config = {
      ...base,
      ledgerUrl,
      validatorUrls,
      validatorClientSeed,
      ...identity,
      provider: { ...base.provider, keks: devnetProviderKeks(base.provider.keks, base.dataDir) },
      // TEMPORAL_UI_URL, when set, is the link users get (e.g. the UI behind a proxy); else the dev server's own
      temporal: { ...base.temporal, address: temporal.address, namespace: temporal.namespace, uiUrl: base.temporal.uiUrl ?? temporal.uiUrl },
    };

    const database: Database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    stack.push({ name: 'database', stop: () => database.close() });
    if (freshChains.length > 0) {
      // e.g. Postgres (DATABASE_URL) outlives the data dir: identities there would point at accounts on empty chains
      const n = await countIdentities(database.db);
      if (n > 0) throw new DevnetStateError(missingChainStateMessage(base.dataDir, `the database holds ${n} identities`, freshChains));
    }
    const bootstrap = await bootstrapAdminKey(database.db, { rateLimitRpm: config.platform.defaultRpm });

    const { worker, connection } = await createConfiguredWorker(config, { db: database.db, logger });
    const running = worker.run();
    stack.push({
      name: 'worker',
      stop: async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
        await connection.close();
      },
    });

    const client = await connectTemporalClient(config.temporal);
    stack.push({ name: 'temporal client', stop: () => client.connection.close() });
    await ensureSchedules(client, config.temporal.taskQueue, {
      pendingScanIntervalSeconds: config.pendingScanIntervalSeconds,
      log: (msg, fields) => logger.info(msg, fields),
    });

    const app = createApp({ config, database, temporal: client, ledger: apiLedgerClient(config), logger });
    const server: RunningServer = await listen(app, config.api.host, config.api.port);
    stack.push({ name: 'api', stop: server.close });

    const summary: DevnetSummary = {
      apiUrl: server.url,
      docsUrl: `${server.url}/docs`,
      temporalAddress: temporal.address,
      temporalUiUrl: config.temporal.uiUrl,
      ledgerUrl: config.ledgerUrl,
      chains: config.chains.map((c) => ({ name: c.name, chainId: c.chainId, rpcUrl: c.rpcUrl })),
      database: database.driver === 'pglite' ? `PGlite (${join(config.dataDir, 'pglite')})` : 'Postgres (DATABASE_URL)',
      adminKey: bootstrap?.rawKey,
      validatorRows,
      exampleContract: await exampleContract,
    };
    return { summary, config, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

export function formatSummary(s: DevnetSummary): string {
  const rows: [string, string][] = [
    ['API', s.apiUrl],
    ['Health', `${s.apiUrl}/v1/health`],
    ['Temporal UI', s.temporalUiUrl ?? '(headless)'],
    ['Temporal gRPC', s.temporalAddress],
    ['Ledger (simulator)', `${s.ledgerUrl}/v3`],
    ...s.chains.map((c) => [`Chain ${c.name}`, `${c.rpcUrl} (chain id ${c.chainId})`] as [string, string]),
    ...s.validatorRows,
    ...(s.exampleContract ? [['Example contract', `${s.exampleContract}  (TestTarget: record(bytes32), on every chain)`] as [string, string]] : []),
    ['Database', s.database],
    ['Portal (sign-up)', `${s.apiUrl}/portal`],
    ['API reference', `${s.apiUrl}/reference`],
    ['Console', `${s.apiUrl}/console`],
    ...(s.adminKey ? [['Admin API key', `${s.adminKey}  (shown once: store it now)`] as [string, string]] : []),
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return ['', 'Gateway devnet is up:', ...rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`), '', 'Ctrl-C stops everything.', ''].join('\n');
}
