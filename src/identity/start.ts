/**
 * Starting an identity's provisioning workflow (`identity-<id>`) from its row: by the API right after the row is
 * written, and by maintenance for a row left `creating` without a workflow (a crash between the two).
 */
import type { Client } from '@temporalio/client';
import type { IdentityRow } from '../db/identities.js';
import type { IdentityWorkflowInput, identityWorkflow } from '../workflows/identity.js';
import { IdentityIdKey, OrgIdKey, StageKey } from '../workflows/search-attributes.js';

export const identityWorkflowId = (identityId: string) => `identity-${identityId}`;

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
  await client.workflow.start<typeof identityWorkflow>('identityWorkflow', {
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
