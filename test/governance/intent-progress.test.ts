/**
 * GET /v1/transaction/{id} shows how far the co-signing of an intent's ledger transaction is, read live from the
 * ledger: on a 2-of-3 page, 1 of 2 with the identity's book awaited right after the initiator's signature, 2 of 2
 * right after a co-signer's, and the final counts once executed; a ledger that does not answer leaves the progress
 * null and the rest of the intent as it was.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app.js';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import { createLedgerClient } from '../../src/ledger/index.js';
import { newClientKey } from '../identity/devnet.js';
import { api, arg, prepare, recordLeg, SEPOLIA, startCycleBench, submit, waitIntent, type CycleBench } from '../transaction/support.js';
import { cosign, makePanel } from './panel.js';

let b: CycleBench;
const seat2 = newClientKey();
const seat3 = newClientKey();

beforeAll(async () => {
  b = await startCycleBench();
  await makePanel(b, [seat2, seat3], 2);
}, 240_000);

afterAll(async () => {
  await b?.stop();
});

const signer = (k: { publicKey: string }) => ({ public_key: k.publicKey, public_key_hash: publicKeyHashHex(k.publicKey), vote: 'approve' });

describe('co-signing progress on GET /v1/transaction/{id}', () => {
  let intentId: string;

  it('1 of 2 with the book awaited after the first signature, 2 of 2 after the co-signature, final once executed', async () => {
    const adi = b.identity.adiUrl.toLowerCase();
    const page = `${adi}/book/1`;
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`progress-${randomUUID()}`))]);
    intentId = p.intent_id;
    // no ledger transaction before the signature: nothing to report
    expect((await api(b, 'GET', `/v1/transaction/${p.intent_id}`)).body.signing_progress).toBeNull();

    const s = await submit(b, p);
    const waiting = await api(b, 'GET', `/v1/transaction/${p.intent_id}`);
    expect(waiting.status).toBe(200);
    expect(waiting.body).toMatchObject({ status: 'submitted', stage: 'submitted', tx_hash: s.tx_hash });
    const { key_page, ...progress } = waiting.body.signing_progress;
    expect(key_page.toLowerCase()).toBe(page);
    expect(progress).toEqual({
      collected_signatures: 1,
      required_signatures: 2,
      awaiting_authorities: [`${adi}/book`],
      signers: [signer(b.identity.key)],
      is_ready: false,
      ledger_status: 'pending',
    });

    await cosign(b, s.tx_hash, seat2, 'approve');
    // the co-signature's answer comes once the ledger recorded it
    const cosigned = (await api(b, 'GET', `/v1/transaction/${p.intent_id}`)).body.signing_progress;
    expect(cosigned).toMatchObject({ collected_signatures: 2, required_signatures: 2 });
    expect(cosigned.signers).toEqual(expect.arrayContaining([signer(b.identity.key), signer(seat2)]));

    const done = await waitIntent(b, p.intent_id);
    expect(done.error_message).toBeNull();
    expect(done.status).toBe('completed');
    expect(done.signing_progress).toMatchObject({
      collected_signatures: 2,
      required_signatures: 2,
      awaiting_authorities: [],
      is_ready: true,
      ledger_status: 'delivered',
    });
    expect(done.signing_progress.signers).toHaveLength(2);
    // lists carry no live reads
    const list = await api(b, 'GET', `/v1/transactions?identity_id=${b.identity.id}`);
    expect(list.body.transactions.find((x: any) => x.intent_id === p.intent_id)).not.toHaveProperty('signing_progress');
  }, 150_000);

  it('a ledger that does not answer leaves signing_progress null, the rest of the intent as before, within the bounded wait', async () => {
    // a ledger endpoint that takes the connection and never answers
    const sockets: Socket[] = [];
    const silent: Server = createServer((sock) => sockets.push(sock));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      const app = createApp({ ...b.app.deps, ledger: createLedgerClient({ url: `http://127.0.0.1:${port}/v3`, timeoutMs: 30_000 }) });
      const started = Date.now();
      const res = await app.request(`/v1/transaction/${intentId}`, { headers: { 'X-API-Key': b.app.key.key } });
      const elapsed = Date.now() - started;
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.signing_progress).toBeNull();
      expect(elapsed).toBeLessThan(5_000);
      expect(sockets.length).toBeGreaterThan(0); // the ledger was asked
      const live = (await api(b, 'GET', `/v1/transaction/${intentId}`)).body;
      expect(live.signing_progress).not.toBeNull();
      expect({ ...body, signing_progress: live.signing_progress }).toEqual(live);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  }, 30_000);

  it('a settled transaction is read from the ledger once: polling a running or finished intent costs no ledger reads', async () => {
    let calls = 0;
    const counted = new Proxy(b.app.deps.ledger, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls++;
          return value.apply(target, args);
        };
      },
    });
    const app = createApp({ ...b.app.deps, ledger: counted });
    const read = async () =>
      ((await (await app.request(`/v1/transaction/${intentId}`, { headers: { 'X-API-Key': b.app.key.key } })).json()) as any).signing_progress;
    const first = await read();
    expect(first).toMatchObject({ collected_signatures: 2, ledger_status: 'delivered' });
    const afterFirst = calls;
    expect(afterFirst).toBeGreaterThan(0);
    expect(await read()).toEqual(first);
    expect(calls).toBe(afterFirst);
  }, 30_000);
});
