/**
 * Pending discovery: find the ledger transactions waiting for signatures that involve an organization's active
 * identities, and keep the pending_actions inbox in step with the ledger.
 *
 *   1. read the pending list of every account of every active identity (ADI, book, its pages, data account):
 *      the ledger lists a pending transaction on its principal;
 *   2. a transaction involves an identity when its principal is one of the identity's accounts, when the
 *      identity's book is a required authority (incl. a new delegate or added authority), or when the book is a
 *      delegate of a page of a required authority;
 *   3. upsert one action per (identity, transaction) with the live progress; a new one emits inbox.action_pending;
 *   4. open actions no longer listed are resolved from the transaction's final state (executed / rejected /
 *      expired); still pending or unknown ones stay.
 * A transient ledger error marks the scan `degraded`: nothing is resolved or deleted on its account.
 */
import type { Db } from '../db/client.js';
import { openPendingActions, recordPendingScan, resolvePendingActions, upsertPendingAction } from '../db/governance.js';
import { listActiveOrgIdentities, orgsWithActiveIdentities, type IdentityRow } from '../db/identities.js';
import { delegateBooks, isNotFound, keyPageUrl, normUrl, requiredAuthorities, signingProgress, type LedgerClient, type TxStatus } from '../ledger/index.js';
import { beat } from './heartbeat.js';

/** Identities whose accounts one scan reads at the same time. */
const SCAN_CONCURRENCY = 8;

/** Ledger transaction types shown in the governance category; everything else is `transactions`. */
export const GOVERNANCE_TX_TYPES = new Set([
  'createIdentity',
  'createKeyPage',
  'createKeyBook',
  'updateKeyPage',
  'updateAccountAuth',
  'updateKey',
  'lockAccount',
]);

export interface PendingScanResult {
  orgId: string;
  identities: number;
  found: number;
  created: number;
  resolved: number;
  degraded: boolean;
  error?: string;
}

/** The memo of a ledger transaction's header, when it has a non-empty one. */
export function memoOf(t: Pick<TxStatus, 'transaction'>): string | null {
  const memo: unknown = t.transaction?.header?.memo;
  return typeof memo === 'string' && memo !== '' ? memo : null;
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

  /** The identity's accounts hold `tx`, or its book is a required authority or a delegate of one. */
  function involves(i: IdentityRow, tx: TxStatus, required: string[], delegates: Map<string, string>): boolean {
    const adi = normUrl(i.adiUrl);
    const principal = normUrl(tx.principal);
    if (principal === adi || principal.startsWith(`${adi}/`)) return true;
    const book = normUrl(i.bookUrl);
    return required.includes(book) || delegates.has(book);
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
          const required = await requiredAuthorities(ledger, t);
          const delegates = await delegateBooks(ledger, required);
          for (const i of ids) {
            if (!involves(i, t, required, delegates)) continue;
            beat();
            const progress = await signingProgress(ledger, t, i.keyPageUrl);
            const userHasSigned =
              (i.publicKey !== null && progress.signers.some((s) => s.publicKey === i.publicKey!.toLowerCase())) ||
              progress.authorityVotes.some((v) => v.authority === normUrl(i.bookUrl));
            const expire = t.transaction?.header?.expire?.atTime;
            const created = await upsertPendingAction(db, {
              orgId,
              identityId: i.id,
              txHash: t.txHash,
              txId: t.txId,
              principal: normUrl(t.principal),
              category: GOVERNANCE_TX_TYPES.has(t.type) ? 'governance' : 'transactions',
              type: t.type,
              memo: memoOf(t),
              status: userHasSigned ? 'awaiting_others' : 'eligible',
              collectedSignatures: progress.collected,
              threshold: progress.threshold,
              userHasSigned,
              awaitingAuthorities: progress.awaitingAuthorities,
              isReady: progress.isReady,
              expiresAt: expire ? new Date(expire) : null,
            });
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
            const status = st.delivered ? 'executed' : st.status === 'expired' ? 'expired' : st.failed ? 'rejected' : undefined;
            if (!status) continue;
            await resolvePendingActions(db, orgId, a.txHash, status);
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
