/**
 * Changes to intents, heard by the API so that a read can wait for the next one (a long poll) instead of the client
 * asking again and again. A change of an intent's status or stage (or its proof, error or signing data), a chain cycle
 * created and a chain cycle's stage moved send `pg_notify('intent_changed', <intent id>)` from triggers (migration
 * 0015), delivered at commit to every listening process (src/db/listen.ts; PGlite delivers its own notifications to
 * its one process).
 *
 * A waiter subscribes before it reads, so a change that commits between its read and its wait still wakes it. While
 * the listening connection is down, notifications are lost: a wait then ends within FALLBACK_POLL_MS and the waiter
 * reads again, as a client polling would.
 */
import { sql } from 'drizzle-orm';
import type { Database, Db } from './client.js';

export const INTENT_CHANNEL = 'intent_changed';
/**
 * Announce a change the triggers do not see to every process's waiters: a co-signature on the intent's ledger
 * transaction (its live co-signing progress moved while its row did not).
 */
export async function announceIntentChange(db: Db, intentId: string): Promise<void> {
  await db.execute(sql`select pg_notify(${INTENT_CHANNEL}, ${intentId})`);
}

/** how long a wait lasts at most while changes are not heard */
export const FALLBACK_POLL_MS = 1000;
/** waits a process holds at once; a read beyond that answers at once */
const MAX_WAITERS = 10_000;

export interface IntentChangeSubscription {
  /**
   * Resolves true when the intent changed since the subscription was made or since the last call (at once if it
   * did meanwhile), false after `ms` or when `signal` aborts.
   */
  next(ms: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
}

interface Waiter {
  changed: boolean;
  wake?: () => void;
}

export class IntentChanges {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private count = 0;
  private heard = false;

  /** whether changes are heard (else waits end within FALLBACK_POLL_MS) */
  get listening(): boolean {
    return this.heard;
  }

  /** An intent changed: wake its waiters. */
  changed(intentId: string): void {
    for (const w of this.waiters.get(intentId) ?? []) {
      w.changed = true;
      w.wake?.();
    }
  }

  /** Whether changes are heard; when they stop being heard every waiter reads again. */
  setListening(on: boolean): void {
    this.heard = on;
    if (!on) for (const id of this.waiters.keys()) this.changed(id);
  }

  /** A subscription to the intent's changes, or undefined when the process holds as many as it may. */
  subscribe(intentId: string): IntentChangeSubscription | undefined {
    if (this.count >= MAX_WAITERS) return undefined;
    const waiter: Waiter = { changed: false };
    let set = this.waiters.get(intentId);
    if (!set) this.waiters.set(intentId, (set = new Set()));
    set.add(waiter);
    this.count++;
    let closed = false;
    return {
      next: (ms, signal) =>
        new Promise<boolean>((resolve) => {
          if (waiter.changed || closed || signal?.aborted) {
            const changed = waiter.changed;
            waiter.changed = false;
            resolve(changed);
            return;
          }
          const done = (changed: boolean) => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', abort);
            waiter.wake = undefined;
            waiter.changed = false;
            resolve(changed);
          };
          const abort = () => done(false);
          // not heard: end the wait early and report a change, so that the caller reads again
          const timer = setTimeout(() => done(!this.heard), this.heard ? ms : Math.min(ms, FALLBACK_POLL_MS));
          signal?.addEventListener('abort', abort, { once: true });
          waiter.wake = () => done(true);
        }),
      close: () => {
        if (closed) return;
        closed = true;
        waiter.wake?.();
        set.delete(waiter);
        if (set.size === 0 && this.waiters.get(intentId) === set) this.waiters.delete(intentId);
        this.count--;
      },
    };
  }
}

const byDatabase = new WeakMap<Database, IntentChanges>();

/** The process's hub for `database`, made on first use; it listens for changes until the database closes. */
export function intentChangesFor(database: Database): IntentChanges {
  let hub = byDatabase.get(database);
  if (!hub) {
    const made = new IntentChanges();
    hub = made;
    byDatabase.set(database, made);
    database.listen(
      INTENT_CHANNEL,
      (id) => made.changed(id),
      (on) => made.setListening(on),
    );
  }
  return hub;
}
