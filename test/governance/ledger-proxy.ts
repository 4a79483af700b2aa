/**
 * A loopback HTTP proxy in front of the ledger node that can be switched to failing (503, no JSON-RPC answer):
 * a real transient ledger outage for the gateway, without stopping the simulator and losing its state.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startLedgerProxy(target: string) {
  const base = target.replace(/\/+$/, '');
  const state = { failing: false, requests: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      state.requests++;
      if (state.failing) {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('ledger unavailable');
        return;
      }
      try {
        const r = await fetch(`${base}${req.url ?? '/'}`, { method: req.method, headers: { 'content-type': 'application/json' }, body: chunks.length ? Buffer.concat(chunks) : undefined });
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await r.arrayBuffer()));
      } catch (e) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(e));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    state,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
