/**
 * The pending inbox's write after an activity submitted a signature (an intent's, a governance operation's): the
 * transaction enters the inbox of every identity it involves at once (src/governance/inbox.ts, the code the scan
 * uses), and the webhook dispatcher is nudged when that made new actions, whose inbox.action_pending events were
 * recorded with them. Never fails the submission: what could not be written is left to the scan.
 */
import { Context } from '@temporalio/activity';
import type { Db } from '../db/client.js';
import { recordInInbox, type InboxRecord } from '../governance/inbox.js';
import type { LedgerClient } from '../ledger/index.js';
import { kickWebhookDispatcher } from '../temporal/webhooks.js';

export async function recordSubmissionInInbox(db: Db, ledger: LedgerClient, s: { txId: string; signedBy?: string }): Promise<InboxRecord> {
  const out = await recordInInbox(db, ledger, s);
  if (out.created > 0) {
    try {
      const { client, info } = Context.current();
      await kickWebhookDispatcher(client, info.taskQueue);
    } catch {
      // outside an activity, or Temporal unreachable: the dispatcher finds the events at its next look
    }
  }
  return out;
}
