/**
 * Idempotent ledger set-up helpers (devnet seeding, sponsor funding, protocol ADI). Each step first reads
 * the ledger and only submits what is missing, so a retry after a crash never doubles anything.
 */
import { LedgerError } from './errors.js';
import type { HeldKey, LedgerClient, TxStatus } from './types.js';
import { keyFromSeed, toHex } from './signing.js';
import * as tx from './tx.js';
import { liteIdentityUrl, parseAccUrl } from './urls.js';
import { sleep } from '../net/sleep.js';

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch((e) => {
      if (e instanceof LedgerError && e.code === 'notFound') return undefined;
      throw e;
    });
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new LedgerError(`timed out waiting for ${what}`, 'timeout');
    await sleep(50);
  }
}

async function mustDeliver(c: LedgerClient, p: Promise<{ txId: string }>, timeoutMs: number): Promise<TxStatus> {
  const r = await p;
  return c.waitForTransaction(r.txId, { timeoutMs, throwOnFailure: true });
}

export interface FundedLite {
  /** lite identity URL (the signer) */
  lite: string;
  /** lite ACME token account */
  lta: string;
  key: HeldKey;
}

/**
 * Make sure the lite identity of `privateKey` holds at least `minCredits` credits: faucet (test networks) as
 * needed, then AddCredits. Credits are whole credits.
 */
export async function ensureFundedLite(
  c: LedgerClient,
  privateKey: Uint8Array | string,
  opts: { minCredits: number; topUpCredits?: number; useFaucet?: boolean; timeoutMs?: number },
): Promise<FundedLite> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const k = keyFromSeed(privateKey);
  const lite = liteIdentityUrl(k.address.publicKey);
  const lta = `${lite}/ACME`;
  const key: HeldKey = { privateKey, signerUrl: lite };
  const have = (await c.tryQueryAccount(lite))?.creditBalance ?? 0;
  if (have >= opts.minCredits * 100) return { lite, lta, key };
  const want = BigInt(Math.max(opts.topUpCredits ?? opts.minCredits, opts.minCredits));
  const { amount, oracle } = await c.acmeForCredits(want);
  const balance = async () => BigInt((await c.tryQueryAccount(lta))?.balance ?? '0');
  if ((await balance()) < amount) {
    if (opts.useFaucet === false) throw new LedgerError(`${lta} holds too little ACME to buy ${want} credits`, 'insufficientBalance');
    // each faucet call grants a fixed amount; call until the balance covers the purchase
    for (let i = 0; i < 1000 && (await balance()) < amount; i++) {
      const before = await balance();
      await c.faucet(lta);
      await until('faucet deposit', async () => ((await balance()) > before ? true : undefined), timeoutMs);
    }
  }
  await mustDeliver(c, c.signAndSubmit(lta, tx.addCredits({ recipient: lite, amount, oracle }), key), timeoutMs);
  await until('credits', async () => (((await c.queryAccount(lite)).creditBalance ?? 0) >= opts.minCredits * 100 ? true : undefined), timeoutMs);
  return { lite, lta, key };
}

export interface EnsureAdiArgs {
  /** acc://name.acme */
  url: string;
  /** defaults to `${url}/book` */
  keyBookUrl?: string;
  /** hash of the key that will own page 1 */
  publicKeyHash: Uint8Array | string;
  /** a funded lite identity (or key page) that pays for the ADI */
  sponsor: HeldKey;
  /** ACME token account of the sponsor paying for page credits */
  sponsorTokenAccount: string;
  /** whole credits to put on page 1 if it has fewer */
  pageCredits?: number;
  /** data accounts to create under the ADI, signed by `owner` */
  dataAccounts?: string[];
  /** the page-1 key, needed only for dataAccounts */
  owner?: HeldKey;
  timeoutMs?: number;
}

/** Create (if missing) an ADI with key book and page 1, fund page 1, create data accounts. Idempotent. */
export async function ensureAdi(c: LedgerClient, a: EnsureAdiArgs): Promise<{ url: string; book: string; page: string }> {
  const timeoutMs = a.timeoutMs ?? 30_000;
  const url = parseAccUrl(a.url, 'url').toString();
  const book = a.keyBookUrl ? parseAccUrl(a.keyBookUrl, 'keyBookUrl').toString() : `${url}/book`;
  const page = `${book}/1`;
  if (!(await c.tryQueryAccount(url))) {
    const st = await c.signAndSubmit(url, tx.createIdentity({ url, keyBookUrl: book, publicKeyHash: a.publicKeyHash }), a.sponsor);
    const res = await c.waitForTransaction(st.txId, { timeoutMs });
    if (!res.delivered && !(await c.tryQueryAccount(url)))
      throw new LedgerError(`createIdentity ${url} ${res.status}: ${res.error?.message ?? ''}`, res.status);
  }
  if (a.pageCredits) {
    const have = (await c.queryKeyPage(page)).creditBalance;
    if (have < a.pageCredits * 100) {
      const { amount, oracle } = await c.acmeForCredits(a.pageCredits);
      await mustDeliver(c, c.signAndSubmit(a.sponsorTokenAccount, tx.addCredits({ recipient: page, amount, oracle }), a.sponsor), timeoutMs);
      await until('page credits', async () => ((await c.queryKeyPage(page)).creditBalance > have ? true : undefined), timeoutMs);
    }
  }
  for (const d of a.dataAccounts ?? []) {
    const du = parseAccUrl(d, 'dataAccounts').toString();
    if (await c.tryQueryAccount(du)) continue;
    if (!a.owner) throw new LedgerError('ensureAdi: owner key required to create data accounts', 'badRequest');
    await mustDeliver(c, c.signAndSubmit(url, tx.createDataAccount({ url: du }), a.owner), timeoutMs);
  }
  return { url, book, page };
}

/** Public key hash (hex) of a held private key. */
export function publicKeyHashOf(privateKey: Uint8Array | string): string {
  return toHex(keyFromSeed(privateKey).address.publicKeyHash);
}

/**
 * Test networks: send `amount` base units (10^-8 ACME) of faucet ACME to the token account `to`, from the lite
 * token account of `privateKey` (topped up by the faucet as needed, with the credits to sign). Resolves with the
 * SendTokens once its deposit to `to` has landed. Not idempotent: each call sends again.
 */
export async function sendFaucetTokens(
  c: LedgerClient,
  privateKey: Uint8Array | string,
  to: string,
  amount: bigint,
  opts: { timeoutMs?: number } = {},
): Promise<TxStatus> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const f = await ensureFundedLite(c, privateKey, { minCredits: 10, topUpCredits: 100, timeoutMs });
  const balance = async () => BigInt((await c.tryQueryAccount(f.lta))?.balance ?? '0');
  for (let i = 0; i < 1000 && (await balance()) < amount; i++) {
    const before = await balance();
    await c.faucet(f.lta);
    await until('faucet deposit', async () => ((await balance()) > before ? true : undefined), timeoutMs);
  }
  const st = await c.signAndSubmit(f.lta, tx.sendTokens([{ url: to, amount }]), f.key);
  return c.waitForTransaction(st.txId, { timeoutMs, throwOnFailure: true, waitProduced: true });
}
