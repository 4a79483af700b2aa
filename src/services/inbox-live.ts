/**
 * The pending inbox behind GET /v1/pending, read live: the open actions of the page are looked up on the ledger at
 * the request, so `is_ready`, `collected_signatures`, `user_has_signed` and `awaiting_authorities` are the ledger's
 * at that moment, and an action whose transaction executed, was rejected or expired is closed and leaves the list.
 *
 *   - one read per distinct transaction of the page and per account or key page its progress needs, in parallel
 *     (READ_CONCURRENCY transactions at a time), the whole read bounded by LIVE_READ_MS: an action not read by then
 *     (a slow or unreachable ledger) shows its stored state and the answer says the read was incomplete;
 *   - ledger reads are shared between requests for CACHE_MS (clients poll the inbox) and dropped at once when this
 *     API submits a signature (`invalidateInbox`); another API process sees a submission it did not make within
 *     CACHE_MS, and every process sees the inbox rows the submitting one wrote (src/governance/inbox.ts);
 *   - a state that differs from the stored one is stored, and the page and its stats are listed again, so the
 *     stats and the status filter agree with what the page shows.
 */
import type { Db } from '../db/client.js';
import { getPendingScan, type PendingActionRow } from '../db/governance.js';
import type { RowPage } from '../db/pagination.js';
import { closePendingTx, storePendingActionState, type PendingActionState } from '../db/pending-inbox.js';
import { listPendingActionPage } from '../db/pending-list.js';
import { actionOf, finalStatusOf, type InboxIdentity } from '../governance/inbox.js';
import { isNotFound, type LedgerClient, type TxStatus } from '../ledger/index.js';
import { redactUrls } from '../net/redact.js';
import { withTimeout } from '../net/timeout.js';
import type { Caller, ServiceDeps } from './deps.js';
import { findOrgIdentity } from './identity-access.js';

/** How long one ledger read serves later requests. */
export const CACHE_MS = 500;
/** The page's live read answers within this; what is not read by then shows its stored state. */
export const LIVE_READ_MS = 2500;
/** Transactions of a page read at the same time. */
const READ_CONCURRENCY = 8;
/** Cached reads kept at most (the oldest go first). */
const CACHE_ENTRIES = 5000;
/** Rounds of list → read → store: a second listing shows what the first read stored; more only if the ledger moved. */
const ROUNDS = 3;

interface Entry {
  at: number;
  value: Promise<unknown>;
}

/** A read-through view of the ledger whose reads are shared for CACHE_MS; `clear` drops every read. */
function cachedLedger(ledger: LedgerClient, ttlMs: number) {
  const entries = new Map<string, Entry>();
  function read<T>(key: string, load: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const e = entries.get(key);
    if (e && now - e.at < ttlMs) return e.value as Promise<T>;
    const value = load();
    entries.delete(key);
    entries.set(key, { at: now, value });
    // a failed read is not shared
    value.catch(() => {
      if (entries.get(key)?.value === value) entries.delete(key);
    });
    while (entries.size > CACHE_ENTRIES) entries.delete(entries.keys().next().value as string);
    return value;
  }
  const view: LedgerClient = {
    ...ledger,
    getTransaction: (id, principal) => read(`tx|${id}|${principal ?? ''}`, () => ledger.getTransaction(id, principal)),
    queryAccount: (url) => read(`account|${url}`, () => ledger.queryAccount(url)),
    tryQueryAccount: (url) => read(`try|${url}`, () => ledger.tryQueryAccount(url)),
    queryKeyPage: (url) => read(`page|${url}`, () => ledger.queryKeyPage(url)),
  };
  return { view, clear: () => entries.clear() };
}

const views = new WeakMap<LedgerClient, ReturnType<typeof cachedLedger>>();

function liveView(ledger: LedgerClient) {
  let v = views.get(ledger);
  if (!v) {
    v = cachedLedger(ledger, CACHE_MS);
    views.set(ledger, v);
  }
  return v;
}

/** Drop the shared ledger reads: this API has just submitted a signature through `ledger`. */
export function invalidateInbox(ledger: LedgerClient): void {
  views.get(ledger)?.clear();
}

export interface PendingRow {
  action: PendingActionRow;
  identityUrl: string;
  identity: InboxIdentity;
}

