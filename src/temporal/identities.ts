/**
 * Client-side handles on the provisioning workflow (`identity-<id>`), started from the identity's row: by the API
 * right after the row is written, and by maintenance for a row left `creating` without a workflow (a crash between
 * the two). And on the workflow that links one more chain to an active identity (`identity-<id>-link-<chain>`).
 */
import type { Client } from '@temporalio/client';
import type { IdentityRow } from '../db/identities.js';
import { identityWorkflow, type IdentityWorkflowInput } from '../workflows/identity.js';
import { linkChainWorkflow, type LinkChainInput } from '../workflows/link-chain.js';
import { IdentityIdKey, OrgIdKey, StageKey } from '../workflows/search-attributes.js';
import { startOrCompensate, startResourceWorkflow, type Compensation, type ResourceStart } from './start.js';

export const identityWorkflowId = (identityId: string) => `identity-${identityId}`;

/** Start `identity-<id>` from the row (throws when the start fails, whatever the reason). */
function identityStart(taskQueue: string, row: IdentityRow): ResourceStart<IdentityWorkflowInput> {
  const input: IdentityWorkflowInput = {
    identityId: row.id,
    orgId: row.orgId,
    adiUrl: row.adiUrl,
    bookUrl: row.bookUrl,
    keyPageUrl: row.keyPageUrl,
    dataAccountUrl: row.dataAccountUrl,
    publicKeyHash: row.publicKeyHash,
    chains: row.requestedChains,
    credits: row.requestedCredits.toString(),
  };
  const searchAttributes = [
    { key: OrgIdKey, value: row.orgId },
    { key: IdentityIdKey, value: row.id },
    { key: StageKey, value: 'queued' },
  ];
  return { workflowId: identityWorkflowId(row.id), taskQueue, input, searchAttributes };
}

/** Start `identity-<id>` from the row (throws when the start fails, whatever the reason). */
export async function startIdentityWorkflow(client: Client, taskQueue: string, row: IdentityRow): Promise<void> {
  await startResourceWorkflow(client, identityWorkflow, identityStart(taskQueue, row));
}

/** Start `identity-<id>` for a row just written; `compensate` undoes the row when the workflow did not start. */
export async function startIdentityWorkflowOrCompensate(client: Client, taskQueue: string, row: IdentityRow, compensate: Compensation): Promise<void> {
  await startOrCompensate(client, identityWorkflow, identityStart(taskQueue, row), compensate);
}

/** One workflow per identity and chain: a second request for a chain being linked finds it running. */
export const linkChainWorkflowId = (identityId: string, chain: string) => `identity-${identityId}-link-${chain}`;

/**
 * Start `identity-<id>-link-<chain>` for a chain just added to the row's requested chains; `compensate` takes it
 * off again when the workflow did not start. A run that failed does not block a new request for the chain; one
 * that is running (or finished: the account exists) is the same link and counts as started.
 */
export async function startLinkChainWorkflowOrCompensate(
  client: Client,
  taskQueue: string,
  row: IdentityRow,
  link: { chain: string; expectedAddress: string | null },
  compensate: Compensation,
): Promise<void> {
  const input: LinkChainInput = { identityId: row.id, orgId: row.orgId, adiUrl: row.adiUrl, chain: link.chain, expectedAddress: link.expectedAddress };
  const searchAttributes = [
    { key: OrgIdKey, value: row.orgId },
    { key: IdentityIdKey, value: row.id },
    { key: StageKey, value: 'queued' },
  ];
  await startOrCompensate(
    client,
    linkChainWorkflow,
    { workflowId: linkChainWorkflowId(row.id, link.chain), taskQueue, input, searchAttributes, reusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' },
    compensate,
  );
}
