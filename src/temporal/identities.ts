/**
 * Client-side handles on the provisioning workflow (`identity-<id>`), started from the identity's row: by the API
 * right after the row is written, and by maintenance for a row left `creating` without a workflow (a crash between
 * the two).
 */
import type { Client } from '@temporalio/client';
import type { IdentityRow } from '../db/identities.js';
import { identityWorkflow, type IdentityWorkflowInput } from '../workflows/identity.js';
import { IdentityIdKey, OrgIdKey, StageKey } from '../workflows/search-attributes.js';
import { startOrCompensate, type Compensation } from './start.js';

export const identityWorkflowId = (identityId: string) => `identity-${identityId}`;

/** Start `identity-<id>` from the row (throws when the start fails, whatever the reason). */
export async function startIdentityWorkflow(client: Client, taskQueue: string, row: IdentityRow): Promise<void> {
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
  await client.workflow.start(identityWorkflow, {
    workflowId: identityWorkflowId(row.id),
    taskQueue,
    args: [input],
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: [
      { key: OrgIdKey, value: row.orgId },
      { key: IdentityIdKey, value: row.id },
      { key: StageKey, value: 'queued' },
    ],
  });
}

/** Start `identity-<id>` for a row just written; `compensate` undoes the row when the workflow did not start. */
export async function startIdentityWorkflowOrCompensate(client: Client, taskQueue: string, row: IdentityRow, compensate: Compensation): Promise<void> {
  await startOrCompensate(client, identityWorkflowId(row.id), () => startIdentityWorkflow(client, taskQueue, row), compensate);
}
