/**
 * The proof-cycle test bench: a devnet with the 7 validators (test/identity/devnet.ts), the app and a worker, an
 * active identity on both chains with a funded account, a TestTarget on each chain, and helpers to prepare,
 * sign and follow an intent through the API.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { parseEther, type Address, type Hex } from 'viem';
import { testTargetAbi, testTargetBytecode } from '../../src/chain/abi/index.js';
import { createChainClients, type ChainWriter } from '../../src/chain/clients.js';
import { getIntent, type IntentDocument } from '../../src/db/intents.js';
import { tx } from '../../src/ledger/index.js';
import { ANVIL_KEYS } from '../chain/fixture.js';
import { testTargetLeg } from '../support/test-target.js';
import { workerActivityDeps } from '../../src/activities/worker-deps.js';
import type { ActivityDeps } from '../../src/activities/index.js';
import { dbKinds, startTestWorker } from '../support/env.js';
import { ensureIntentExpiry, stopIntentExpiry } from '../../src/temporal/intents.js';
import { newClientKey, pollIdentity, startIdentityApp, startIdentityDevnet, uniqueName, type IdentityDevnet } from '../identity/devnet.js';

export const SEPOLIA = { name: 'ethereum-sepolia', chainId: 11155111 } as const;
export const AMOY = { name: 'polygon-amoy', chainId: 80002 } as const;

export type Json = any;

export interface CycleBench {
  dn: IdentityDevnet;
  app: Awaited<ReturnType<typeof startIdentityApp>>;
  worker?: Awaited<ReturnType<typeof startTestWorker>>;
  /** a funded wallet that is not the relayer (anvil account 1) per chain */
  wallets: Record<string, ChainWriter>;
  /** TestTarget per chain */
  targets: Record<string, Address>;
  identity: { id: string; adiUrl: string; account: Address; key: ReturnType<typeof newClientKey> };
  stop(): Promise<void>;
}

export async function startCycleBench(opts: { deps?: Partial<ActivityDeps>; postgresServerUrl?: string } = {}): Promise<CycleBench> {
  const dn = await startIdentityDevnet({ validators: true });
  const stops: (() => Promise<void>)[] = [() => dn.stop()];
  // a failing setup stops what it started (anvils and validators would otherwise outlive the test run)
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const app = await startIdentityApp(dn, opts.postgresServerUrl || dbKinds().includes('postgres') ? 'postgres' : 'pglite', {
      postgresServerUrl: opts.postgresServerUrl,
    });
    stops.push(() => app.close());
    const bench: CycleBench = { dn, app, wallets: {}, targets: {}, identity: undefined as never, stop: stopAll };
    bench.worker = await startCycleWorker(app, opts.deps);
    stops.push(() => bench.worker?.stop() ?? Promise.resolve());
    // unsigned intents have no workflow of their own: the worker's expiry sweep expires them
    await ensureIntentExpiry(app.deps.temporal, app.config.temporal.taskQueue);
    stops.push(() => stopIntentExpiry(app.deps.temporal, app.config.temporal.taskQueue));
    for (const [i, c] of [SEPOLIA, AMOY].entries()) {
      const w = createChainClients({ rpcUrl: dn.anvils[i]!.rpcUrl, chainId: c.chainId, privateKey: ANVIL_KEYS[1], pollingIntervalMs: 25 });
      bench.wallets[c.name] = w;
      bench.targets[c.name] = await deployTestTarget(w);
    }
    bench.identity = await createCycleIdentity(bench);
    return bench;
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/** A worker for the bench's app, optionally with other activity deps (a tampering executor). */
export function startCycleWorker(app: CycleBench['app'], deps: Partial<ActivityDeps> = {}) {
  return startTestWorker(app.config, { db: app.db }, { ...workerActivityDeps(app.config), ...deps }, { shutdownGraceTime: '1s' });
}

/** A fresh TestTarget. Intents in flight together each need their own: expectedState (its lastArg slot) is proven
 * at the end of the execution's block, where concurrent record() calls on one target overwrite each other. */
export async function deployTestTarget(w: ChainWriter): Promise<Address> {
  const hash = await w.wallet.deployContract({ abi: testTargetAbi, bytecode: testTargetBytecode });
  return (await w.public.waitForTransactionReceipt({ hash })).contractAddress as Address;
}

/** An active identity on both chains with 1 ETH in its account on each. */
export async function createCycleIdentity(b: Pick<CycleBench, 'app' | 'wallets'>, credits = 1000) {
  const key = newClientKey();
  const res = await b.app.call('/v1/identity', {
    method: 'POST',
    key: b.app.key.key,
    body: JSON.stringify({ name: uniqueName('cyc'), public_key: key.publicKey, chains: [SEPOLIA.name, AMOY.name], credits }),
  });
  if (res.status !== 202) throw new Error(`identity: ${res.status} ${await res.text()}`);
  const created = (await res.json()) as Json;
  const done = await pollIdentity(b.app as never, created.identity.id, (x) => x.status !== 'creating', 90_000);
  if (done.status !== 'active') throw new Error(`identity failed: ${done.error_message}`);
  const account = done.chain_accounts[0].address as Address;
  for (const w of Object.values(b.wallets)) {
    const h = await w.wallet.sendTransaction({ to: account, value: parseEther('1') });
    await w.public.waitForTransactionReceipt({ hash: h });
  }
  return { id: done.id as string, adiUrl: done.adi_url as string, account, key };
}

export { arg, CALLED_EVENT } from '../support/test-target.js';

/** A TestTarget.record(arg) leg with the Called event (from the account) and the lastArg slot (3) expected. */
export function recordLeg(
  b: CycleBench,
  chain: { name: string; chainId: number },
  a: Hex,
  over: Json = {},
  value = '0',
  target: Address = b.targets[chain.name]!,
): Json {
  return testTargetLeg({ chain, account: b.identity.account, target, arg: a, value, over });
}

export function transferLeg(b: CycleBench, chain: { name: string; chainId: number }, to: Address, wei: string): Json {
  return {
    legId: `pay-${chain.name}-${to.slice(2, 8)}`,
    chain: chain.name,
    chainId: chain.chainId,
    fromAddress: b.identity.account,
    toAddress: to,
    amount: wei,
  };
}

export async function api(b: CycleBench, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await b.app.call(path, { method, key: b.app.key.key, body: body === undefined ? undefined : JSON.stringify(body), headers });
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, body: json, headers: res.headers };
}

