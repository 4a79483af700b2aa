/**
 * Expiry of unsigned intents. An intent's workflow starts with its first signature (or fresh signing data), so an
 * intent never signed has none to expire it: the sweep (intentExpiryWorkflow) finds it past expires_at and expires
 * it here. An intent whose workflow runs is left to that workflow, which expires it at the same instant (failIntent).
 * Either way the rule is the one below: an intent whose signature the ledger holds after all (submitted directly,
 * or by an attempt whose answer was lost) is submitted, not expired, and its cycle goes on.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { dueUnsignedIntents, markIntentFailed, markIntentSubmitted, nextUnsignedExpiry, recordedSubmissionOf, type IntentRow } from '../../db/intents.js';
import { isNotFound, LedgerTransportError } from '../../ledger/index.js';
import { EXPIRED_UNSIGNED } from '../../protocol/failures.js';
import { ledgerUnavailable, type CycleContext } from './context.js';

/** What the sweep needs of the intent workflow (src/temporal/intents.ts; passed in: activities import no workflow code). */
export interface IntentWorkflowAccess {
  exists(client: Client, intentId: string): Promise<boolean>;
  start(client: Client, taskQueue: string, row: IntentRow): Promise<void>;
}

/** Clocks of the API and workers may differ by this much: the sweep leaves an intent alone until then past its expiry. */
const CLOCK_SKEW_MS = 1000;

export interface ExpirySweep {
  expired: number;
  /** intents the ledger held signed: their workflow started */
  resumed: number;
  /** more intents are due than one round takes */
  more: boolean;
  /** ms until the next unsigned intent is due (undefined: none waits) */
  nextDueInMs?: number;
}

/** The ledger's transaction of an unsigned intent that holds its signature after all (submitted directly, or by an attempt whose answer was lost). */
async function heldByLedger(ctx: CycleContext, row: IntentRow): Promise<{ txId: string; txHash: string } | undefined> {
  const recorded = recordedSubmissionOf(row);
  if (recorded) return recorded;
  try {
    return await ctx.heldByLedger(row.prepared);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e instanceof LedgerTransportError ? ledgerUnavailable(e) : e;
  }
}

/**
 * An unsigned intent at its expiry: when the ledger holds its signature after all, the intent is marked submitted and
 * that transaction is answered; otherwise it is expired (with transaction.failed, its spend reservation given back).
 */
export async function expireUnsigned(ctx: CycleContext, row: IntentRow, error: string): Promise<{ txId: string; txHash: string } | undefined> {
  const held = await heldByLedger(ctx, row);
  if (held) {
    await markIntentSubmitted(ctx.db, row.id, held);
    return held;
  }
  await markIntentFailed(ctx.db, row.id, { status: 'expired', stage: row.stage, error });
  return undefined;
}

export function expirySteps(ctx: CycleContext, workflows: IntentWorkflowAccess) {
  const { db } = ctx;
  return {
    /**
     * One round of the sweep: up to `limit` unsigned intents past their expiry that have no workflow are expired, or,
     * held by the ledger, get their workflow, which finds its expiry passed and goes on from the ledger's transaction
     * (failIntent); then how long until the next one is due.
     */
    async expireDueIntents(i: { limit: number }): Promise<ExpirySweep> {
      const { client, info } = Context.current();
      const now = Date.now();
      const due = await dueUnsignedIntents(db, new Date(now - CLOCK_SKEW_MS), i.limit + 1);
      const out: ExpirySweep = { expired: 0, resumed: 0, more: due.length > i.limit };
      for (const row of due.slice(0, i.limit)) {
        if (await workflows.exists(client, row.id)) continue;
        if (await heldByLedger(ctx, row)) {
          await workflows.start(client, info.taskQueue, row);
          out.resumed++;
        } else {
          await markIntentFailed(db, row.id, { status: 'expired', stage: row.stage, error: EXPIRED_UNSIGNED });
          out.expired++;
        }
      }
      const next = await nextUnsignedExpiry(db, new Date(now - CLOCK_SKEW_MS));
      if (next) out.nextDueInMs = Math.max(0, next.getTime() + CLOCK_SKEW_MS - Date.now());
      return out;
    },
  };
}
