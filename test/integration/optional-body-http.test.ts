/**
 * Over HTTP (the Node server, as clients call it): a POST whose body is optional, sent as Content-Type:
 * application/json with Content-Length: 0, is a request without a body; a body that is there is still parsed.
 */
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

describe('optional JSON body over HTTP', () => {
  let t: TestApp;
  let k: TestKey;
  let server: ReturnType<typeof serve>;
  let base: string;
  beforeAll(async () => {
    t = await startTestApp('pglite');
    k = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 1000 });
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((r) => server.once('listening', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    await t?.close();
  });

  it('POST .../rotate-secret with Content-Type: application/json and Content-Length: 0 rotates; "{" is a 400', async () => {
    const headers = { 'x-api-key': k.key, 'content-type': 'application/json' };
    const created = await fetch(`${base}/v1/webhooks/endpoints`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', skip_verification: true }),
    });
    expect(created.status).toBe(201);
    const ep = (await created.json()) as { id: string; secret: string };
    const empty = await fetch(`${base}/v1/webhooks/endpoints/${ep.id}/rotate-secret`, {
      method: 'POST',
      headers: { ...headers, 'content-length': '0' },
      body: '',
    });
    expect(empty.status, await empty.clone().text()).toBe(200);
    expect(((await empty.json()) as { secret: string }).secret).not.toBe(ep.secret);
    const broken = await fetch(`${base}/v1/webhooks/endpoints/${ep.id}/rotate-secret`, { method: 'POST', headers, body: '{' });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'body' } });
  });
});
