/**
 * The quorum library against small HTTP validators that behave as told (honest, refusing, garbage, hanging,
 * signing another message): outcome per validator, timeouts, settle modes, the aggregate.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexToBytes, keccak256, stringToHex, type Hex } from 'viem';
import { blsAggregatePublicKeys, blsKeygen, blsSign, blsVerify } from '../../src/chain/bls.js';
import { createQuorumClient, QuorumUnreachableError, type QuorumValidator } from '../../src/validator/quorum.js';

type Mode = 'honest' | 'refuse' | 'garbage' | 'malformed' | 'hang' | 'other-message' | 'http500';
const keys = Array.from({ length: 7 }, (_, i) => blsKeygen(hexToBytes(keccak256(stringToHex(`quorum-test-${i}`)))));
const modes: Mode[] = Array(7).fill('honest');
const servers: Server[] = [];
let validators: QuorumValidator[] = [];
const message = keccak256(stringToHex('anchor message'));
/** the gateway's signing key (these stand-in validators do not check it; test/validator/http-auth.test.ts does) */
const clientKey = '11'.repeat(32);

beforeAll(async () => {
  validators = await Promise.all(
    keys.map(async (k, i) => {
      const s = createServer(async (req, res) => {
        for await (const _ of req) void _;
        const mode = modes[i]!;
        const json = (code: number, body: unknown) => res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        if (mode === 'hang') return; // never answers
        if (mode === 'refuse') return json(422, { ok: false, code: 'EXPIRED', reason: 'intent expired at …' });
        if (mode === 'http500') return json(500, { ok: false, code: 'INTERNAL', reason: 'boom' });
        const m = mode === 'other-message' ? keccak256(stringToHex('other')) : message;
        const sig = mode === 'garbage' ? blsSign(blsKeygen().secretKey, m) : mode === 'malformed' ? `0x${'ab'.repeat(128)}` : blsSign(k.secretKey, m);
        json(200, { ok: true, message: m, signature: sig });
      });
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      servers.push(s);
      return { index: i, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, publicKey: k.publicKey };
    }),
  );
});

afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

const req = { intentTxId: 'acc://x', chain: 'c', anchor: {} } as never;
const set = (m: Partial<Record<number, Mode>>) =>
  modes.forEach((_, i) => {
    modes[i] = m[i] ?? 'honest';
  });

describe('quorum client', () => {
  it('all honest: 7 signers, an aggregate that verifies against the aggregate key', async () => {
    set({});
    const q = createQuorumClient({ validators, clientKey });
    const r = await q.attest(req, { message });
    expect(r.signers).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(r.signerBitmap).toBe(127n);
    expect(r.signedPower).toBe(700n);
    expect(blsVerify(r.aggregateSignature, message, blsAggregatePublicKeys(keys.map((k) => k.publicKey)))).toBe(true);
  });

  it('each kind of bad validator is reported; quorum with exactly 5', async () => {
    set({ 1: 'garbage', 4: 'hang' });
    const q = createQuorumClient({ validators, clientKey, attestTimeoutMs: 2_000 });
    const r = await q.attest(req, { message });
    expect(r.signers).toEqual([0, 2, 3, 5, 6]);
    expect(r.outcomes[1]).toMatchObject({ status: 'failed', code: 'INVALID_SIGNATURE' });
    expect(r.outcomes[4]).toMatchObject({ status: 'timed-out', code: 'TIMEOUT' });
    expect(blsVerify(r.aggregateSignature, message, blsAggregatePublicKeys([0, 2, 3, 5, 6].map((i) => keys[i]!.publicKey)))).toBe(true);
  });

  it('three bad: quorum unreachable with every reason', async () => {
    set({ 0: 'refuse', 2: 'malformed', 3: 'other-message', 6: 'http500' });
    const q = createQuorumClient({ validators, clientKey });
    const e = (await q.attest(req, { message }).catch((x) => x)) as QuorumUnreachableError;
    expect(e).toBeInstanceOf(QuorumUnreachableError);
    expect(e.signedPower, JSON.stringify(e.outcomes)).toBe(300n);
    expect(e.requiredPower).toBe(467n);
    expect(e.outcomes[0]).toMatchObject({ status: 'refused', code: 'EXPIRED', reason: 'intent expired at …' });
    expect(e.outcomes[2]).toMatchObject({ status: 'failed', code: 'INVALID_SIGNATURE' });
    expect(e.outcomes[3]).toMatchObject({ status: 'failed', code: 'WRONG_MESSAGE' });
    expect(e.outcomes[6]).toMatchObject({ status: 'failed', code: 'INTERNAL' });
    expect(e.message).toMatch(/quorum unreachable: 300 of 467/);
  });

  it("settle 'quorum' resolves at the fifth valid signature without waiting for a hanging validator", async () => {
    set({ 5: 'hang', 6: 'hang' });
    const q = createQuorumClient({ validators, clientKey, attestTimeoutMs: 5_000, settle: 'quorum' });
    const t = performance.now();
    const r = await q.attest(req, { message });
    expect(performance.now() - t).toBeLessThan(4_000);
    expect(r.signers).toEqual([0, 1, 2, 3, 4]);
    expect(r.outcomes[5]!.status).toBe('pending');
  });

  it("settle 'quorum' gives up as soon as the rest cannot make a quorum", async () => {
    set({ 0: 'refuse', 1: 'refuse', 2: 'refuse', 6: 'hang' });
    const q = createQuorumClient({ validators, clientKey, attestTimeoutMs: 5_000, settle: 'quorum' });
    const t = performance.now();
    await expect(q.attest(req, { message })).rejects.toBeInstanceOf(QuorumUnreachableError);
    expect(performance.now() - t).toBeLessThan(4_000);
  });

  it('a bad registered key is refused when the client is built', () => {
    expect(() => createQuorumClient({ clientKey, validators: [{ ...validators[0]!, publicKey: `0x${'00'.repeat(256)}` as Hex }] })).toThrow();
  });
});
