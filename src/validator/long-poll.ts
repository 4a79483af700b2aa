/**
 * The validator's bounded long-polls: a request's work runs at most once at a time per identical request, and the
 * HTTP request waits for it at most `waitMs`. When the work is not done by then the caller is told to ask again
 * (the work goes on); the next identical request waits on the same work, and once it is done the answer goes to the
 * first request that asks, kept for `keepMs` at most. At most `capacity` works are tracked at once.
 */
export type PollAnswer = { state: 'done'; value: unknown } | { state: 'failed'; error: unknown } | { state: 'pending' } | { state: 'busy' };

interface Work {
  settled: Promise<void>;
  done: boolean;
  value?: unknown;
  error?: unknown;
  failed?: boolean;
  /** a caller was told to ask again: the answer is kept for it */
  awaited: boolean;
  /** when the kept answer is dropped (set once done and awaited) */
  expiresAt?: number;
}

export class LongPolls {
  private readonly works = new Map<string, Work>();

  constructor(
    private readonly waitMs: number,
    private readonly capacity: number,
    private readonly keepMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.works.size;
  }

  /** Waits (at most waitMs) for the work of `key`, starting it with `start` when none is tracked. */
  async answer(key: string, start: () => Promise<unknown>): Promise<PollAnswer> {
    let w = this.works.get(key);
    if (w?.done && w.expiresAt !== undefined && w.expiresAt < this.now()) {
      this.works.delete(key);
      w = undefined;
    }
    if (!w) {
      if (this.works.size >= this.capacity) this.sweep();
      if (this.works.size >= this.capacity) return { state: 'busy' };
      w = this.begin(key, start);
    }
    if (!w.done) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((r) => {
        timer = setTimeout(r, this.waitMs);
      });
      await Promise.race([w.settled, timeout]);
      clearTimeout(timer);
    }
    if (!w.done) {
      w.awaited = true;
      return { state: 'pending' };
    }
    // delivered once: a later identical request does the work again (a retried round sees the present state)
    if (this.works.get(key) === w) this.works.delete(key);
    return w.failed ? { state: 'failed', error: w.error } : { state: 'done', value: w.value };
  }

  private begin(key: string, start: () => Promise<unknown>): Work {
    const w: Work = { done: false, awaited: false, settled: Promise.resolve() };
    w.settled = Promise.resolve()
      .then(start)
      .then(
        (v) => {
          w.value = v;
        },
        (e: unknown) => {
          w.failed = true;
          w.error = e;
        },
      )
      .finally(() => {
        w.done = true;
        // nobody was told to come back: nothing to keep
        if (!w.awaited) {
          if (this.works.get(key) === w) this.works.delete(key);
        } else w.expiresAt = this.now() + this.keepMs;
      });
    this.works.set(key, w);
    return w;
  }

  private sweep() {
    const t = this.now();
    for (const [k, w] of this.works) if (w.done && (w.expiresAt ?? 0) < t) this.works.delete(k);
  }
}
