/**
 * A 413 over real HTTP closes its connection cleanly: the answer says `Connection: close` and the socket ends after
 * it, so a pooled client (undici's Agent, as fetch uses) sends its next request on a new connection and gets an
 * answer, whatever the oversized body's framing (a declared Content-Length or chunked) and size.
 */
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/net/server.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

describe('413 and pooled connections', () => {
  let t: TestApp;
  let admin: TestKey;
  let server: RunningServer;
  beforeAll(async () => {
    t = await startTestApp('pglite');
    admin = await createTestOrgAndKey(t.db, { isAdmin: true });
    server = await listen(t.app, '127.0.0.1', 0);
  });
  afterAll(async () => {
    await server?.close({ graceMs: 1000 });
    await t?.close();
  });

  const headers = () => ({ 'x-api-key': admin.key, 'content-type': 'application/json' });

  /** An oversized POST then a normal GET on one single-connection agent: both answered, the second on a new socket. */
  async function oversizedThenNormal(body: string | (() => Readable)) {
    const agent = new Agent({ connections: 1, pipelining: 1 });
    let connects = 0;
    agent.on('connect', () => {
      connects++;
    });
    try {
      const big = await request(`${server.url}/v1/admin/api-keys`, {
        dispatcher: agent,
        method: 'POST',
        headers: headers(),
        body: typeof body === 'string' ? body : body(),
      });
      expect(big.statusCode).toBe(413);
      expect(big.headers.connection).toBe('close');
      expect(((await big.body.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
      const next = await request(`${server.url}/v1/admin/api-keys`, { dispatcher: agent, headers: headers() });
      expect(next.statusCode).toBe(200);
      await next.body.json();
      // the 413's connection was not reused
      expect(connects).toBe(2);
    } finally {
      await agent.close();
    }
  }

  it('with a declared Content-Length just over the limit', async () => {
    await oversizedThenNormal(JSON.stringify({ name: 'x'.repeat(1_100_000) }));
  });

  it('with a declared Content-Length far over the limit (40 MB)', async () => {
    await oversizedThenNormal(JSON.stringify({ name: 'x'.repeat(40_000_000) }));
  });

  it('chunked (no Content-Length), counted while read', async () => {
    const chunk = 'x'.repeat(64 * 1024);
    await oversizedThenNormal(() =>
      Readable.from(
        (function* () {
          yield '{"name":"';
          for (let i = 0; i < 40; i++) yield chunk;
          yield '"}';
        })(),
      ),
    );
  });

  it('several in a row on one agent, each answered', async () => {
    const agent = new Agent({ connections: 1, pipelining: 1 });
    try {
      for (let i = 0; i < 5; i++) {
        const big = await request(`${server.url}/v1/admin/api-keys`, {
          dispatcher: agent,
          method: 'POST',
          headers: headers(),
          body: JSON.stringify({ name: 'y'.repeat(2_000_000) }),
        });
        expect(big.statusCode).toBe(413);
        await big.body.text();
        const ok = await request(`${server.url}/v1/me`, { dispatcher: agent, headers: headers() });
        expect(ok.statusCode).toBe(200);
        await ok.body.text();
      }
    } finally {
      await agent.close();
    }
  });

  it('a body within the limit keeps the connection alive', async () => {
    const agent = new Agent({ connections: 1, pipelining: 1 });
    let connects = 0;
    agent.on('connect', () => {
      connects++;
    });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await request(`${server.url}/v1/me`, { dispatcher: agent, headers: headers() });
        expect(res.statusCode).toBe(200);
        expect(res.headers.connection).not.toBe('close');
        await res.body.text();
      }
      expect(connects).toBe(1);
    } finally {
      await agent.close();
    }
  });
});
