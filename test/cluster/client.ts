/**
 * A well-behaved client of a gateway with several API processes: requests rotate over them; a connection error or a
 * 503 (and the 502 that POST /v1/transaction/{id}/signature documents as "send the same signature again") is
 * retried against the next process with the same Idempotency-Key. Every 5xx is counted by status; `unretryable`
 * counts the 5xx answers the client had no documented way to retry, which the cluster test requires to be none.
 */
export type Json = any;

export interface ClientStats {
  requests: number;
  connectionErrors: number;
  /** 5xx answers by status */
  serverErrors: Record<number, number>;
  /** 5xx answers that are not retryable by the API's contract */
  unretryable: { status: number; method: string; path: string; body: string }[];
  /** 409 IDEMPOTENCY_KEY_IN_FLIGHT answers (a claim held by a request still running, or by a killed process) */
  keyInFlight: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ClusterClient {
  readonly stats: ClientStats = { requests: 0, connectionErrors: 0, serverErrors: {}, unretryable: [], keyInFlight: 0 };
  private next = 0;

  constructor(
    private readonly apiUrls: string[],
    private readonly apiKey: string,
  ) {}

  private retryable(status: number, method: string, path: string): boolean {
    if (status === 503) return true;
    return status === 502 && method === 'POST' && /^\/v1\/transaction\/[^/]+\/signature$/.test(path);
  }

  /**
   * One logical request. Retries connection errors and retryable 5xx (up to `deadlineMs`); 409 IDEMPOTENCY_KEY_IN_FLIGHT
   * is retried after its Retry-After until `inFlightGiveUpMs`, then answered to the caller.
   */
  async call(
    method: string,
    path: string,
    body?: unknown,
    opts: { headers?: Record<string, string>; deadlineMs?: number; inFlightGiveUpMs?: number } = {},
  ): Promise<{ status: number; body: Json }> {
    const deadline = Date.now() + (opts.deadlineMs ?? 120_000);
    const inFlightUntil = Date.now() + (opts.inFlightGiveUpMs ?? 20_000);
    for (;;) {
      const url = this.apiUrls[this.next++ % this.apiUrls.length]!;
      this.stats.requests++;
      let res: Response;
      try {
        res = await fetch(`${url}${path}`, {
          method,
          headers: { 'X-API-Key': this.apiKey, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...opts.headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(60_000),
        });
      } catch (err) {
        this.stats.connectionErrors++;
        if (Date.now() > deadline) throw new Error(`${method} ${path}: no API process answered: ${(err as Error).message}`);
        await sleep(200);
        continue;
      }
      const text = await res.text();
      let json: Json;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      if (res.status >= 500) {
        this.stats.serverErrors[res.status] = (this.stats.serverErrors[res.status] ?? 0) + 1;
        if (!this.retryable(res.status, method, path)) {
          this.stats.unretryable.push({ status: res.status, method, path, body: text.slice(0, 500) });
          return { status: res.status, body: json };
        }
        if (Date.now() > deadline) return { status: res.status, body: json };
        await sleep(retryAfterMs(res, 250));
        continue;
      }
      if (res.status === 409 && json?.code === 'IDEMPOTENCY_KEY_IN_FLIGHT') {
        this.stats.keyInFlight++;
        if (Date.now() < inFlightUntil) {
          await sleep(Math.min(retryAfterMs(res, 500), 2000));
          continue;
        }
      }
      return { status: res.status, body: json };
    }
  }
}

function retryAfterMs(res: Response, fallback: number): number {
  const s = Number(res.headers.get('retry-after'));
  return Number.isFinite(s) && s > 0 ? Math.min(s * 1000, 5000) : fallback;
}
