/**
 * The validators' HTTP API as an attacker and an operator see it, against a stand-in node that counts its calls:
 * signed requests only (forged, untrusted, stale, replayed and misaddressed ones are 401 before the node runs), key
 * rotation, the body limit (413 that closes the connection), the cap on requests in flight (503 + Retry-After),
 * bodies checked before the node (400 naming the field), no internals in a 500, and the bounded long-poll the
 * gateway's client renews.
 */
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { Agent, request as undiciRequest } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import type { RunningServer } from '../../src/net/server.js';
import { type GatewayKey, NonceLedger, newGatewayKey, signValidatorRequest, VALIDATOR_AUTH_HEADERS } from '../../src/protocol/validator-auth.js';
import { VALIDATOR_API, type ObserveRequest } from '../../src/protocol/validator-wire.js';
import { serveValidator, type ValidatorHttpOptions } from '../../src/validator/http.js';
import type { ValidatorNode } from '../../src/validator/node.js';
import { postToValidator } from '../../src/validator/quorum/post.js';

const INDEX = 3;
const keyA = newGatewayKey();
const keyB = newGatewayKey();
const stranger = newGatewayKey();

const observeBody: ObserveRequest = {
  intentTxId: 'acc://abc@id.acme/data',
  chain: 'ethereum-sepolia',
  anchorId: `0x${'ab'.repeat(32)}`,
  leafIndex: '0',
  executionTxHash: `0x${'cd'.repeat(32)}`,
};
const resultsBody = { ...observeBody, aggregateSignature: `0x${'ee'.repeat(96)}`, signerBitmap: '127' };

interface StandIn {
  node: ValidatorNode;
  calls: { attest: number; observe: number; writeResult: number };
  /** what observe does (default: answers at once) */
  observe: (req: ObserveRequest) => Promise<unknown>;
  writeResult: () => Promise<unknown>;
}

function standIn(): StandIn {
  const s: StandIn = {
    calls: { attest: 0, observe: 0, writeResult: 0 },
    observe: async () => ({ ok: true, kind: 'observation', validatorIndex: INDEX }),
    writeResult: async () => ({ ok: true, kind: 'result-write' }),
    node: undefined as unknown as ValidatorNode,
  };
  s.node = {
    index: INDEX,
    info: () => ({ index: INDEX }) as never,
    attest: async () => {
      s.calls.attest++;
      return { ok: true, kind: 'attestation' } as never;
    },
    attestBatch: async () => ({ ok: true, kind: 'batch-attestation' }) as never,
    observe: async (req) => {
      s.calls.observe++;
      return (await s.observe(req)) as never;
    },
    writeResult: async () => {
      s.calls.writeResult++;
      return (await s.writeResult()) as never;
    },
    close: () => {},
  };
  return s;
}

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close({ graceMs: 0 })));
});

async function start(opts: Partial<ValidatorHttpOptions> = {}) {
  const s = standIn();
  const lines: string[] = [];
  const server = await serveValidator(s.node, {
    trustedGatewayKeys: [keyA.publicKey, keyB.publicKey],
    logger: createLogger('info', {}, (l) => lines.push(l)),
    ...opts,
  });
  servers.push(server);
  return Object.assign(s, { url: server.url, lines });
}

/** A POST as the gateway sends it; `tamper` changes the headers after signing. */
async function post(
  url: string,
  path: string,
  body: unknown,
  o: { key?: GatewayKey; now?: number; index?: number; headers?: Record<string, string>; tamper?: (h: Record<string, string>) => void } = {},
) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers = o.headers ?? signValidatorRequest(o.key ?? keyA, { method: 'POST', path, validatorIndex: o.index ?? INDEX, body: text }, o.now);
  o.tamper?.(headers);
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: text });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