/** What a live read found: each action's state, the transactions found final, and whether every action was read. */
interface LiveRead {
  states: Map<string, PendingActionState>;
  closed: number;
  changed: number;
  complete: boolean;
}

const STATE_KEYS = ['status', 'collectedSignatures', 'threshold', 'userHasSigned', 'awaitingAuthorities', 'isReady'] as const;

function sameState(a: PendingActionRow, s: PendingActionState): boolean {
  return STATE_KEYS.every((k) => JSON.stringify(a[k]) === JSON.stringify(s[k]));
}

/** Read the page's transactions on the ledger; close what is final, store states that changed. */
async function readLive(db: Db, ledger: LedgerClient, rows: PendingRow[], log: Caller['log'], redact: string[]): Promise<LiveRead> {
  const out: LiveRead = { states: new Map(), closed: 0, changed: 0, complete: true };
  const byTx = new Map<string, PendingRow[]>();
  for (const r of rows) byTx.set(r.action.txId, [...(byTx.get(r.action.txId) ?? []), r]);
  const txIds = [...byTx.keys()];
  const readOne = async (txId: string) => {
    let st: TxStatus;
    try {
      st = await ledger.getTransaction(txId);
    } catch (e) {
      if (isNotFound(e)) return; // not in a block yet, or pruned: the stored state stands
      throw e;
    }
    const final = finalStatusOf(st);
    if (final) {
      out.closed += await closePendingTx(db, st.txHash, final);
      return;
    }
    if (!st.pending) return;
    for (const r of byTx.get(txId)!) {
      const a = await actionOf(ledger, r.identity, st);
      const state: PendingActionState = {
        status: a.status,
        collectedSignatures: a.collectedSignatures,
        threshold: a.threshold,
        userHasSigned: a.userHasSigned,
        awaitingAuthorities: a.awaitingAuthorities,
        isReady: a.isReady,
      };
      out.states.set(r.action.id, state);
      if (!sameState(r.action, state) && (await storePendingActionState(db, r.action.id, state))) out.changed++;
    }
  };
  let next = 0;
  const worker = async () => {
    while (next < txIds.length) {
      const txId = txIds[next++]!;
      try {
        await readOne(txId);
      } catch (e) {
        out.complete = false;
        log.warn('pending action unreadable on the ledger', { tx_id: txId, err: redactUrls((e as Error).message, redact) });
      }
    }
  };
  try {
    await withTimeout(Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, txIds.length) }, worker)), LIVE_READ_MS, 'ledger');
  } catch {
    out.complete = false;
    next = txIds.length; // the workers stop after the read in hand
  }
  return out;
}

export interface PendingListQuery {
  /** ADI URL or id of one identity of the organization (404 otherwise) */
  identity?: string;
  category?: string;
  status?: string;
}

/**
 * A page of the organization's open pending actions (oldest discovered first; `page.limit` rows from `page.offset` or
 * after `page.after`), each in its live state, the stats over every open action the filters match, the last
 * pending-discovery scan, and when the ledger was read (`live.complete` false: some actions show their stored state).
 */
export async function listPending(deps: ServiceDeps, caller: Caller, q: PendingListQuery, page: RowPage) {
  const db = deps.database.db;
  const now = new Date(deps.now?.() ?? Date.now());
  const identityIds = q.identity ? [(await findOrgIdentity(db, caller.orgId, q.identity, { field: 'identity', adiUrl: true })).id] : undefined;
  const { view } = liveView(deps.ledger);
  const filter = { identityIds, category: q.category, status: q.status, now };
  let list = await listPendingActionPage(db, caller.orgId, filter, page);
  let live: LiveRead = { states: new Map(), closed: 0, changed: 0, complete: true };
  const readAt = new Date();
  for (let round = 0; round < ROUNDS; round++) {
    live = await readLive(db, view, list.rows, caller.log, [deps.config.ledgerUrl]);
    if (!live.closed && !live.changed) break;
    list = await listPendingActionPage(db, caller.orgId, filter, page);
  }
  const rows = list.rows.map((r) => {
    const state = live.states.get(r.action.id);
    return state ? { ...r, action: { ...r.action, ...state } } : r;
  });
  const scan = await getPendingScan(db, caller.orgId);
  return {
    ...list,
    rows,
    live: { readAt, complete: live.complete },
    scan: { lastScanAt: scan?.lastScanAt ?? null, degraded: scan?.degraded ?? false },
  };
}
