/**
 * Pending discovery. A Temporal Schedule (src/temporal/schedules.ts) runs `pendingDiscoveryWorkflow`, which starts
 * one child `pending-scan-<orgId>` per organization with an active identity. Per-organization workflows keep one
 * organization's slow or failing scan from delaying the others, show each organization's last scan in the
 * Temporal UI, and can be started on demand for one organization; a single schedule keeps the set of
 * organizations out of the schedule's lifecycle (new organizations are picked up on the next run).
 */
import { executeChild, proxyActivities, type RetryPolicy } from '@temporalio/workflow';
import type { PendingActivities, PendingScanResult } from '../activities/pending.js';
import { notifyWebhookDispatcher } from './webhook-dispatcher.js';

const retry: RetryPolicy = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 };
const acts = proxyActivities<PendingActivities>({ startToCloseTimeout: '5 minutes', retry });
/** The scan heartbeats per identity and per transaction: a scan on a worker that died is retried within 30 s. */
const scan = proxyActivities<PendingActivities>({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '30 seconds', retry });

export const pendingScanWorkflowId = (orgId: string) => `pending-scan-${orgId}`;

/** Scan one organization (the scan itself records a degraded outcome instead of failing on ledger errors). */
export async function pendingScanWorkflow(input: { orgId: string }): Promise<PendingScanResult> {
  const result = await scan.scanOrgPending(input.orgId);
  if (result.created > 0) await notifyWebhookDispatcher();
  return result;
}

export async function pendingDiscoveryWorkflow(): Promise<{ organizations: number; scanned: number }> {
  const orgs = await acts.organizationsToScan();
  const runs = await Promise.allSettled(
    orgs.map((orgId) => executeChild(pendingScanWorkflow, { workflowId: pendingScanWorkflowId(orgId), args: [{ orgId }] })),
  );
  return { organizations: orgs.length, scanned: runs.filter((r) => r.status === 'fulfilled').length };
}