describe('validator HTTP API: authentication', () => {
  it('a request signed by a trusted key is answered', async () => {
    const v = await start();
    const r = await post(v.url, VALIDATOR_API.observe, observeBody);
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe('observation');
    expect(v.calls.observe).toBe(1);
  });

  it('unsigned, forged, untrusted, stale, replayed and misaddressed requests are 401 and the node never runs', async () => {
    const v = await start();
    const cases: [string, () => ReturnType<typeof post>][] = [
      ['unsigned', () => post(v.url, VALIDATOR_API.observe, observeBody, { headers: {} })],
      [
        'forged signature',
        () =>
          post(v.url, VALIDATOR_API.observe, observeBody, {
            tamper: (h) => {
              const sig = h[VALIDATOR_AUTH_HEADERS.signature]!;
              h[VALIDATOR_AUTH_HEADERS.signature] = `${sig.slice(0, -2)}${sig.endsWith('00') ? '01' : '00'}`;
            },
          }),
      ],
      [
        'signature of another body',
        async () => {
          const h = signValidatorRequest(keyA, { method: 'POST', path: VALIDATOR_API.observe, validatorIndex: INDEX, body: JSON.stringify(observeBody) });
          return post(v.url, VALIDATOR_API.observe, { ...observeBody, leafIndex: '1' }, { headers: h });
        },
      ],
      [
        'trusted key claimed, signed by another',
        () => post(v.url, VALIDATOR_API.observe, observeBody, { key: stranger, tamper: (h) => void (h[VALIDATOR_AUTH_HEADERS.key] = keyA.publicKey) }),
      ],
      ['untrusted key', () => post(v.url, VALIDATOR_API.observe, observeBody, { key: stranger })],
      ['stale timestamp', () => post(v.url, VALIDATOR_API.observe, observeBody, { now: Date.now() - 61_000 })],
      ['timestamp from the future', () => post(v.url, VALIDATOR_API.observe, observeBody, { now: Date.now() + 61_000 })],
      ['addressed to another validator', () => post(v.url, VALIDATOR_API.observe, observeBody, { index: INDEX + 1 })],
      ['signed for another path', () => post(v.url, VALIDATOR_API.results, observeBody, { headers: signedFor(VALIDATOR_API.observe, observeBody) })],
    ];
    for (const [what, send] of cases) {
      const r = await send();
      expect(r.status, what).toBe(401);
      expect(r.body, what).toMatchObject({ ok: false, code: 'UNAUTHENTICATED', validatorIndex: INDEX });
    }
    expect(v.calls).toEqual({ attest: 0, observe: 0, writeResult: 0 });
  });

  it('a replayed request is 401 and runs nothing the second time', async () => {
    const v = await start();
    const headers = signedFor(VALIDATOR_API.observe, observeBody);
    expect((await post(v.url, VALIDATOR_API.observe, observeBody, { headers })).status).toBe(200);
    const again = await post(v.url, VALIDATOR_API.observe, observeBody, { headers });
    expect(again.status).toBe(401);
    expect(again.body.reason).toMatch(/replayed/);
    expect(v.calls.observe).toBe(1);
  });

  it('key rotation: two trusted keys both answered; a dropped key is refused', async () => {
    const both = await start({ trustedGatewayKeys: [keyA.publicKey, keyB.publicKey] });
    expect((await post(both.url, VALIDATOR_API.observe, observeBody, { key: keyA })).status).toBe(200);
    expect((await post(both.url, VALIDATOR_API.observe, observeBody, { key: keyB })).status).toBe(200);
    const rotated = await start({ trustedGatewayKeys: [keyB.publicKey] });
    const old = await post(rotated.url, VALIDATOR_API.observe, observeBody, { key: keyA });
    expect(old.status).toBe(401);
    expect(old.body.reason).toMatch(/not trusted/);
    expect((await post(rotated.url, VALIDATOR_API.observe, observeBody, { key: keyB })).status).toBe(200);
    expect(rotated.calls.observe).toBe(1);
  });

  it('nonces are remembered within the window only, and at most a bounded number of them', () => {
    const ledger = new NonceLedger(60_000, 3);
    const t = 1_000_000;
    expect(['a', 'b', 'c'].map((n) => ledger.admit('k', n, t, t))).toEqual(['fresh', 'fresh', 'fresh']);
    expect(ledger.admit('k', 'a', t, t + 1)).toBe('replayed');
    // the same nonce under another key is another request
    expect(ledger.admit('k2', 'a', t, t)).toBe('full');
    // once their timestamps are out of the window they are forgotten (such a request is refused for its timestamp)
    expect(ledger.admit('k', 'd', t + 61_000, t + 61_000)).toBe('fresh');
    expect(ledger.size).toBe(1);
  });

  it('no trusted key: the validator refuses to start', async () => {
    await expect(start({ trustedGatewayKeys: [] })).rejects.toThrow(/trusted gateway key/);
  });

  it('health and info stay public; other paths and methods answer JSON', async () => {
    const v = await start();
    expect((await fetch(`${v.url}${VALIDATOR_API.health}`)).status).toBe(200);
    expect((await fetch(`${v.url}${VALIDATOR_API.info}`)).status).toBe(200);
    const wrong = await fetch(`${v.url}${VALIDATOR_API.observe}`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(await wrong.json()).toMatchObject({ ok: false, code: 'METHOD_NOT_ALLOWED' });
    const none = await fetch(`${v.url}/v1/nothing`, { method: 'POST' });
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({ ok: false, code: 'NOT_FOUND' });
  });
});

function signedFor(path: string, body: unknown, key: GatewayKey = keyA) {
  return signValidatorRequest(key, { method: 'POST', path, validatorIndex: INDEX, body: JSON.stringify(body) });
}

/**
 * A raw POST (node:http, to see the connection) that sends `sent` bytes of body, declaring `declared` bytes in
 * Content-Length (or none: chunked), and then waits for the answer without sending more.
 */
function rawPost(url: string, path: string, o: { declared?: number; sent: number }) {
  return new Promise<{ status: number; connection?: string; body: string; closed: boolean }>((resolve, reject) => {
    const u = new URL(url);
    const req = request({
      host: u.hostname,
      port: u.port,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(o.declared !== undefined ? { 'content-length': String(o.declared) } : {}) },
    });
    let answered = false;
    // a write still under way when the server closes fails; only a failure before the answer counts
    req.on('error', (e) => (answered ? undefined : reject(e)));
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('error', () => {});
      // the server ends the connection after the answer, without our doing anything
      const closed = new Promise<boolean>((r) => {
        if (req.socket?.destroyed) return r(true);
        req.socket?.once('close', () => r(true));
        setTimeout(() => r(req.socket?.destroyed ?? true), 2000);
      });
      res.on('end', () => void closed.then((c) => resolve({ status: res.statusCode!, connection: res.headers.connection, body, closed: c })));
    });
    req.write(Buffer.alloc(o.sent, 0x20));
  });
}

