/**
 * The production topology under faults (src/devnet/cluster.ts, the compiled build): PostgreSQL, Temporal, 2 API
 * processes, 2 worker processes and the 7 validators as processes, two anvil chains and the ledger simulator.
 * 40 intents, alternately on either chain, run 8 at a time through a client that spreads its requests over both API
 * processes (test/cluster/client.ts). One validator is stopped for the whole run (a quorum is 5 of the 6 left);
 * once a dozen intents are signed, one API process and one worker process are SIGKILLed and started again.
 * Every intent must complete, every leg must have run exactly once on its chain (its own TestTarget called once, one
 * Executed event for its anchor) and no 5xx may reach the client that it had no documented way to retry.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { parseEther, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testTargetAbi, testTargetBytecode } from '../../src/chain/abi/index.js';
import { accountAbiWithAnchorErrors } from '../../src/chain/account.js';
import { createChainClients, type ChainWriter } from '../../src/chain/clients.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { startCluster, type Cluster } from '../../src/devnet/cluster.js';
import { createScratchDatabase } from '../../src/devnet/postgres.js';
import { createLogger } from '../../src/log.js';
import { ANVIL_KEYS } from '../chain/fixture.js';
import { newClientKey, uniqueName } from '../identity/devnet.js';
import { ensureBuild } from '../support/build.js';
import { createTestOrgAndKey } from '../support/platform.js';
import { arg, testTargetLeg } from '../support/test-target.js';
import { ClusterClient, type Json } from './client.js';

const INTENTS = 40;
const IN_FLIGHT = 8;
const IDENTITIES = 4;
const CHAINS = [
  { name: 'ethereum-sepolia', chainId: 11155111 },
  { name: 'polygon-amoy', chainId: 80002 },
] as const;

/** no settlement and no change of status or stage for this long while intents are left: the run is stuck */
const STALL_MS = 90_000;

const hasPostgres = !!inject('postgresUrl');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: Cluster;
let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let database: Database;
let dataDir: string;
let client: ClusterClient;
/** a failed run keeps the data dir (process logs under logs/); GW_CLUSTER_KEEP=1 keeps it always */
let passed = false;
const wallets: Record<string, ChainWriter> = {};

interface Identity {
  id: string;
  adiUrl: string;
  account: Address;
  key: ReturnType<typeof newClientKey>;
}

