/**
 * creditsWorkflow (`credits-<purchase id>`): buys credits for a key page of an identity after its creation, charged
 * to the organization's grant before the workflow starts (by the API).
 *
 *   buyCredits            AddCredits from the sponsor to the page, exactly once, and its deposit; the new balance
 *   refundCreditPurchase  when buying failed for good: the grant gets the credits back if the ledger never took them
 *
 * Orchestration only. Transient faults are retried with backoff; a permanent one (the sponsor out of funds or
 * credits) ends the workflow failed with the reason, after the refund.
 */
import { ApplicationFailure, proxyActivities, type RetryPolicy } from '@temporalio/workflow';
import type { CreditActivities, CreditPurchaseInput } from '../activities/credits.js';
import { NON_RETRYABLE_LEDGER_ERRORS } from '../protocol/failures.js';
import { innermostFailure } from './failure.js';

export type CreditsWorkflowInput = CreditPurchaseInput;

export interface CreditsWorkflowResult {
  purchaseId: string;
  keyPageUrl: string;
  /** whole credits bought */
  credits: string;
  /** the page's balance once the credits landed (whole credits) */
  creditBalance: number;
  txId: string;
}

const retry: RetryPolicy = {
  initialInterval: '200 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '10 seconds',
  nonRetryableErrorTypes: [...NON_RETRYABLE_LEDGER_ERRORS],
};

const ledgerActs = proxyActivities<CreditActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '15 seconds',
  scheduleToCloseTimeout: '15 minutes',
  retry,
});
const store = proxyActivities<CreditActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { ...retry, maximumInterval: '5 seconds' },
});

export async function creditsWorkflow(input: CreditsWorkflowInput): Promise<CreditsWorkflowResult> {
  try {
    const { creditBalance, txId } = await ledgerActs.buyCredits(input);
    return { purchaseId: input.purchaseId, keyPageUrl: input.keyPageUrl, credits: input.credits, creditBalance, txId };
  } catch (err) {
    await store.refundCreditPurchase(input);
    const { type, message } = innermostFailure(err);
    throw ApplicationFailure.nonRetryable(message, type ?? 'CreditPurchaseFailed');
  }
}
