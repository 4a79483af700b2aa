/**
 * Runs the calls made under one key one after another, in the order they were made (calls under different keys run
 * side by side): each starts when the previous one under its key has settled, whether it succeeded or failed.
 */
export function keyedSerial<K>(): <T>(key: K, call: () => Promise<T>) => Promise<T> {
  const tails = new Map<K, Promise<unknown>>();
  return (key, call) => {
    const run = (tails.get(key) ?? Promise.resolve()).then(call);
    const tail = run.catch(() => {});
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}
