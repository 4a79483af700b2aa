/** A real HTTP webhook receiver on loopback: records every request (raw body + headers) and answers per path. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** Answers the i-th request (0-based) to a path; default 200. `until`: hold the request open until it settles (then `delayMs`). */
export type Behaviour = (i: number) => { status: number; headers?: Record<string, string>; delayMs?: number; until?: Promise<unknown> };

export async function startReceiver() {
  const received: Received[] = [];
  const behaviours = new Map<string, Behaviour>();
  const counts = new Map<string, number>();
  let inFlight = 0;
  let peakInFlight = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const i = counts.get(path) ?? 0;
      counts.set(path, i + 1);
      const answer = (behaviours.get(path) ?? ((): ReturnType<Behaviour> => ({ status: 200 })))(i);
      peakInFlight = Math.max(peakInFlight, ++inFlight);
      const reply = () =>
        setTimeout(() => {
          inFlight--;
          res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
          res.end(answer.status < 300 ? 'ok' : 'nope');
        }, answer.delayMs ?? 0);
      if (answer.until) void answer.until.then(reply, reply);
      else reply();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    url: (path: string) => base + path,
    on(path: string, b: Behaviour) {
      behaviours.set(path, b);
    },
    /** the most requests (all paths) received and not yet answered at any one time */
    peakInFlight: () => peakInFlight,
    /** requests to `path` that are not verification pings */
    deliveries(path: string) {
      return received.filter((r) => r.path === path && !String(r.headers['webhook-id']).startsWith('ping_'));
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Poll until `fn` returns a truthy value (or throw after `timeoutMs`). */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 20_000, stepMs = 100): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as Exclude<T, false | null | undefined | 0 | ''>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
