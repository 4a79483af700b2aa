/**
 * A devnet made in the test: ledger simulator (short blocks) + two anvils with the system contracts + a funded
 * sponsor + a database + an in-process worker + the app. `config` is what a worker or API process would load
 * (CHAINS with contract addresses, LEDGER_URL, SPONSOR_KEY, RELAYER_PRIVATE_KEY), so child processes can be
 * started against the same devnet.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { randomBytes } from 'node:crypto';
import { workerActivityDeps } from '../../src/activities/worker-deps.js';
import type { ChainConfig, Config } from '../../src/config.js';
import { ANVIL_DEV_KEY_0 } from '../../src/devnet/contracts.js';
import { startDevnetValidators, type DevnetValidators } from '../../src/devnet/validators.js';
import { startAnvil, type AnvilHandle } from '../../src/devnet/anvil.js';
import { setupIdentityDevnet } from '../../src/devnet/identity.js';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import { createLedgerClient, type LedgerClient } from '../../src/ledger/index.js';
import { startTestWorker, type DbKind } from '../support/env.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

export interface IdentityDevnet {
  sim: LedgerSimHandle;
  anvils: AnvilHandle[];
  ledger: LedgerClient;
  /** the 7 validators (with `validators: true`) */
  validators?: DevnetValidators;
  /** environment of this devnet (merge into testConfig / a child process env) */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * `validators: true` also starts the 7 validator nodes and deploys the system contracts with their BLS keys as
 * the set (what the proof cycle needs); otherwise the contracts get a throwaway set.
 */
export async function startIdentityDevnet(opts: { blockIntervalMs?: number; validators?: boolean } = {}): Promise<IdentityDevnet> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pgw-identity-'));
  const sim = await startLedgerSim({ port: 0, blockIntervalMs: opts.blockIntervalMs ?? 20 });
  const anvils = await Promise.all([startAnvil({ chainId: 11155111 }), startAnvil({ chainId: 80002 })]);
  let validators: DevnetValidators | undefined;
  try {
    let chains: ChainConfig[] = [
      { name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: anvils[0]!.rpcUrl, confirmations: 2 },
      { name: 'polygon-amoy', chainId: 80002, rpcUrl: anvils[1]!.rpcUrl, confirmations: 2 },
    ];
    if (opts.validators) {
      validators = await startDevnetValidators({ dataDir, ledgerUrl: sim.url, chains, deployerKey: ANVIL_DEV_KEY_0, observeTimeoutMs: 30_000 });
      chains = chains.map((c) => ({ ...c, contracts: validators!.contracts }));
    }
    const parts = await setupIdentityDevnet({ dataDir, ledgerUrl: sim.url, chains, sponsorKey: undefined, relayerPrivateKey: undefined });
    const env: Record<string, string> = {
      LEDGER_URL: sim.url,
      CHAINS: JSON.stringify(parts.chains),
      SPONSOR_KEY: parts.sponsorKey,
      RELAYER_PRIVATE_KEY: parts.relayerPrivateKey,
      DATA_DIR: dataDir,
      ...(validators ? { VALIDATOR_URLS: validators.validators.map((v) => v.url).join(','), VALIDATOR_CLIENT_KEY: validators.clientKey } : {}),
    };
    return {
      sim,
      anvils,
      ledger: createLedgerClient({ url: sim.url, pollIntervalMs: 20 }),
      validators,
      env,
      async stop() {
        await validators?.stop();
        await Promise.all([sim.stop(), ...anvils.map((a) => a.stop())]);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await validators?.stop();
    await Promise.all([sim.stop(), ...anvils.map((a) => a.stop())]);
    throw e;
  }
}

export function startWorker(config: Config, db: TestApp['db']) {
  return startTestWorker(config, { db }, workerActivityDeps(config), { shutdownGraceTime: '1s' });
}

/** The app on a fresh database with this devnet's config, an organization and a read/write key. */
export async function startIdentityApp(
  dn: IdentityDevnet,
  kind: DbKind,
  opts: { env?: Record<string, string>; quota?: number; postgresServerUrl?: string } = {},
) {
  const app = await startTestApp(kind, { env: { ...dn.env, ...opts.env }, postgresServerUrl: opts.postgresServerUrl });
  const key: TestKey = await createTestOrgAndKey(app.db, { rateLimitRpm: 100_000 });
  if (opts.quota !== undefined) {
    const { organizations } = await import('../../src/db/schema.js');
    const { eq } = await import('drizzle-orm');
    await app.db.update(organizations).set({ identityQuota: opts.quota }).where(eq(organizations.id, key.orgId));
  }
  return { ...app, key, clock: app.clock };
}

export function newClientKey() {
  const secretKey = Uint8Array.from(randomBytes(32));
  const publicKey = Buffer.from(ed25519.getPublicKey(secretKey)).toString('hex');
  return { secretKey, publicKey };
}

export function uniqueName(prefix = 'idt'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

export async function pollIdentity(
  app: Awaited<ReturnType<typeof startIdentityApp>>,
  id: string,
  until: (b: any) => boolean,
  timeoutMs = 60_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.call(`/v1/identity/${id}`, { key: app.key.key });
    const body = await res.json();
    // chain_accounts stay empty while the identity is creating; they are filled on the move to active
    if (body.status === 'creating' && body.chain_accounts?.length)
      throw new Error(`identity ${id} shows chain accounts while creating: ${JSON.stringify(body)}`);
    if (until(body)) return body;
    if (Date.now() > deadline) throw new Error(`identity ${id} did not reach the expected state: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