describe('validator HTTP API: limits', () => {
  it('an oversized body is 413 with Connection: close, before authentication and before the node', async () => {
    const v = await start({ maxBodyBytes: 1 << 20 });
    const declared = await rawPost(v.url, VALIDATOR_API.observe, { declared: 50 * 1024 * 1024, sent: 16 * 1024 });
    expect(declared.status).toBe(413);
    expect(declared.connection).toBe('close');
    expect(JSON.parse(declared.body)).toMatchObject({ ok: false, code: 'PAYLOAD_TOO_LARGE' });
    expect(declared.closed).toBe(true);
    const chunked = await rawPost(v.url, VALIDATOR_API.observe, { sent: (1 << 20) + 4096 });
    expect(chunked.status).toBe(413);
    expect(chunked.connection).toBe('close');
    expect(v.calls.observe).toBe(0);
  });

  it("after a 413 a pooled client's next request is answered (the closed connection is not reused)", async () => {
    const v = await start();
    const agent = new Agent({ connections: 1 });
    try {
      for (const chunked of [false, true]) {
        const big = Buffer.alloc(2 << 20, 0x20);
        const r = await undiciRequest(`${v.url}${VALIDATOR_API.observe}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          // a stream has no length: sent chunked
          body: chunked ? Readable.from([big]) : big,
          dispatcher: agent,
        });
        expect(r.statusCode).toBe(413);
        expect(r.headers.connection).toBe('close');
        await r.body.text();
        const text = JSON.stringify(observeBody);
        const next = await undiciRequest(`${v.url}${VALIDATOR_API.observe}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...signedFor(VALIDATOR_API.observe, observeBody) },
          body: text,
          dispatcher: agent,
        });
        expect(next.statusCode).toBe(200);
        await next.body.text();
      }
    } finally {
      await agent.close();
    }
  });

  it('beyond the cap on requests in flight: 503 with Retry-After', async () => {
    const v = await start({ maxInFlight: 2, pollWaitMs: 5_000 });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    v.observe = async () => {
      await gate;
      return { ok: true, kind: 'observation' };
    };
    const held = [0, 1].map((i) => post(v.url, VALIDATOR_API.observe, { ...observeBody, leafIndex: String(i) }));
    await expect.poll(() => v.calls.observe).toBe(2);
    const over = await post(v.url, VALIDATOR_API.observe, { ...observeBody, leafIndex: '2' });
    expect(over.status).toBe(503);
    expect(over.headers.get('retry-after')).toBe('1');
    expect(over.body).toMatchObject({ ok: false, code: 'BUSY', validatorIndex: INDEX });
    expect(v.calls.observe).toBe(2);
    release();
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200]);
    // the slots are free again
    expect((await post(v.url, VALIDATOR_API.observe, { ...observeBody, leafIndex: '2' })).status).toBe(200);
  });
});

