/**
 * A worker killed (SIGKILL, a separate process) in the middle of provisioning: a new worker finishes the
 * identity, and every effect happened exactly once: one ADI with the requested credits (not twice), one
 * account per chain (one AccountCreated event each), one chain_accounts row per chain.
 *
 * Needs PostgreSQL (the killed worker and the test share the database); skipped without it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createPublicClient, http, type Address } from 'viem';
import { createApp } from '../../src/api/app.js';
import { accountFactoryAbi } from '../../src/chain/abi/index.js';
import { adiHash } from '../../src/chain/formulas.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { chainAccounts, identities } from '../../src/db/schema.js';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import { quietLogger, testConfig, testTemporalClient } from '../support/env.js';
import { createTestOrgAndKey, type TestKey } from '../support/platform.js';
import { createScratchDatabase } from '../../src/devnet/postgres.js';
import { newClientKey, startIdentityDevnet, startWorker, uniqueName, type IdentityDevnet } from './devnet.js';
import { compiledEntry, ensureBuild } from '../support/build.js';

// the entry points run from the compiled build, as `npm run api|worker` runs them (built here when stale)
beforeAll(ensureBuild, 300_000);

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const hasPostgres = !!inject('postgresUrl');

let dn: IdentityDevnet;
let database: Database;
let dropDb: () => Promise<void>;
let env: Record<string, string>;
let config: ReturnType<typeof testConfig>;
let key: TestKey;
let app: ReturnType<typeof createApp>;
let temporal: Awaited<ReturnType<typeof testTemporalClient>>;
const children: ChildProcess[] = [];

function startWorkerProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, compiledEntry('worker'), {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('"worker running"')) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`worker process exited (${code}) before running:\n${out.slice(-3000)}`)));
  });
}

beforeAll(async () => {
  if (!hasPostgres) return;
  // slow blocks, so the kill lands while a ledger transaction is in flight; validators because `npm run worker`
  // refuses to start without VALIDATOR_URLS (and the other settings its activities need)
  dn = await startIdentityDevnet({ blockIntervalMs: 300, validators: true });
  const scratch = await createScratchDatabase(inject('postgresUrl'));
  dropDb = scratch.drop;
  env = { ...dn.env, DATABASE_URL: scratch.url };
  config = testConfig(env);
  env.TEMPORAL_ADDRESS = config.temporal.address;
  env.TEMPORAL_NAMESPACE = config.temporal.namespace;
  env.TEMPORAL_TASK_QUEUE = config.temporal.taskQueue;
  database = await openDatabase({ databaseUrl: scratch.url });
  temporal = await testTemporalClient(config);
  app = createApp({ config, database, temporal, logger: quietLogger });
  key = await createTestOrgAndKey(database.db, { rateLimitRpm: 100_000 });
}, 180_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await temporal?.connection.close();
  await database?.close();
  await dropDb?.();
  await dn?.stop();
});

async function row(id: string) {
  const [r] = await database.db.select().from(identities).where(eq(identities.id, id));
  return r!;
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000, everyMs = 5): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe.skipIf(!hasPostgres)('worker killed mid-provisioning', () => {
  it('a new worker completes it; ADI, credits and accounts exist exactly once', async () => {
    const first = await startWorkerProcess();
    const k = newClientKey();
    const res = await app.request('/v1/identity', {
      method: 'POST',
      headers: { 'X-API-Key': key.key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: uniqueName('crash'), public_key: k.publicKey, chains: ['ethereum-sepolia', 'polygon-amoy'], credits: 40 }),
    });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { identity: { id: string } }).identity.id;

    // kill the worker the moment the AddCredits transaction is signed and recorded (it is then in flight)
    await waitFor('the credits transaction', async () => ((await row(id)).ledgerTxs.credits ? true : undefined));
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const mid = await row(id);
    expect(mid.status).toBe('creating');

    const second = await startWorker(config, database.db);
    try {
      const done = await waitFor(
        'active',
        async () => {
          const r = await row(id);
          return r.status === 'creating' ? undefined : r;
        },
        90_000,
        50,
      );
      expect(done.errorMessage).toBeNull();
      expect(done.status).toBe('active');

      // ledger: one ADI whose page holds the client key and exactly the requested credits (bought once)
      const page = await dn.ledger.queryKeyPage(done.keyPageUrl);
      expect(page.keys.map((x) => x.publicKeyHash)).toEqual([publicKeyHashHex(k.publicKey)]);
      expect(Math.floor(page.creditBalance / 100)).toBe(40);
      expect(done.creditBalance).toBe(40n);

      // chains: one row and one AccountCreated event per chain, same address
      const rows = await database.db.select().from(chainAccounts).where(eq(chainAccounts.identityId, id));
      expect(rows.map((r) => r.chain).sort()).toEqual(['ethereum-sepolia', 'polygon-amoy']);
      expect(new Set(rows.map((r) => r.address)).size).toBe(1);
      for (const ch of JSON.parse(env.CHAINS!) as { name: string; rpcUrl: string; contracts: { accountFactory: Address } }[]) {
        const pub = createPublicClient({ transport: http(ch.rpcUrl) });
        const logs = await pub.getContractEvents({
          address: ch.contracts.accountFactory,
          abi: accountFactoryAbi,
          eventName: 'AccountCreated',
          args: { adiHash: adiHash(done.adiUrl) },
          fromBlock: 0n,
        });
        expect(logs, ch.name).toHaveLength(1);
        expect(rows.find((r) => r.chain === ch.name)!.deploymentTx).toBe(logs[0]!.transactionHash);
      }
      const result = await temporal.workflow.getHandle(`identity-${id}`).result();
      expect(result.status).toBe('active');
    } finally {
      await second.stop();
    }
  });
});
