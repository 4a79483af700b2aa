/**
 * Ledger activities of identity provisioning. Each one looks at the ledger first and does only
 * what is missing, so a retry or a worker crash never repeats an effect:
 *
 *   ensureAdi          CreateIdentity acc://<name>.<suffix> with book and page 1 keyed to the sponsor
 *   ensureCredits      AddCredits to page 1: the requested credits plus what the setup itself costs
 *   ensureDataAccount  CreateDataAccount <adi>/data (signed by page 1 with the sponsor key)
 *   ensureTokenAccount CreateTokenAccount <adi>/tokens for ACME (the same way): the identity's ledger token account
 *   ensureClientKey    UpdateKeyPage: the sponsor's key on page 1 becomes the client's key hash
 *   readCreditBalance  page 1's credits (whole credits)
 *
 * Exactly-once submission (ledger-once.ts): a step's transaction is recorded in the identity row before it is
 * submitted, and a retry follows the recorded transaction instead of signing a new one.
 *
 * Permanent faults are non-retryable ApplicationFailures (the workflow ends in `failed` with the message):
 * NameTaken, SponsorOutOfCredits, SponsorOutOfFunds, PageOutOfCredits, KeyPageChanged. Everything else
 * (transport errors, timeouts, stale timestamps) is thrown as is and retried with backoff.
 */
import { ApplicationFailure } from '@temporalio/common';
import { createdEarlierBySameOrg, getLedgerTxRecord, setIdentityCreditBalance, setIdentityStage, type ProvisioningStage } from '../db/identities.js';
import type { Sponsor } from '../identity/sponsor.js';
import { LedgerError, tx } from '../ledger/index.js';
import { createOnceSubmitter, type OnceSubmitterDeps } from './ledger-once.js';

/**
 * Credits the setup spends from page 1 before the client's key takes over: CreateDataAccount (25) and
 * UpdateKeyPage with one operation (3), per the Accumulate fee schedule. Bought on top of the requested credits
 * so that an identity created with credits 0 ends with (about) 0.
 */
export const SETUP_CREDITS = 28n;

/** CreateTokenAccount (25 credits): bought on top for identities whose provisioning makes their token account. */
export const TOKEN_ACCOUNT_CREDITS = 25n;

export interface LedgerActivityDeps extends OnceSubmitterDeps {
  sponsor: Sponsor;
}

export interface LedgerStepInput {
  identityId: string;
  adiUrl: string;
  bookUrl: string;
  keyPageUrl: string;
  dataAccountUrl: string;
  /** hex SHA-256 of the client's public key */
  publicKeyHash: string;
  /** whole credits requested by the client, decimal string */
  credits: string;
  /** the ACME token account provisioning makes (<adi>/tokens); absent for runs from before token accounts */
  tokenAccountUrl?: string;
  /** stage to record in the database when the step starts */
  stage?: ProvisioningStage;
}

export interface StepResult {
  /** false when the ledger already showed the step as done */
  submitted: boolean;
  txId?: string;
}

