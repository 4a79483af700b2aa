/**
 * A bounded memo for pure functions of a string: at most `max` entries, the oldest inserted dropped first.
 * `keyOf` normalises the key (e.g. lower-cased hex); by default the string is the key.
 */
export function memo<V>(max: number, make: (k: string) => V, keyOf: (k: string) => string = (k) => k): (k: string) => V {
  const m = new Map<string, V>();
  return (k) => {
    const key = keyOf(k);
    let v = m.get(key);
    if (v === undefined) {
      v = make(k);
      if (m.size >= max) m.delete(m.keys().next().value as string);
      m.set(key, v);
    }
    return v;
  };
}
