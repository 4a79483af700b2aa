/**
 * Credits bought after creation for a key page of an identity (page 1 or a page made by create_key_page), paid by
 * the gateway sponsor's ACME like the credits of provisioning:
 *
 *   buyCredits            AddCredits from the sponsor's lite token account to the page, exactly once per purchase
 *                         (the ledger-once record `credits-<purchase id>` on the identity row), then the deposit it
 *                         produced; answers the page's new balance (whole credits), stored on the row for page 1
 *   refundCreditPurchase  the purchase's credits back to the organization's grant, once, when the ledger never
 *                         executed its AddCredits
 *
 * Permanent faults are non-retryable ApplicationFailures: SponsorOutOfFunds, SponsorOutOfCredits (the workflow then
 * refunds the grant). Everything else is retried.
 */
import { ApplicationFailure } from '@temporalio/common';
import { refundFailedPurchase } from '../db/credits.js';
import { setIdentityCreditBalance } from '../db/identities.js';
import type { Sponsor } from '../identity/sponsor.js';
import { isNotFound, normUrl, tx, type TxStatus } from '../ledger/index.js';
import { createOnceSubmitter, type OnceSubmitterDeps } from './ledger-once.js';

export interface CreditActivityDeps extends OnceSubmitterDeps {
  sponsor: Sponsor;
}

export interface CreditPurchaseInput {
  purchaseId: string;
  orgId: string;
  identityId: string;
  /** the identity's page 1: its balance is the identity's credit_balance */
  identityKeyPageUrl: string;
  /** the page the credits go to */
  keyPageUrl: string;
  /** whole credits, decimal string */
  credits: string;
}

/** The exactly-once record of a purchase on the identity row. */
export const purchaseStep = (purchaseId: string) => `credits-${purchaseId}`;

export function createCreditActivities(deps: CreditActivityDeps) {
  const { db, ledger, sponsor } = deps;
  const { submitOnce, waitUntil } = createOnceSubmitter(deps);

  return {
    async buyCredits(i: CreditPurchaseInput): Promise<{ creditBalance: number; txId: string }> {
      const step = purchaseStep(i.purchaseId);
      const { amount, oracle } = await ledger.acmeForCredits(BigInt(i.credits));
      const lta = await ledger.tryQueryAccount(sponsor.liteTokenAccount);
      if (BigInt(lta?.balance ?? '0') < amount) {
        throw ApplicationFailure.nonRetryable(
          `the sponsor's ACME balance cannot pay for ${i.credits} credits: ${sponsor.liteTokenAccount} holds ${lta?.balance ?? 0}, needs ${amount} (1e-8 ACME)`,
          'SponsorOutOfFunds',
        );
      }
      const st = await submitOnce(
        i.identityId,
        step,
        sponsor.liteTokenAccount,
        tx.addCredits({ recipient: i.keyPageUrl, amount, oracle }),
        sponsor.asLite(),
        'sponsor',
      );
      // the credits land with the synthetic deposit the AddCredits produced, a block or more later
      for (const deposit of st.produced) {
        await waitUntil<TxStatus>(`the credit deposit ${deposit}`, async () => {
          const d = await ledger.getTransaction(deposit).catch((e: unknown) => {
            if (isNotFound(e)) return undefined;
            throw e;
          });
          return d && (d.delivered || d.failed) ? d : undefined;
        });
      }
      const page = await ledger.queryKeyPage(i.keyPageUrl);
      const credits = Math.floor(page.creditBalance / 100);
      if (normUrl(i.keyPageUrl) === normUrl(i.identityKeyPageUrl)) await setIdentityCreditBalance(db, i.identityId, BigInt(credits));
      return { creditBalance: credits, txId: st.txId };
    },

    async refundCreditPurchase(i: CreditPurchaseInput): Promise<{ refunded: boolean }> {
      const refunded = await refundFailedPurchase(db, {
        orgId: i.orgId,
        identityId: i.identityId,
        step: purchaseStep(i.purchaseId),
        credits: BigInt(i.credits),
      });
      return { refunded };
    },
  };
}
export type CreditActivities = ReturnType<typeof createCreditActivities>;
