/**
 * Pending discovery: find the ledger transactions waiting for signatures that involve an organization's active
 * identities, and keep the pending_actions inbox in step with the ledger. The transactions the gateway submits
 * itself are written when it submits them (src/governance/inbox.ts, the same code) and GET /v1/pending reads the
 * listed ones live; the scan finds those submitted elsewhere and closes what nobody read.
 *
 *   1. read the pending list of every account of every active identity (ADI, book, its pages, data account):
 *      the ledger lists a pending transaction on its principal;
 *   2. a transaction involves an identity when its principal is one of the identity's accounts, when the
 *      identity's book is a required authority (incl. a new delegate or added authority), or when the book is a
 *      delegate of a page of a required authority;
 *   3. upsert one action per (identity, transaction) with the live progress; a new one emits inbox.action_pending;
 *   4. open actions no longer listed are resolved from the transaction's final state (executed / rejected /
 *      expired), and the workflows following the transaction (an intent, a governance operation) are told to look
 *      at it; still pending or unknown ones stay.
 * A transient ledger error marks the scan `degraded`: nothing is resolved or deleted on its account.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import { openPendingActions, recordPendingScan, resolvePendingActions, upsertPendingAction } from '../db/governance.js';
import { listActiveOrgIdentities, orgsWithActiveIdentities, type IdentityRow } from '../db/identities.js';
import { actionOf, authoritiesOf, finalStatusOf, involves } from '../governance/inbox.js';
import { isNotFound, keyPageUrl, type LedgerClient, type TxStatus } from '../ledger/index.js';
import { notifyTransactionFollowers } from '../temporal/ledger-changed.js';
import { beat } from './heartbeat.js';

export { memoOf } from '../governance/inbox.js';

/** Identities whose accounts one scan reads at the same time. */
const SCAN_CONCURRENCY = 8;

export interface PendingScanResult {
  orgId: string;
  identities: number;
  found: number;
  created: number;
  resolved: number;
  degraded: boolean;
  error?: string;
}

/** The worker's Temporal client while running as an activity; none when called directly (a test's own scan). */
function activityClient(): Client | undefined {
  try {
    return Context.current().client;
  } catch {
    return undefined;
  }
}

export function createPendingActivities(deps: { db: Db; ledger: LedgerClient }) {
  const { db, ledger } = deps;

  async function accountsOf(i: IdentityRow): Promise<string[]> {
    const out = [i.adiUrl, i.bookUrl, i.keyPageUrl, i.dataAccountUrl];
    const book = await ledger.tryQueryAccount(i.bookUrl);
    const pages = Number(book?.raw.pageCount ?? 1);
    for (let n = 2; n <= pages; n++) out.push(keyPageUrl(i.bookUrl, n));
    return out;
  }

  return {
    /** Organizations with at least one active identity. */
    async organizationsToScan(): Promise<string[]> {
      return orgsWithActiveIdentities(db);
    },

    async scanOrgPending(orgId: string): Promise<PendingScanResult> {
      const ids = await listActiveOrgIdentities(db, orgId);
      const result: PendingScanResult = { orgId, identities: ids.length, found: 0, created: 0, resolved: 0, degraded: false };
      const degrade = (e: unknown) => {
        result.degraded = true;
        result.error ??= (e as Error).message;
      };

      // 1. pending transactions on every account of the organization's identities, SCAN_CONCURRENCY identities at
      // a time (one after another, an organization of 10,000 identities took 50,000 sequential ledger reads)
      const txs = new Map<string, TxStatus>();
      let next = 0;
      const reader = async () => {
        while (next < ids.length) {
          const i = ids[next++]!;
          beat();
          try {
            for (const account of await accountsOf(i)) {
              try {
                for (const t of await ledger.listPending(account)) if (t.pending) txs.set(t.txHash, t);
              } catch (e) {
                if (!isNotFound(e)) throw e;
              }
            }
          } catch (e) {
            degrade(e);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(SCAN_CONCURRENCY, ids.length) }, reader));
      result.found = txs.size;

      // 2–3. one action per involved identity, with the live progress from its own key page
      const seen = new Set<string>();
      for (const t of txs.values()) {
        try {
          // read once per transaction: checking each identity's book on its own took (1 + pages) reads per
          // required book, per identity, one after another
          const authorities = await authoritiesOf(ledger, t);
          for (const i of ids) {
            if (!involves(i, t, authorities)) continue;
            beat();
            const created = await upsertPendingAction(db, await actionOf(ledger, i, t));
            if (created) result.created++;
            seen.add(`${i.id}|${t.txHash}`);
          }
        } catch (e) {
          degrade(e);
        }
      }

      // 4. resolve what is no longer pending, only from a complete scan
      if (!result.degraded) {
        const done = new Set<string>();
        for (const a of await openPendingActions(db, orgId)) {
          if (seen.has(`${a.identityId}|${a.txHash}`) || done.has(a.txHash)) continue;
          beat();
          try {
            const st = await ledger.getTransaction(a.txId);
            if (st.pending) continue;
            const status = finalStatusOf(st);
            if (!status) continue;
            await resolvePendingActions(db, orgId, a.txHash, status);
            // co-signed outside the gateway: what waits on it looks now, not at its next look
            const client = activityClient();
            if (client) await notifyTransactionFollowers(db, client, orgId, a.txHash);
            done.add(a.txHash);
            result.resolved++;
          } catch (e) {
            if (isNotFound(e)) continue;
            degrade(e);
            break;
          }
        }
      }
      await recordPendingScan(db, orgId, result.degraded, result.error ?? null);
      return result;
    },
  };
}
export type PendingActivities = ReturnType<typeof createPendingActivities>;
