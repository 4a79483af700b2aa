/**
 * faucet() recognises a refusal in every shape submit() does (one check): `success` false or absent (the Go node
 * omits it when false), or the status marked failed. A fake node for the refusals; the simulator's faucet for the
 * accepted case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerClient, LedgerSubmitError } from '../../src/ledger/index.js';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import { newKey } from '../ledger-conformance/harness.js';
import { liteIdentityUrl } from '../../src/ledger/urls.js';

const LTA = `acc://${'0'.repeat(48)}/ACME`;

function answering(result: unknown) {
  const fetch = async (_u: string, init: any) => ({
    ok: true,
    status: 200,
    text: async () => JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(init.body).id, result }),
  });
  return createLedgerClient({ url: 'http://node.invalid', fetch: fetch as any });
}

let sim: LedgerSimHandle;
beforeAll(async () => {
  sim = await startLedgerSim({ port: 0, blockIntervalMs: 20 });
});
afterAll(async () => {
  await sim?.stop();
});

describe('faucet', () => {
  it('a refusal as the Go node shapes it (no success field, status failed) throws, as submit does', async () => {
    const refused = {
      status: { code: 'badRequest', delivered: true, failed: true, error: { message: 'faucet is disabled', code: 'badRequest' } },
      message: 'faucet is disabled',
    };
    const err = await answering(refused)
      .faucet(LTA)
      .catch((e) => e);
    expect(err).toBeInstanceOf(LedgerSubmitError);
    expect(err.code).toBe('badRequest');
    expect(err.message).toBe('faucet is disabled');
    const viaSubmit = await answering([refused])
      .submit({ signatures: [] } as any)
      .catch((e) => e);
    expect(viaSubmit).toBeInstanceOf(LedgerSubmitError);
    expect([viaSubmit.code, viaSubmit.message]).toEqual([err.code, err.message]);
  });

  it('success false, or a status marked failed with success true, throws too', async () => {
    const a = await answering({ success: false, status: { code: 'unknownError' } })
      .faucet(LTA)
      .catch((e) => e);
    expect(a).toBeInstanceOf(LedgerSubmitError);
    expect(a.code).toBe('unknownError');
    expect(a.message).toBe('faucet refused');
    const b = await answering({
      success: true,
      status: { failed: true, code: 'insufficientBalance', error: { message: 'faucet is empty', code: 'insufficientBalance' } },
    })
      .faucet(LTA)
      .catch((e) => e);
    expect(b).toBeInstanceOf(LedgerSubmitError);
    expect(b.code).toBe('insufficientBalance');
  });

  it('an accepted faucet answers its TxID (simulator)', async () => {
    const c = createLedgerClient({ url: sim.url });
    const lta = `${liteIdentityUrl(newKey().publicKey)}/ACME`;
    const r = await c.faucet(lta);
    expect(r.txId).toMatch(/^acc:\/\/[0-9a-f]{64}@/);
    expect(BigInt((await c.queryAccount(lta)).balance ?? '0')).toBeGreaterThan(0n);
  });
});
