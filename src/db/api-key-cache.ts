/**
 * A per-process cache of API keys by hash, so an authenticated request costs no database round trip for its key.
 *
 * Freshness. An entry lives at most API_KEY_CACHE_TTL_MS (10 s). A change the gateway makes to a key (revocation,
 * rotation) is announced in the same transaction with `pg_notify('api_key_changed', <key id>)`, delivered at commit
 * to every process listening (src/db/listen.ts), which drops the entry; the process that made the change drops it
 * synchronously. So a revoked key is refused by this process on its next request, and by every other process within
 * the notification's delivery (milliseconds), or within the TTL in the cases a notification cannot cover: a change
 * made outside the gateway (SQL by hand; `select pg_notify('api_key_changed', '<id>')` applies it at once).
 * While the listening connection is down nothing is cached (every lookup reads the row, as without a cache), and
 * when it listens again the cache starts empty: notifications sent meanwhile were lost.
 * A lookup that overlapped an invalidation is not stored (its row may predate the change).
 * PGlite serves one process, which hears its own notifications and invalidates its entries directly as well.
 */
import type { Database, Db } from './client.js';
import { API_KEY_CHANNEL, onApiKeyChangeHere } from './api-key-changes.js';
import { findApiKeyByRaw, hashKey, type ApiKeyRow } from './api-keys.js';

export const API_KEY_CACHE_TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

const byDatabase = new WeakMap<Database, ApiKeyCache>();

export class ApiKeyCache {
  private readonly entries = new Map<string, { row: ApiKeyRow; at: number }>();
  private readonly hashById = new Map<string, string>();
  /** bumped by every invalidation: a lookup that saw it change does not store its row */
  private epoch = 0;
  private isListening = false;

  constructor(
    private readonly db: Db,
    private readonly ttlMs = API_KEY_CACHE_TTL_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** The key row for a raw key (undefined: no such key); from the cache when fresh. */
  async find(raw: string): Promise<ApiKeyRow | undefined> {
    const hash = hashKey(raw);
    const hit = this.entries.get(hash);
    if (hit && this.clock() - hit.at < this.ttlMs) return hit.row;
    const epoch = this.epoch;
    const row = await findApiKeyByRaw(this.db, raw);
    if (row && this.isListening && epoch === this.epoch) {
      if (this.entries.size >= MAX_ENTRIES) this.clear();
      this.entries.delete(hash); // re-inserted last: the map's order is the entries' age
      this.entries.set(hash, { row, at: this.clock() });
      this.hashById.set(row.id, hash);
    }
    return row;
  }

  invalidate(keyId: string): void {
    this.epoch++;
    const hash = this.hashById.get(keyId);
    if (hash === undefined) return;
    this.hashById.delete(keyId);
    this.entries.delete(hash);
  }

  /** whether changes are heard, so rows are cached */
  get listening(): boolean {
    return this.isListening;
  }

  /** whether changes are heard (false: nothing is cached, and what was is dropped) */
  setListening(listening: boolean): void {
    this.isListening = listening;
    this.clear();
  }

  private clear(): void {
    this.epoch++;
    this.entries.clear();
    this.hashById.clear();
  }
}

/** The process's cache for `database`, made on first use; it listens for changes until the database closes. */
export function apiKeyCacheFor(database: Database): ApiKeyCache {
  let cache = byDatabase.get(database);
  if (!cache) {
    const made = new ApiKeyCache(database.db);
    cache = made;
    byDatabase.set(database, made);
    onApiKeyChangeHere(database.db, (id) => made.invalidate(id));
    database.listen(
      API_KEY_CHANNEL,
      (id) => made.invalidate(id),
      (on) => made.setListening(on),
    );
  }
  return cache;
}
