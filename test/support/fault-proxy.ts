/**
 * An HTTP proxy in front of one upstream (a ledger, a chain RPC, a validator) that injects faults on demand:
 *   failRate     answer that share of requests with 503 before forwarding (the upstream never sees them)
 *   dropRate     destroy the connection before forwarding (the client sees a reset)
 *   dropAfterRate  forward, then destroy the connection instead of answering (the upstream acted; the answer is lost)
 *   dropAfter    the same for the requests it picks (e.g. the next JSON-RPC submit): return true to lose the answer
 *   rewrite      change a JSON answer before it is returned (e.g. a validator signing garbage)
 *   answer       answer a JSON request itself, the upstream never sees it (e.g. an RPC provider's limit:
 *                rpcLogRangeLimit)
 * Counts what it did, so a test can say how many faults it survived.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FaultSettings {
  failRate?: number;
  dropRate?: number;
  dropAfterRate?: number;
  dropAfter?: (path: string, body: any) => boolean;
  rewrite?: (path: string, body: any) => any;
  answer?: (path: string, body: any) => any;
}

/**
 * `answer` of a public RPC provider that serves eth_getLogs only for explicit block numbers spanning at most `limit`
 * blocks, like most do (a tag such as "latest" or "earliest", or a wider span, gets a JSON-RPC error); `seen`
 * collects the spans it served.
 */
export function rpcLogRangeLimit(limit: number, seen: { from: bigint; to: bigint }[] = []) {
  return (_path: string, body: any) => {
    if (body?.method !== 'eth_getLogs') return undefined;
    const { fromBlock, toBlock } = body.params?.[0] ?? {};
    const hex = (x: unknown) => typeof x === 'string' && /^0x[0-9a-f]+$/i.test(x);
    if (hex(fromBlock) && hex(toBlock) && BigInt(toBlock) - BigInt(fromBlock) < BigInt(limit)) {
      seen.push({ from: BigInt(fromBlock), to: BigInt(toBlock) });
      return undefined;
    }
    return {
      jsonrpc: '2.0',
      id: body.id,
      error: { code: -32005, message: `eth_getLogs is limited to ${limit} blocks given by number (got ${fromBlock}..${toBlock})` },
    };
  };
}

export interface FaultProxy {
  url: string;
  settings: FaultSettings;
  /** inFlight: requests being handled now; maxInFlight: the most at one time */
  stats: {
    requests: number;
    failed: number;
    dropped: number;
    droppedAfter: number;
    rewritten: number;
    answered: number;
    inFlight: number;
    maxInFlight: number;
  };
  close(): Promise<void>;
}

export async function startFaultProxy(upstream: string, settings: FaultSettings = {}, random: () => number = Math.random): Promise<FaultProxy> {
  const target = new URL(upstream);
  const stats = { requests: 0, failed: 0, dropped: 0, droppedAfter: 0, rewritten: 0, answered: 0, inFlight: 0, maxInFlight: 0 };
  const proxy: FaultProxy = { url: '', settings, stats, close: async () => undefined };
  const server: Server = createServer(async (req, res) => {
    stats.requests++;
    stats.maxInFlight = Math.max(stats.maxInFlight, ++stats.inFlight);
    res.on('close', () => stats.inFlight--);
    let body = '';
    for await (const c of req) body += c;
    const s = proxy.settings;
    if (s.dropRate && random() < s.dropRate) {
      stats.dropped++;
      return void req.socket.destroy();
    }
    if (s.failRate && random() < s.failRate) {
      stats.failed++;
      return void res.writeHead(503, { 'content-type': 'text/plain' }).end('injected fault');
    }
    if (s.answer) {
      // per request; in a JSON-RPC batch the requests it does not answer go upstream as a smaller batch
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        /* not JSON: forward */
      }
      const items: any[] = parsed === undefined ? [] : Array.isArray(parsed) ? parsed : [parsed];
      const own = items.map((x) => s.answer!(req.url ?? '/', x));
      if (own.some((x) => x !== undefined)) {
        stats.answered += own.filter((x) => x !== undefined).length;
        const rest = items.filter((_, i) => own[i] === undefined);
        let upstream: any[] = [];
        if (rest.length) {
          try {
            const r = await fetch(`${target.origin}${req.url ?? '/'}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(Array.isArray(parsed) ? rest : rest[0]),
            });
            const j = await r.json();
            upstream = Array.isArray(j) ? j : [j];
          } catch {
            return void req.socket.destroy();
          }
        }
        const byId = new Map(upstream.map((x) => [x?.id, x]));
        const out = items.map((x, i) => own[i] ?? byId.get(x?.id));
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(parsed) ? out : out[0]));
      }
    }
    let r: Response;
    try {
      r = await fetch(`${target.origin}${req.url ?? '/'}`, {
        method: req.method,
        // a validator's gateway signature headers (x-pgw-*) go along, as through any proxy
        headers: {
          ...(Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-pgw-'))) as Record<string, string>),
          'content-type': req.headers['content-type'] ?? 'application/json',
        },
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
      });
    } catch {
      return void req.socket.destroy(); // upstream down: the client sees what it would see without the proxy
    }
    let text = await r.text();
    let picked = false;
    if (s.dropAfter) {
      try {
        picked = s.dropAfter(req.url ?? '/', JSON.parse(body));
      } catch {
        /* not JSON: not picked */
      }
    }
    if (picked || (s.dropAfterRate && random() < s.dropAfterRate)) {
      stats.droppedAfter++;
      return void req.socket.destroy();
    }
    if (s.rewrite && r.ok) {
      try {
        const changed = s.rewrite(req.url ?? '/', JSON.parse(text));
        if (changed !== undefined) {
          text = JSON.stringify(changed);
          stats.rewritten++;
        }
      } catch {
        /* not JSON: pass through */
      }
    }
    res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' }).end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${target.pathname === '/' ? '' : target.pathname}`;
  proxy.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return proxy;
}
