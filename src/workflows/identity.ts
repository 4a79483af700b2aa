/**
 * identityWorkflow (`identity-<id>`): provisions one identity.
 *
 *   creating_adi          sponsor creates acc://<name>.<suffix> with book and page 1
 *   ── then in parallel ──────────────────────────────────────────────────────────────
 *   adding_credits        AddCredits to page 1                 │ deploying_accounts: the AbstractAccount
 *   creating_data_account CreateDataAccount <adi>/data         │ on every requested chain (parallel); safe
 *   creating_token_account CreateTokenAccount <adi>/tokens     │ (ACME; runs since IDENTITY_TOKEN_ACCOUNT)
 *   setting_key           page 1's key becomes the client's    │ once the ADI is known to be ours
 *   ──────────────────────────────────────────────────────────────────────────────────
 *   finalizing            read the page's credits; status active
 *
 * Orchestration only: every effect is an idempotent activity. Transient faults are retried with backoff; a
 * permanent one (name taken, sponsor out of credits, chain not configured) ends the identity in `failed` with
 * the reason, and the workflow fails so it stands out in the Temporal UI. The current step is the Stage search
 * attribute and the row's `stage`; a query `progress` answers the same from the workflow itself.
 */
import { ApplicationFailure, defineQuery, patched, proxyActivities, type RetryPolicy, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { ChainActivities } from '../activities/chain.js';
import type { IdentityStoreActivities } from '../activities/identity-store.js';
import type { LedgerActivities, LedgerStepInput } from '../activities/ledger.js';
import { NON_RETRYABLE_CHAIN_ERRORS, NON_RETRYABLE_LEDGER_ERRORS } from '../protocol/failures.js';
import { innermostFailure } from './failure.js';
import { StageKey } from './search-attributes.js';

export interface IdentityWorkflowInput {
  identityId: string;
  orgId: string;
  adiUrl: string;
  bookUrl: string;
  keyPageUrl: string;
  dataAccountUrl: string;
  publicKeyHash: string;
  chains: string[];
  /** whole credits, decimal string */
  credits: string;
}

export interface IdentityWorkflowResult {
  identityId: string;
  status: 'active';
  creditBalance: string;
  chainAccounts: { chain: string; chainId: string; address: string; deploymentTx: string | null }[];
}

export interface IdentityProgress {
  stage: string;
  completed: string[];
  chainAccounts: string[];
}

export const identityProgressQuery = defineQuery<IdentityProgress>('progress');

/** New runs give the identity an ACME token account (<adi>/tokens) before its key page is handed over. */
export const IDENTITY_TOKEN_ACCOUNT = 'identity-token-account';

const NON_RETRYABLE = [...NON_RETRYABLE_LEDGER_ERRORS, ...NON_RETRYABLE_CHAIN_ERRORS];

const retry: RetryPolicy = { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', nonRetryableErrorTypes: NON_RETRYABLE };

const ledgerActs = proxyActivities<LedgerActivities>({
  startToCloseTimeout: '2 minutes',
  // activities heartbeat while they wait, so a worker that dies mid-step is noticed within 15 s (shorter
  // timeouts fired spuriously on a loaded 2-core machine with 20 identities in flight)
  heartbeatTimeout: '15 seconds',
  scheduleToCloseTimeout: '15 minutes',
  retry,
});
const chainActs = proxyActivities<ChainActivities>({
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '15 seconds',
  scheduleToCloseTimeout: '15 minutes',
  retry,
});
const store = proxyActivities<IdentityStoreActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { ...retry, maximumInterval: '5 seconds' },
});

export async function identityWorkflow(input: IdentityWorkflowInput): Promise<IdentityWorkflowResult> {
  const progress: IdentityProgress = { stage: 'queued', completed: [], chainAccounts: [] };
  setHandler(identityProgressQuery, () => progress);
  // the sponsor can create the account only while its key is on page 1: so before setting_key, or never
  const tokenAccountUrl = patched(IDENTITY_TOKEN_ACCOUNT) ? `${input.adiUrl}/tokens` : undefined;
  const step = (stage: string) => {
    progress.stage = stage;
    upsertSearchAttributes([{ key: StageKey, value: stage }]);
  };
  const done = (stage: string) => progress.completed.push(stage);
  const ledgerInput = (stage: LedgerStepInput['stage']): LedgerStepInput => ({
    identityId: input.identityId,
    adiUrl: input.adiUrl,
    bookUrl: input.bookUrl,
    keyPageUrl: input.keyPageUrl,
    dataAccountUrl: input.dataAccountUrl,
    publicKeyHash: input.publicKeyHash,
    credits: input.credits,
    ...(tokenAccountUrl ? { tokenAccountUrl } : {}),
    stage,
  });

  try {
    step('creating_adi');
    await ledgerActs.ensureAdi(ledgerInput('creating_adi'));
    done('creating_adi');

    // From here the ADI is ours: the chain accounts go out while the ledger setup continues.
    const accounts = input.chains.map(async (chain) => {
      const a = await chainActs.ensureAbstractAccount({ identityId: input.identityId, adiUrl: input.adiUrl, chain });
      progress.chainAccounts.push(chain);
      return a;
    });
    const ledgerSetup = (async () => {
      step('adding_credits');
      await ledgerActs.ensureCredits(ledgerInput('adding_credits'));
      done('adding_credits');
      step('creating_data_account');
      await ledgerActs.ensureDataAccount(ledgerInput('creating_data_account'));
      done('creating_data_account');
      if (tokenAccountUrl) {
        step('creating_token_account');
        await ledgerActs.ensureTokenAccount(ledgerInput('creating_token_account'));
        done('creating_token_account');
      }
      step('setting_key');
      await ledgerActs.ensureClientKey(ledgerInput('setting_key'));
      done('setting_key');
      if (progress.chainAccounts.length < input.chains.length) {
        step('deploying_accounts');
        await store.recordIdentityStage(input.identityId, 'deploying_accounts');
      }
    })();
    // wait for every branch before deciding, so nothing is left running behind a failure
    const settled = await Promise.allSettled([ledgerSetup, ...accounts]);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    if (input.chains.length) done('deploying_accounts');
    const deployed = settled.slice(1).map((s) => (s as PromiseFulfilledResult<Awaited<(typeof accounts)[number]>>).value);
    if (new Set(deployed.map((a) => a.address.toLowerCase())).size > 1) {
      // one address on every chain is the identity's promise; different factories break it (a configuration fault)
      throw ApplicationFailure.nonRetryable(
        `the abstract account's address differs between chains (${deployed.map((a) => `${a.chain} ${a.address}`).join(', ')}): their AccountFactory deployments differ`,
        'ChainNotConfigured',
      );
    }

    step('finalizing');
    const creditBalance = await ledgerActs.readCreditBalance({ identityId: input.identityId, keyPageUrl: input.keyPageUrl });
    await store.markIdentityActive(input.identityId, creditBalance);
    step('done');
    const chainAccounts = deployed.map((a) => ({ chain: a.chain, chainId: a.chainId, address: a.address, deploymentTx: a.deploymentTx }));
    return { identityId: input.identityId, status: 'active', creditBalance, chainAccounts };
  } catch (err) {
    const message = innermostFailure(err).message || 'provisioning failed';
    step('failed');
    await store.markIdentityFailed(input.identityId, message);
    throw ApplicationFailure.nonRetryable(`identity provisioning failed: ${message}`, 'ProvisioningFailed');
  }
}