beforeAll(async () => {
  if (!hasPostgres) return;
  ensureBuild();
  scratch = await createScratchDatabase(inject('postgresUrl'));
  dataDir = mkdtempSync(join(tmpdir(), 'gw-cluster-test-'));
  const t0 = Date.now();
  cluster = await startCluster({
    databaseUrl: scratch.url,
    dataDir,
    logger: createLogger('warn', { process: 'cluster-test' }),
    temporal: { address: inject('temporalAddress'), namespace: inject('temporalNamespace') },
    taskQueue: `cluster-${randomUUID()}`,
  });
  console.log(`cluster up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  database = await openDatabase({ databaseUrl: scratch.url });
  const key = await createTestOrgAndKey(database.db, { rateLimitRpm: 100_000 });
  client = new ClusterClient(cluster.apiUrls, key.key);
  for (const [i, c] of CHAINS.entries()) {
    wallets[c.name] = createChainClients({ rpcUrl: cluster.chains[i]!.rpcUrl, chainId: c.chainId, privateKey: ANVIL_KEYS[1], pollingIntervalMs: 25 });
  }
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
  await database?.close();
  await scratch?.drop();
  if (dataDir && (!passed || process.env.GW_CLUSTER_KEEP === '1')) console.log(`cluster data dir and process logs kept: ${dataDir}`);
  else if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function createIdentity(): Promise<Identity> {
  const key = newClientKey();
  const body = { name: uniqueName('clu'), public_key: key.publicKey, chains: CHAINS.map((c) => c.name), credits: 1000 };
  const created = await client.call('POST', '/v1/identity', body, { headers: { 'Idempotency-Key': randomUUID() } });
  if (created.status !== 202) throw new Error(`identity: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.identity.id as string;
  for (const deadline = Date.now() + 120_000; ; ) {
    const r = await client.call('GET', `/v1/identity/${id}`);
    if (r.body.status === 'active') return { id, adiUrl: r.body.adi_url, account: r.body.chain_accounts[0].address, key };
    if (r.body.status !== 'creating' || Date.now() > deadline) throw new Error(`identity ${id}: ${JSON.stringify(r.body)}`);
    await sleep(250);
  }
}

/** One TestTarget per leg: legs in flight together must not share one (expectedState is its last argument). */
async function deployTargets(w: ChainWriter, n: number): Promise<Address[]> {
  const out: Address[] = [];
  for (let i = 0; i < n; i++) {
    const hash = await w.wallet.deployContract({ abi: testTargetAbi, bytecode: testTargetBytecode });
    out.push((await w.public.waitForTransactionReceipt({ hash })).contractAddress as Address);
  }
  return out;
}

interface Run {
  n: number;
  intentId: string;
  identity: Identity;
  chain: (typeof CHAINS)[number];
  target: Address;
  /** fresh Idempotency-Keys used after a key stayed claimed by a killed process */
  abandonedKeys: number;
  /** signatures made again over fresh signing data after a 409 SIGNING_DATA_STALE */
  resigned: number;
}

/** prepare (Idempotency-Key) → sign locally → submit; a key still claimed after the client's patience is replaced. */
async function startIntent(n: number, identity: Identity, chain: Run['chain'], target: Address): Promise<Run> {
  const legs = [testTargetLeg({ chain, account: identity.account, target, arg: arg(`cluster-${n}`) })];
  const body = { identity_id: identity.id, intent: { adiUrl: identity.adiUrl, legs } };
  let abandonedKeys = 0;
  let prepared: { status: number; body: Json };
  for (;;) {
    prepared = await client.call('POST', '/v1/transaction', body, { headers: { 'Idempotency-Key': randomUUID() } });
    // the claim of a request whose process was killed is held for the idempotency lease; an unsigned intent never
    // executes, so preparing again under a new key cannot run a leg twice
    if (prepared.status === 409 && prepared.body?.code === 'IDEMPOTENCY_KEY_IN_FLIGHT' && abandonedKeys < 3) {
      abandonedKeys++;
      continue;
    }
    break;
  }
  if (prepared.status !== 201) throw new Error(`prepare ${n}: ${prepared.status} ${JSON.stringify(prepared.body)}`);
  const p = prepared.body;
  // Concurrent intents of one identity: a signature whose timestamp an earlier-prepared one overtook is refused with
  // 409 SIGNING_DATA_STALE; the client fetches fresh signing data and signs again (ORDERING in the API reference).
  let hash: string = p.signing_data.hash_to_sign;
  let resigned = 0;
  let inFlight = 0;
  for (;;) {
    const signature = Buffer.from(ed25519.sign(Buffer.from(hash, 'hex'), identity.key.secretKey)).toString('hex');
    const submitted = await client.call('POST', `/v1/transaction/${p.intent_id}/signature`, { signature, public_key: identity.key.publicKey });
    // 409 ALREADY_SIGNED: an attempt cut off by a kill went through — success for the client
    if (submitted.status === 200 || (submitted.status === 409 && submitted.body?.code === 'ALREADY_SIGNED')) break;
    // 409 SIGNATURE_IN_FLIGHT: such an attempt is still being submitted (it may yet fail): the same signature again
    if (submitted.status === 409 && submitted.body?.code === 'SIGNATURE_IN_FLIGHT' && inFlight < 60) {
      inFlight++;
      await sleep(1000);
      continue;
    }
    if (submitted.status !== 409 || submitted.body?.code !== 'SIGNING_DATA_STALE' || resigned >= 10) {
      throw new Error(`signature ${n}: ${submitted.status} ${JSON.stringify(submitted.body)}`);
    }
    resigned++;
    let fresh = await client.call('POST', `/v1/transaction/${p.intent_id}/signing-data`);
    // 409 SIGNATURE_IN_FLIGHT: an earlier refresh cut off by a kill is still being prepared: ask again
    for (let waited = 0; fresh.status === 409 && fresh.body?.code === 'SIGNATURE_IN_FLIGHT' && waited < 60; waited++) {
      await sleep(1000);
      fresh = await client.call('POST', `/v1/transaction/${p.intent_id}/signing-data`);
    }
    if (fresh.status !== 200) throw new Error(`signing-data ${n}: ${fresh.status} ${JSON.stringify(fresh.body)}`);
    hash = fresh.body.signing_data.hash_to_sign;
  }
  return { n, intentId: p.intent_id, identity, chain, target, abandonedKeys, resigned };
}

/** The intent's workflow as Temporal sees it (pending activities, last failure), for a stuck intent's report. */
function describeWorkflow(intentId: string): string {
  const cli = process.env.TEMPORAL_CLI_PATH;
  if (!cli) return '(TEMPORAL_CLI_PATH not set)';
  const t = inject('temporalAddress');
  try {
    return execFileSync(cli, ['workflow', 'describe', '-w', `intent-${intentId}`, '--address', t, '--namespace', inject('temporalNamespace')], {
      encoding: 'utf8',
      timeout: 20_000,
    });
  } catch (err) {
    return `describe failed: ${(err as Error).message}`;
  }
}

/**
 * Polls every unsettled intent once a second; the seconds from `since` to each settlement go into `seconds`.
 * Gives up at `timeoutMs`, or sooner when nothing settled and no unsettled intent changed status or stage for
 * STALL_MS; then the unsettled intents are printed with their workflows.
 */
async function settle(runs: Run[], timeoutMs: number, since: number, seconds: number[]): Promise<Map<string, Json>> {
  const done = new Map<string, Json>();
  const last = new Map<string, Json>();
  const deadline = Date.now() + timeoutMs;
  let lastChange = Date.now();
  while (done.size < runs.length && Date.now() < deadline && Date.now() - lastChange < STALL_MS) {
    for (const r of runs) {
      if (done.has(r.intentId)) continue;
      const x = await client.call('GET', `/v1/transaction/${r.intentId}`);
      const seen = last.get(r.intentId);
      if (!seen || seen.status !== x.body?.status || seen.stage !== x.body?.stage) lastChange = Date.now();
      last.set(r.intentId, x.body);
      if (['completed', 'failed', 'expired'].includes(x.body?.status)) {
        done.set(r.intentId, x.body);
        seconds.push((Date.now() - since) / 1000);
      }
    }
    await sleep(1000);
  }
  for (const r of runs) {
    if (done.has(r.intentId)) continue;
    const x = last.get(r.intentId);
    console.log(`unsettled intent ${r.n} ${r.intentId} on ${r.chain.name}: status ${x?.status} stage ${x?.stage}\n${JSON.stringify(x)}`);
    console.log(describeWorkflow(r.intentId));
  }
  return done;
}

describe('cluster: 2 API, 2 worker and 7 validator processes from the compiled build', () => {
  it('40 intents over both chains complete once each through a killed API, a killed worker and a stopped validator', async (ctx) => {
    if (!hasPostgres) return ctx.skip();
    const t0 = Date.now();
    const identities = await Promise.all(Array.from({ length: IDENTITIES }, () => createIdentity()));
    for (const w of Object.values(wallets)) {
      for (const idt of identities)
        await w.public.waitForTransactionReceipt({ hash: await w.wallet.sendTransaction({ to: idt.account, value: parseEther('1') }) });
    }
    const targets = await Promise.all(CHAINS.map((c) => deployTargets(wallets[c.name]!, INTENTS / CHAINS.length)));
    const setupSeconds = (Date.now() - t0) / 1000;

    await cluster.validators[6]!.stop();
    const killed = { api: cluster.apis[0]!, worker: cluster.workers[0]! };
    const pidsBefore = { api: killed.api.pid, worker: killed.worker.pid };
    let signed = 0;
    let faults: Promise<void> | undefined;
    const runs: Run[] = [];
    let next = 0;
    const lane = async () => {
      while (next < INTENTS) {
        const n = next++;
        const c = n % CHAINS.length;
        runs.push(await startIntent(n, identities[n % IDENTITIES]!, CHAINS[c]!, targets[c]![Math.floor(n / CHAINS.length)]!));
        if (++signed === 12) {
          faults = (async () => {
            await Promise.all([killed.api.kill(), killed.worker.kill()]);
            await sleep(3000);
            await Promise.all([killed.api.start(), killed.worker.start()]);
          })();
        }
      }
    };
    const loadStart = Date.now();
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    await faults;
    const settledAfter: number[] = [];
    const results = await settle(runs, 420_000, loadStart, settledAfter);
    const loadSeconds = (Date.now() - loadStart) / 1000;

    // each leg exactly once: its own target called once, one Executed event for its anchor on the account
    const legCounts: { intent: number; chain: string; calls: number; executed: number }[] = [];
    for (const r of runs) {
      const w = wallets[r.chain.name]!;
      const calls = Number(await w.public.readContract({ address: r.target, abi: testTargetAbi, functionName: 'calls' }));
      const anchorId = results.get(r.intentId)?.legs?.[0]?.anchor_id;
      const events = anchorId
        ? await w.public.getContractEvents({
            address: r.identity.account,
            abi: accountAbiWithAnchorErrors,
            eventName: 'Executed',
            args: { anchorId },
            fromBlock: 0n,
          })
        : [];
      legCounts.push({ intent: r.n, chain: r.chain.name, calls, executed: events.length });
    }
    const completed = [...results.values()].filter((x) => x.status === 'completed').length;
    const figures = {
      intents: runs.length,
      completed,
      legs_once: legCounts.filter((l) => l.calls === 1 && l.executed === 1).length,
      requests: client.stats.requests,
      connection_errors: client.stats.connectionErrors,
      server_errors: JSON.stringify(client.stats.serverErrors),
      unretryable_5xx: client.stats.unretryable.length,
      key_in_flight_409: client.stats.keyInFlight,
      abandoned_keys: runs.reduce((s, r) => s + r.abandonedKeys, 0),
      resigned_stale: runs.reduce((s, r) => s + r.resigned, 0),
      setup_s: setupSeconds,
      load_s: loadSeconds,
      first_settled_s: Math.min(...settledAfter),
      last_settled_s: Math.max(...settledAfter),
    };
    console.table([figures]);
    console.log(JSON.stringify({ cluster: figures }));

    expect(client.stats.unretryable, 'non-retryable 5xx').toEqual([]);
    expect(killed.api.running && killed.worker.running).toBe(true);
    expect([killed.api.pid, killed.worker.pid]).not.toEqual([pidsBefore.api, pidsBefore.worker]);
    expect(cluster.validators.filter((v) => v.running).length).toBe(6);
    for (const x of results.values()) expect(x.error_message ?? null, x.intent_id).toBeNull();
    expect(figures).toMatchObject({ intents: INTENTS, completed: INTENTS, legs_once: INTENTS });
    passed = true;
  }, 900_000);
});
