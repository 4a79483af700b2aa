/**
 * The API's shutdown drains: a request in flight when close() starts still gets its answer, new connections are
 * refused at once, idle keep-alive connections do not hold it up, and a request that never answers is cut when the
 * grace period ends. (close() used to call closeAllConnections() first, so a SIGTERM cut every request in flight.)
 */
import { request, Agent } from 'node:http';
import { connect } from 'node:net';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/net/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close({ graceMs: 0 });
  server = undefined;
});

function slowApp() {
  const app = new Hono();
  app.post('/slow', async (c) => {
    await sleep(600);
    return c.json({ ok: true });
  });
  app.get('/fast', (c) => c.json({ fast: true }));
  app.get('/hang', () => new Promise<Response>(() => {}));
  return app;
}

/** One HTTP/1.1 request; resolves with the status and body, or with the socket error's code. */
function call(url: string, method: string, agent?: Agent): Promise<{ status?: number; body?: string; error?: string; connection?: string }> {
  return new Promise((resolve) => {
    const req = request(url, { method, agent }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, body, connection: res.headers.connection }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end();
  });
}

function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

describe('API server shutdown', () => {
  it('lets a request in flight answer, refuses new connections meanwhile, and does not wait for idle keep-alive clients', async () => {
    server = await listen(slowApp(), '127.0.0.1', 0);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    try {
      // an idle kept-alive connection (the request is done, the socket stays open in the agent)
      expect((await call(`${server.url}/fast`, 'GET', agent)).status).toBe(200);
      const inFlight = call(`${server.url}/slow`, 'POST', agent);
      await sleep(150);
      const t0 = Date.now();
      const closed = server.close({ graceMs: 5_000 }).then(() => Date.now() - t0);
      await sleep(20);
      expect(await tryConnect(server.port)).toBe('ECONNREFUSED');
      const answer = await inFlight;
      expect(answer).toMatchObject({ status: 200, body: '{"ok":true}', connection: 'close' });
      const ms = await closed;
      expect(ms).toBeGreaterThanOrEqual(300); // it waited for the answer ...
      expect(ms).toBeLessThan(2_000); // ... and not for the idle connection nor the grace period
    } finally {
      agent.destroy();
    }
  });

  it('ends within the grace period when a request never answers', async () => {
    server = await listen(slowApp(), '127.0.0.1', 0);
    const hung = call(`${server.url}/hang`, 'GET');
    await sleep(100);
    const t0 = Date.now();
    await server.close({ graceMs: 400 });
    const ms = Date.now() - t0;
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(ms).toBeLessThan(1_500);
    expect((await hung).error).toBe('ECONNRESET');
  });
});