describe('validator HTTP API: bodies and errors', () => {
  it('a malformed body is 400 naming the field; the node never sees it', async () => {
    const v = await start();
    const empty = await post(v.url, VALIDATOR_API.results, {});
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ ok: false, code: 'BAD_REQUEST', field: 'intentTxId', validatorIndex: INDEX });
    expect(String(empty.body.reason)).toMatch(/^intentTxId: /);
    const noBitmap = await post(v.url, VALIDATOR_API.results, { ...resultsBody, signerBitmap: undefined });
    expect(noBitmap.body).toMatchObject({ code: 'BAD_REQUEST', field: 'signerBitmap' });
    const nested = await post(v.url, VALIDATOR_API.attest, { intentTxId: 'acc://x', chain: 'c', anchor: { commitmentRoot: 1 } });
    expect(nested.body).toMatchObject({ code: 'BAD_REQUEST', field: 'anchor.commitmentRoot' });
    const notJson = await post(v.url, VALIDATOR_API.results, '{"intentTxId":');
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ ok: false, code: 'BAD_REQUEST', reason: 'body must be JSON' });
    expect(v.calls).toEqual({ attest: 0, observe: 0, writeResult: 0 });
  });

  it("an internal failure is 500 'internal error': its message is in the log only", async () => {
    const v = await start();
    v.writeResult = async () => {
      throw new Error('ENOENT: /srv/validator-3/state.json (db password hunter2)');
    };
    const r = await post(v.url, VALIDATOR_API.results, resultsBody);
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ ok: false, code: 'INTERNAL', reason: 'internal error', validatorIndex: INDEX });
    expect(JSON.stringify(r.body)).not.toMatch(/ENOENT|hunter2|state\.json/);
    expect(v.lines.some((l) => l.includes('ENOENT: /srv/validator-3/state.json'))).toBe(true);
  });
});

describe('validator HTTP API: bounded long-poll', () => {
  it('a slow observation answers 202 PENDING within the bound; the client renews until the answer', async () => {
    const v = await start({ pollWaitMs: 300 });
    v.observe = async () => {
      await new Promise((r) => setTimeout(r, 1_200));
      return { ok: true, kind: 'observation', validatorIndex: INDEX, signature: '0x01' };
    };
    const t0 = Date.now();
    const first = await post(v.url, VALIDATOR_API.observe, observeBody);
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ ok: false, kind: 'pending', code: 'PENDING', reason: expect.any(String), retryAfterMs: 0, validatorIndex: INDEX });
    // the gateway's client: each poll signed anew, renewed until the work is done (one observation, not several)
    let requests = 0;
    const counting = ((input: string, init: RequestInit) => {
      requests++;
      return fetch(input, init);
    }) as typeof fetch;
    const r = await postToValidator<{ kind: string }>(
      counting,
      keyA,
      { index: INDEX, url: v.url, publicKey: '0x' },
      VALIDATOR_API.observe,
      observeBody,
      10_000,
    );
    expect(r).toMatchObject({ ok: true, data: { kind: 'observation' } });
    expect(requests).toBeGreaterThanOrEqual(2);
    expect(v.calls.observe).toBe(1);
  });

  it("the client's own deadline still bounds a renewed poll", async () => {
    const v = await start({ pollWaitMs: 200 });
    v.observe = () => new Promise(() => {});
    const r = await postToValidator(fetch, keyA, { index: INDEX, url: v.url, publicKey: '0x' }, VALIDATOR_API.observe, observeBody, 900);
    expect(r).toMatchObject({ ok: false, outcome: { status: 'timed-out', code: 'TIMEOUT' } });
  });
});
