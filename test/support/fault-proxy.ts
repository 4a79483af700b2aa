/**
 * An HTTP proxy in front of one upstream (a ledger, a chain RPC, a validator) that injects faults on demand:
 *   failRate     answer that share of requests with 503 before forwarding (the upstream never sees them)
 *   dropRate     destroy the connection before forwarding (the client sees a reset)
 *   dropAfterRate  forward, then destroy the connection instead of answering (the upstream acted; the answer is lost)
 *   rewrite      change a JSON answer before it is returned (e.g. a validator signing garbage)
 * Counts what it did, so a test can say how many faults it survived.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FaultSettings {
  failRate?: number;
  dropRate?: number;
  dropAfterRate?: number;
  rewrite?: (path: string, body: any) => any;
}

export interface FaultProxy {
  url: string;
  settings: FaultSettings;
  stats: { requests: number; failed: number; dropped: number; droppedAfter: number; rewritten: number };
  close(): Promise<void>;
}

export async function startFaultProxy(upstream: string, settings: FaultSettings = {}, random: () => number = Math.random): Promise<FaultProxy> {
  const target = new URL(upstream);
  const stats = { requests: 0, failed: 0, dropped: 0, droppedAfter: 0, rewritten: 0 };
  const proxy: FaultProxy = { url: '', settings, stats, close: async () => undefined };
  const server: Server = createServer(async (req, res) => {
    stats.requests++;
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
    let r: Response;
    try {
      r = await fetch(`${target.origin}${req.url ?? '/'}`, {
        method: req.method,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
      });
    } catch {
      return void req.socket.destroy(); // upstream down: the client sees what it would see without the proxy
    }
    let text = await r.text();
    if (s.dropAfterRate && random() < s.dropAfterRate) {
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
