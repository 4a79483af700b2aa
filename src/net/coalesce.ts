/**
 * A bounded cache of async results that shares the calls under way: concurrent asks for one key make one call (the
 * members of a batch all asking for the batch's plan at once make one plan, not one each), and its result is kept,
 * oldest evicted first beyond `max`, once it succeeds; a failure is not kept, so the next ask calls again.
 */
export function coalescingCache<K, V>(max: number): (key: K, load: () => Promise<V>) => Promise<V> {
  const entries = new Map<K, Promise<V>>();
  return (key, load) => {
    const hit = entries.get(key);
    if (hit) return hit;
    const p = (async () => load())();
    if (entries.size >= max) entries.delete(entries.keys().next().value as K);
    entries.set(key, p);
    p.catch(() => {
      if (entries.get(key) === p) entries.delete(key);
    });
    return p;
  };
}
