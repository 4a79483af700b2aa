/**
 * CPU per JSON-RPC request of the gateway's HTTP client (src/net/fetch.ts `httpFetch`) against Node's fetch, as a
 * caller sees it: POST a small JSON body, read a 600-byte JSON answer, 8 requests in flight. The server is its
 * own process, so the figures are the client's alone.
 *
 *   npx tsx bench/http-client.ts [requests]      # table + JSON on stdout (default 3000 requests per client)
 */
import { spawn } from 'node:child_process';
import { httpFetch } from '../src/net/fetch.js';
import { benchArgs } from './lib/args.js';

const N = benchArgs('npx tsx bench/http-client.ts [requests=3000]', { positional: [{ name: 'requests', default: 3000, min: 1 }] }).values.requests!;
const SERVER = `
const http = require('node:http');
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x' + 'ab'.repeat(290) });
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); }); });
s.listen(0, '127.0.0.1', () => process.send(s.address().port));
`;

const server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const port = await new Promise<number>((r) => server.once('message', (m) => r(Number(m))));
const url = `http://127.0.0.1:${port}/`;
const payload = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
const init = () => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: payload, signal: AbortSignal.timeout(10_000) });
const clients: Record<string, () => Promise<unknown>> = {
  'node fetch': async () => (await fetch(url, init())).json(),
  httpFetch: async () => (await httpFetch(url, init())).json(),
};

async function measure(call: () => Promise<unknown>): Promise<{ cpu_us: number; wall_us: number }> {
  let next = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next++ < N) await call();
    }),
  );
  const c = process.cpuUsage(c0);
  return { cpu_us: Math.round((c.user + c.system) / N), wall_us: Math.round(((performance.now() - t0) * 1000) / N) };
}

try {
  for (const call of Object.values(clients)) await measure(call); // warm up both
  const rows = [];
  for (const [client, call] of Object.entries(clients)) rows.push({ client, ...(await measure(call)) });
  console.table(rows.map((r) => ({ client: r.client, 'CPU µs per request': r.cpu_us, 'wall µs per request': r.wall_us })));
  const ratio = rows[0]!.cpu_us / rows[1]!.cpu_us;
  console.log(`httpFetch uses ${ratio.toFixed(1)} × less CPU per request than Node's fetch`);
  console.log(JSON.stringify({ bench: 'http-client', requests: N, in_flight: 8, results: rows, fetch_over_httpFetch_cpu: Number(ratio.toFixed(2)) }));
} finally {
  server.kill();
}
