import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpFetch, MAX_BODY_BYTES, resetTolerantFetch } from '../../src/net/fetch.js';

let server: Server;
let base: string;
let resets = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url === '/echo') {
        res.writeHead(201, { 'content-type': 'application/json', 'x-multi': ['a', 'b'] });
        return res.end(JSON.stringify({ method: req.method, body, type: req.headers['content-type'] }));
      }
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2_000);
      if (req.url === '/big') {
        res.writeHead(200);
        const chunk = Buffer.alloc(1024 * 1024, 120);
        for (let i = 0; i <= MAX_BODY_BYTES / chunk.length; i++) res.write(chunk);
        return res.end();
      }
      if (req.url === '/reset-once' && resets++ === 0) return req.socket.destroy();
      if (req.url === '/redirect') {
        res.writeHead(307, { location: '/echo' });
        return res.end();
      }
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('boom');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('httpFetch', () => {
  it('answers like fetch: status, ok, headers, body read as text or JSON', async () => {
    const res = await httpFetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('Content-Type')).toBe('application/json');
    expect(res.headers.get('x-multi')).toBe('a, b');
    expect(res.body).toBeNull();
    expect(await res.json()).toEqual({ method: 'POST', body: '{"a":1}', type: 'application/json' });
    expect(await res.text()).toContain('"method":"POST"'); // read again
  });

  it('takes headers as a Headers object or pairs', async () => {
    const a = await httpFetch(`${base}/echo`, { method: 'POST', headers: new Headers({ 'content-type': 'text/x-a' }), body: 'x' });
    const b = await httpFetch(`${base}/echo`, { method: 'POST', headers: [['content-type', 'text/x-b']], body: 'x' });
    expect(((await a.json()) as { type: string }).type).toBe('text/x-a');
    expect(((await b.json()) as { type: string }).type).toBe('text/x-b');
  });

  it('a server error is an answer, not a throw; a redirect answers as itself', async () => {
    const res = await httpFetch(`${base}/nope`);
    expect([res.status, res.ok, await res.text()]).toEqual([500, false, 'boom']);
    const r = await httpFetch(`${base}/redirect`);
    expect([r.status, r.headers.get('location')]).toEqual([307, '/echo']);
  });

  it('a network failure is TypeError "fetch failed" with the socket error as cause', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await httpFetch(`http://127.0.0.1:${port}/`).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe('fetch failed');
    expect(err.cause.code).toBe('ECONNREFUSED');
  });

  it("an aborted request rejects with the signal's reason (TimeoutError for AbortSignal.timeout)", async () => {
    const err = await httpFetch(`${base}/slow`, { signal: AbortSignal.timeout(100) }).catch((e) => e);
    expect(err.name).toBe('TimeoutError');
    const ctl = new AbortController();
    ctl.abort(new Error('stop'));
    await expect(httpFetch(`${base}/echo`, { signal: ctl.signal })).rejects.toThrow('stop');
  });

  it(`refuses an answer larger than ${MAX_BODY_BYTES} bytes`, async () => {
    const err = await httpFetch(`${base}/big`).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(String(err.cause?.message)).toMatch(/answer larger than/);
  });
});

describe('resetTolerantFetch', () => {
  it('repeats a request once when the connection was reset before an answer', async () => {
    resets = 0;
    const res = await resetTolerantFetch(`${base}/reset-once`);
    expect(res.status).toBe(500); // the second attempt reached the handler's default answer
    expect(resets).toBe(2);
  });
});
