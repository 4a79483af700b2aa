/** `p`, or a rejection naming `what` once `ms` milliseconds pass without an answer (the timer does not keep the process alive). */
export const withTimeout = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([p, new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`${what} did not answer within ${ms} ms`)), ms).unref())]);
