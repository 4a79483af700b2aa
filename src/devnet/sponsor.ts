/**
 * The devnet sponsor: an Ed25519 key generated once and kept in `<dataDir>/sponsor.key` (mode 0600), funded
 * through the ledger faucet (ACME on its lite token account) and converted to credits on its lite identity,
 * topped up on every start. SPONSOR_KEY in the environment takes precedence over the file.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createSponsor, type Sponsor } from '../identity/sponsor.js';
import { tx, type LedgerClient } from '../ledger/index.js';
import { sleep } from '../net/sleep.js';

export function sponsorKeyFile(dataDir: string): string {
  return join(dataDir, 'sponsor.key');
}

/** The sponsor seed (hex) from `<dataDir>/sponsor.key`, generated on first use. */
export function loadOrCreateSponsorKey(dataDir: string): string {
  const file = sponsorKeyFile(dataDir);
  if (existsSync(file)) {
    const hex = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${file}: expected 64 hex characters`);
    return hex.toLowerCase();
  }
  mkdirSync(dirname(file), { recursive: true });
  const hex = randomBytes(32).toString('hex');
  writeFileSync(file, `${hex}\n`, { mode: 0o600 });
  return hex;
}

export interface FundOptions {
  /** keep at least this many whole credits on the lite identity (default 20 000 000) */
  minCredits?: bigint;
  /** and at least this much ACME (base units, 1e-8) on the lite token account for AddCredits (default 50 ACME) */
  minAcme?: bigint;
  timeoutMs?: number;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`devnet sponsor: timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * Faucet + AddCredits until the sponsor has `minCredits` credits and `minAcme` ACME. Only for networks with a
 * faucet (the simulator, test networks). Returns the balances reached.
 */
export async function fundSponsor(ledger: LedgerClient, sponsor: Sponsor, opts: FundOptions = {}): Promise<{ credits: bigint; acme: bigint }> {
  const minCredits = opts.minCredits ?? 20_000_000n;
  const minAcme = opts.minAcme ?? 5_000_000_000n;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const acme = async () => BigInt((await ledger.tryQueryAccount(sponsor.liteTokenAccount))?.balance ?? '0');
  const credits = async () => BigInt(Math.floor(((await ledger.tryQueryAccount(sponsor.liteIdentity))?.creditBalance ?? 0) / 100));

  let haveCredits = await credits();
  if (haveCredits < minCredits) {
    const { amount, oracle } = await ledger.acmeForCredits(minCredits - haveCredits);
    while ((await acme()) < amount + minAcme) {
      const before = await acme();
      await ledger.faucet(sponsor.liteTokenAccount);
      await until('faucet', async () => ((await acme()) > before ? true : undefined), timeoutMs);
    }
    const r = await ledger.signAndSubmit(sponsor.liteTokenAccount, tx.addCredits({ recipient: sponsor.liteIdentity, amount, oracle }), sponsor.asLite());
    const st = await ledger.waitForTransaction(r.txId, { timeoutMs });
    if (!st.delivered) throw new Error(`devnet sponsor: AddCredits ${st.status}: ${st.error?.message ?? ''}`);
    haveCredits = await until(
      'sponsor credits',
      async () => {
        const c = await credits();
        return c >= minCredits ? c : undefined;
      },
      timeoutMs,
    );
  }
  while ((await acme()) < minAcme) {
    const before = await acme();
    await ledger.faucet(sponsor.liteTokenAccount);
    await until('faucet', async () => ((await acme()) > before ? true : undefined), timeoutMs);
  }
  return { credits: haveCredits, acme: await acme() };
}

/** The devnet sponsor, created if needed and funded. */
export async function ensureDevnetSponsor(
  ledger: LedgerClient,
  p: { dataDir: string; sponsorKey?: string } & FundOptions,
): Promise<{ sponsor: Sponsor; sponsorKey: string }> {
  const sponsorKey = p.sponsorKey ?? loadOrCreateSponsorKey(p.dataDir);
  const sponsor = createSponsor(sponsorKey);
  await fundSponsor(ledger, sponsor, p);
  return { sponsor, sponsorKey };
}