export function createLedgerActivities(deps: LedgerActivityDeps) {
  const { db, ledger, sponsor } = deps;
  const { submitOnce, waitUntil } = createOnceSubmitter(deps);

  const keyHashes = async (pageUrl: string): Promise<string[] | undefined> => {
    const page = await ledger.tryQueryAccount(pageUrl);
    if (page?.type !== 'keyPage') return undefined;
    return (page.raw.keys ?? []).map((k: { publicKeyHash?: string }) => String(k.publicKeyHash ?? '').toLowerCase());
  };

  /**
   * The ADI exists and is ours: page 1 still holds the sponsor's key (the gateway created it and has not handed it
   * over yet), or it holds the client's key and this identity created it (its own CreateIdentity is recorded) or an
   * earlier, retired identity of the same organization and key did. A key hash is public, so the client's key alone
   * proves nothing: an ADI handed over to another organization's client stays taken.
   */
  async function ownsAdi(i: LedgerStepInput): Promise<boolean> {
    const adi = await ledger.tryQueryAccount(i.adiUrl);
    if (!adi) return false;
    const keys = adi.type === 'identity' ? await keyHashes(i.keyPageUrl) : undefined;
    if (keys?.includes(sponsor.publicKeyHash)) return true;
    if (keys?.includes(i.publicKeyHash.toLowerCase())) {
      if ((await getLedgerTxRecord(db, i.identityId, 'adi')) || (await createdEarlierBySameOrg(db, i.identityId))) return true;
    }
    throw ApplicationFailure.nonRetryable(`name already taken on the ledger: ${i.adiUrl} exists and is not controlled by this identity`, 'NameTaken');
  }

  async function stage(i: LedgerStepInput) {
    if (i.stage) await setIdentityStage(db, i.identityId, i.stage);
  }

  return {
    async ensureAdi(i: LedgerStepInput): Promise<StepResult> {
      await stage(i);
      if (i.publicKeyHash.toLowerCase() === sponsor.publicKeyHash) {
        // the hand-over would be a no-op and the sponsor would keep the page: refuse before anything is created
        throw ApplicationFailure.nonRetryable(`public_key: is the gateway sponsor's key; an identity needs a key of its own`, 'ClientKeyIsSponsor');
      }
      if (await ownsAdi(i)) return { submitted: false };
      const lite = await ledger.tryQueryAccount(sponsor.liteIdentity);
      if (!lite || (lite.creditBalance ?? 0) <= 0) {
        throw ApplicationFailure.nonRetryable(
          `the sponsor is out of credits: ${sponsor.liteIdentity} ${lite ? 'has 0 credits' : 'does not exist (never funded)'}`,
          'SponsorOutOfCredits',
        );
      }
      const body = tx.createIdentity({ url: i.adiUrl, keyBookUrl: i.bookUrl, publicKeyHash: sponsor.publicKeyHash });
      try {
        const st = await submitOnce(i.identityId, 'adi', i.adiUrl, body, sponsor.asLite(), 'sponsor');
        return { submitted: true, txId: st.txId };
      } catch (e) {
        // lost a race with another creator of the same name? ownsAdi answers (and throws NameTaken if so)
        if (await ownsAdi(i)) return { submitted: false };
        throw e;
      }
    },

    async ensureCredits(i: LedgerStepInput): Promise<StepResult & { credits: string }> {
      await stage(i);
      const want = BigInt(i.credits) + SETUP_CREDITS + (i.tokenAccountUrl ? TOKEN_ACCOUNT_CREDITS : 0n);
      // Whether this identity bought its credits is told by its own record alone (written before any
      // submission, kept once delivered). The page's state cannot tell: credits or keys on it may come from
      // someone else (an earlier identity of the same name).
      const rec = await getLedgerTxRecord(db, i.identityId, 'credits');
      const { amount, oracle } = await ledger.acmeForCredits(want);
      if (!rec) {
        const lta = await ledger.tryQueryAccount(sponsor.liteTokenAccount);
        if (BigInt(lta?.balance ?? '0') < amount) {
          throw ApplicationFailure.nonRetryable(
            `the sponsor's ACME balance cannot pay for ${want} credits: ${sponsor.liteTokenAccount} holds ${lta?.balance ?? 0}, needs ${amount} (1e-8 ACME)`,
            'SponsorOutOfFunds',
          );
        }
      }
      const body = tx.addCredits({ recipient: i.keyPageUrl, amount, oracle });
      const st = await submitOnce(i.identityId, 'credits', sponsor.liteTokenAccount, body, sponsor.asLite(), 'sponsor');
      // the credits land with a synthetic deposit a block or more after the AddCredits executes
      const balance = await waitUntil<number>('credits on the key page', async () => {
        const p = await ledger.queryKeyPage(i.keyPageUrl);
        if (p.creditBalance > 0) return p.creditBalance;
        // already spent by later steps (a retry after those ran)
        return (await ledger.tryQueryAccount(i.dataAccountUrl)) ? p.creditBalance : undefined;
      });
      await setIdentityCreditBalance(db, i.identityId, BigInt(Math.floor(balance / 100)));
      return { submitted: true, txId: st.txId, credits: String(Math.floor(balance / 100)) };
    },

    async ensureDataAccount(i: LedgerStepInput): Promise<StepResult> {
      await stage(i);
      if (await ledger.tryQueryAccount(i.dataAccountUrl)) return { submitted: false };
      const keys = await keyHashes(i.keyPageUrl);
      if (!keys?.includes(sponsor.publicKeyHash)) {
        throw ApplicationFailure.nonRetryable(`cannot create ${i.dataAccountUrl}: the sponsor key is no longer on ${i.keyPageUrl}`, 'KeyPageChanged');
      }
      const st = await submitOnce(i.identityId, 'data', i.adiUrl, tx.createDataAccount({ url: i.dataAccountUrl }), sponsor.asPage(i.keyPageUrl), 'page');
      return { submitted: true, txId: st.txId };
    },

    async ensureTokenAccount(i: LedgerStepInput): Promise<StepResult> {
      await stage(i);
      const url = i.tokenAccountUrl;
      if (!url) throw ApplicationFailure.nonRetryable('ensureTokenAccount: no token account URL given', 'InvalidInput');
      if (await ledger.tryQueryAccount(url)) return { submitted: false };
      const keys = await keyHashes(i.keyPageUrl);
      if (!keys?.includes(sponsor.publicKeyHash)) {
        throw ApplicationFailure.nonRetryable(`cannot create ${url}: the sponsor key is no longer on ${i.keyPageUrl}`, 'KeyPageChanged');
      }
      const st = await submitOnce(i.identityId, 'tokens', i.adiUrl, tx.createTokenAccount({ url }), sponsor.asPage(i.keyPageUrl), 'page');
      return { submitted: true, txId: st.txId };
    },

    async ensureClientKey(i: LedgerStepInput): Promise<StepResult> {
      await stage(i);
      const client = i.publicKeyHash.toLowerCase();
      const keys = await keyHashes(i.keyPageUrl);
      if (!keys) throw new LedgerError(`${i.keyPageUrl} not found`, 'notFound');
      const hasClient = keys.includes(client);
      const hasSponsor = keys.includes(sponsor.publicKeyHash);
      if (hasClient && !hasSponsor) return { submitted: false };
      if (!hasSponsor) {
        throw ApplicationFailure.nonRetryable(`${i.keyPageUrl} holds neither the sponsor's nor the client's key`, 'KeyPageChanged');
      }
      const op: tx.KeyPageOp = hasClient
        ? { type: 'removeKey', publicKeyHash: sponsor.publicKeyHash }
        : { type: 'updateKey', oldPublicKeyHash: sponsor.publicKeyHash, newPublicKeyHash: client };
      const st = await submitOnce(i.identityId, 'key', i.keyPageUrl, tx.updateKeyPage([op]), sponsor.asPage(i.keyPageUrl), 'page');
      return { submitted: true, txId: st.txId };
    },

    /** Whole credits on page 1 (the identity's credit_balance), stored on the row as well. */
    async readCreditBalance(i: { identityId: string; keyPageUrl: string }): Promise<string> {
      await setIdentityStage(db, i.identityId, 'finalizing');
      const page = await ledger.queryKeyPage(i.keyPageUrl);
      const credits = BigInt(Math.floor(page.creditBalance / 100));
      await setIdentityCreditBalance(db, i.identityId, credits);
      return credits.toString();
    },
  };
}
export type LedgerActivities = ReturnType<typeof createLedgerActivities>;
