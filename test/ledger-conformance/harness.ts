/**
 * Conformance harness: the same scenarios run against ledger-sim (default) or any v3 node given by
 * ACC_ENDPOINT (e.g. the official Go simulator: ACC_ENDPOINT=http://127.0.1.1:26660/v3).
 * Only this test harness reads the environment: an allowed exception to the rule that src/config.ts alone does.
 */
import { ED25519Key } from 'accumulate.js';
import { randomBytes } from 'node:crypto';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import {
  LedgerError,
  LedgerSubmitError,
  createLedgerClient,
  liteIdentityUrl,
  toHex,
  tx,
  type HeldKey,
  type LedgerClient,
  type SubmitResult,
  type TxStatus,
} from '../../src/ledger/index.js';

export interface Target {
  name: string;
  client: LedgerClient;
  sim?: LedgerSimHandle;
  stop(): Promise<void>;
}

export async function openTarget(): Promise<Target> {
  const ext = process.env.ACC_ENDPOINT;
  if (ext) {
    return { name: `external ${ext}`, client: createLedgerClient({ url: ext, pollIntervalMs: 100 }), stop: async () => {} };
  }
  const sim = await startLedgerSim({ port: 0, blockIntervalMs: 20 });
  return { name: 'ledger-sim', client: createLedgerClient({ url: sim.url }), sim, stop: () => sim.stop() };
}

export interface TestKey {
  key: ED25519Key;
  seed: Uint8Array;
  publicKey: Uint8Array;
  publicKeyHash: Uint8Array;
  pkh: string;
}

export function newKey(): TestKey {
  const seed = Uint8Array.from(randomBytes(32));
  const key = ED25519Key.from(seed);
  return { key, seed, publicKey: key.address.publicKey, publicKeyHash: key.address.publicKeyHash, pkh: toHex(key.address.publicKeyHash) };
}

export function held(k: TestKey, signerUrl: string, extra: Partial<HeldKey> = {}): HeldKey {
  return { privateKey: k.seed, signerUrl, ...extra };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      if (!(e instanceof LedgerError) || e.code !== 'notFound') throw e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Submit and wait for a final status (delivered or failed). */
export async function settle(c: LedgerClient, p: Promise<SubmitResult>): Promise<TxStatus> {
  const r = await p;
  return c.waitForTransaction(r.txId, { timeoutMs: 30_000 });
}

export async function executed(c: LedgerClient, p: Promise<SubmitResult>): Promise<TxStatus> {
  const st = await settle(c, p);
  if (!st.delivered) throw new Error(`expected delivered, got ${st.status}: ${st.error?.message ?? ''}`);
  return st;
}

/**
 * Outcome code of an attempt that should fail: the code of the refused submission, or the final
 * status of the transaction when the node accepted the envelope and failed it later.
 */
export async function failureCode(c: LedgerClient, p: Promise<SubmitResult>): Promise<string> {
  let r: SubmitResult;
  try {
    r = await p;
  } catch (e) {
    if (e instanceof LedgerSubmitError) return e.code;
    throw e;
  }
  const st = await c.waitForTransaction(r.txId, { timeoutMs: 15_000 }).catch((e: Error) => ({ status: `no-final-status (${e.message})` }) as TxStatus);
  return st.status;
}

export interface Sponsor {
  key: TestKey;
  lite: string;
  lta: string;
}

/** A funded lite identity with credits (faucet + AddCredits). */
export async function fundedLite(c: LedgerClient, credits = 200_000): Promise<Sponsor> {
  const key = newKey();
  const lite = liteIdentityUrl(key.publicKey);
  const lta = `${lite}/ACME`;
  await c.faucet(lta);
  await waitFor('faucet balance', async () => {
    const a = await c.tryQueryAccount(lta);
    return a && BigInt(a.balance ?? '0') > 0n ? a : undefined;
  });
  const { amount, oracle } = await c.acmeForCredits(credits);
  await executed(c, c.signAndSubmit(lta, tx.addCredits({ recipient: lite, amount, oracle }), held(key, lite)));
  await waitFor('lite credits', async () => {
    const a = await c.queryAccount(lite);
    return (a.creditBalance ?? 0) > 0 ? a : undefined;
  });
  return { key, lite, lta };
}

export function randomName(prefix = 'conf'): string {
  return `${prefix}${toHex(randomBytes(6))}`;
}

export interface Adi {
  url: string;
  book: string;
  page: string;
  key: TestKey;
}

/** Create an ADI with key book and page 1 (1-of-1, key k) and fund the page with credits. */
export async function createAdi(c: LedgerClient, sponsor: Sponsor, credits = 5_000): Promise<Adi> {
  const key = newKey();
  const url = `acc://${randomName()}.acme`;
  const book = `${url}/book`;
  await executed(c, c.signAndSubmit(url, tx.createIdentity({ url, keyBookUrl: book, publicKeyHash: key.publicKeyHash }), held(sponsor.key, sponsor.lite)));
  const page = `${book}/1`;
  if (credits > 0) {
    const { amount, oracle } = await c.acmeForCredits(credits);
    await executed(c, c.signAndSubmit(sponsor.lta, tx.addCredits({ recipient: page, amount, oracle }), held(sponsor.key, sponsor.lite)));
    await waitFor('page credits', async () => ((await c.queryKeyPage(page)).creditBalance > 0 ? true : undefined));
  }
  return { url, book, page, key };
}
