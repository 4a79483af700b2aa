/**
 * Changes to API keys, announced so that caches of key rows (./api-key-cache.ts) drop them: to other processes by
 * `pg_notify` on API_KEY_CHANNEL (payload: the key's id), to this process's caches directly.
 */
import { sql } from 'drizzle-orm';
import type { Db } from './client.js';

export const API_KEY_CHANNEL = 'api_key_changed';

/** this process's subscribers by the drizzle database they read */
const subscribers = new WeakMap<Db, Set<(keyId: string) => void>>();

export function onApiKeyChangeHere(db: Db, fn: (keyId: string) => void): void {
  let set = subscribers.get(db);
  if (!set) subscribers.set(db, (set = new Set()));
  set.add(fn);
}

/**
 * Announce changed keys to every process. Run it inside the transaction that changes them: the notification goes out
 * at its commit and only then.
 */
export async function announceApiKeyChange(tx: Db, keyIds: string[]): Promise<void> {
  for (const id of keyIds) await tx.execute(sql`select pg_notify(${API_KEY_CHANNEL}, ${id})`);
}

/** Drop changed keys from this process's caches at once (after the change committed). */
export function applyApiKeyChangeHere(db: Db, keyIds: string[]): void {
  for (const fn of subscribers.get(db) ?? []) for (const id of keyIds) fn(id);
}
