/**
 * Queries on the request hot path (every authenticated call, every poll of an intent), built once per database
 * as prepared statements with placeholders: building a query with drizzle costs more CPU than its round trip.
 */
import type { Db } from './client.js';

export function preparedPerDb<Q>(build: (db: Db) => Q): (db: Db) => Q {
  const built = new WeakMap<Db, Q>();
  return (db) => {
    let q = built.get(db);
    if (!q) {
      q = build(db);
      built.set(db, q);
    }
    return q;
  };
}