export function sign(hashToSign: string, secretKey: Uint8Array): string {
  return Buffer.from(ed25519.sign(Buffer.from(hashToSign, 'hex'), secretKey)).toString('hex');
}

export async function prepare(b: CycleBench, legs: Json[], extra: Json = {}) {
  const r = await api(b, 'POST', '/v1/transaction', { identity_id: b.identity.id, intent: { adiUrl: b.identity.adiUrl, legs }, ...extra });
  if (r.status !== 201) throw new Error(`prepare: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** POST the bench identity's signature over `hash` (the prepared hash_to_sign unless given); the answer as it came. */
export function signIntent(b: CycleBench, prepared: Json, hash: string = prepared.signing_data.hash_to_sign) {
  return api(b, 'POST', `/v1/transaction/${prepared.intent_id}/signature`, {
    signature: sign(hash, b.identity.key.secretKey),
    public_key: b.identity.key.publicKey,
  });
}

export async function submit(b: CycleBench, prepared: Json) {
  const r = await signIntent(b, prepared);
  if (r.status !== 200) throw new Error(`submit: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Submits the intent's signature to the ledger only, as an attempt whose answer never reached the gateway would have. */
export async function submitToLedgerOnly(b: CycleBench, p: Json) {
  const row = (await getIntent(b.app.db, p.intent_id))!;
  const pr = row.prepared;
  const prepared = await b.dn.ledger.prepareExternalSignature({
    principal: pr.principal,
    body: tx.writeData((row.intent as IntentDocument).parts),
    txOptions: { memo: pr.memo, expireAt: new Date(pr.expireAt) },
    signerUrl: pr.signerUrl,
    publicKey: pr.publicKey,
    signerVersion: pr.signerVersion,
    timestamp: pr.timestamp,
  });
  if (prepared.hashToSign !== p.signing_data.hash_to_sign) throw new Error('the prepared transaction did not rebuild identically');
  return b.dn.ledger.submitExternalSignature(prepared, sign(p.signing_data.hash_to_sign, b.identity.key.secretKey));
}

export async function waitIntent(
  b: CycleBench,
  id: string,
  until: (x: Json) => boolean = (x) => ['completed', 'failed', 'expired'].includes(x.status),
  timeoutMs = 120_000,
): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api(b, 'GET', `/v1/transaction/${id}`);
    if (until(r.body)) return r.body;
    if (Date.now() > deadline) throw new Error(`intent ${id} did not get there: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** prepare → sign → submit → wait for the end */
export async function runIntent(b: CycleBench, legs: Json[], extra: Json = {}) {
  const p = await prepare(b, legs, extra);
  await submit(b, p);
  return waitIntent(b, p.intent_id);
}
