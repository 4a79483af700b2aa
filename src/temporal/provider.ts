/** Client-side handle on providerSignWorkflow: run it and wait for the signature. */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { ProviderSignInput, ProviderSignResult } from '../activities/provider.js';

export type { ProviderSignInput, ProviderSignResult };
import { providerKeySwitchWorkflow, providerSignWorkflow } from '../workflows/provider-sign.js';
import { OrgIdKey } from '../workflows/search-attributes.js';

export const providerSignWorkflowId = (i: ProviderSignInput) => `provider-sign-${i.kind}-${i.id}`;

export async function runProviderSign(client: Client, taskQueue: string, orgId: string, input: ProviderSignInput): Promise<ProviderSignResult> {
  return client.workflow.execute(providerSignWorkflow, {
    workflowId: providerSignWorkflowId(input),
    taskQueue,
    args: [input],
    typedSearchAttributes: [{ key: OrgIdKey, value: orgId }],
    workflowExecutionTimeout: '2 minutes',
  });
}

/** Whether a key switch of the identity is still waiting for its governance operation. */
export async function providerKeySwitchRunning(client: Client, identityId: string): Promise<boolean> {
  try {
    const d = await client.workflow.getHandle(`provider-key-switch-${identityId}`).describe();
    return d.status.name === 'RUNNING';
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return false;
    throw e;
  }
}

/** Start the wait for a key switch's governance operation, after which the held key is destroyed. */
export async function startProviderKeySwitch(
  client: Client,
  taskQueue: string,
  orgId: string,
  input: { identityId: string; opId: string; publicKey: string },
): Promise<void> {
  await client.workflow.start(providerKeySwitchWorkflow, {
    workflowId: `provider-key-switch-${input.identityId}`,
    taskQueue,
    args: [input],
    typedSearchAttributes: [{ key: OrgIdKey, value: orgId }],
    workflowExecutionTimeout: '48 hours',
  });
}
