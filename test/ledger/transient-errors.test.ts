/**
 * isTransientLedgerError: a transaction's outcome is final whatever its status label. Go labels most ordinary
 * execution failures unknownError (add_credits.go "insufficient balance", update_key_page.go's threshold check),
 * so an unknownError that is a transaction's failed status (LedgerTxFailedError) or a submission the node answered
 * with a failed status is permanent; transport failures and JSON-RPC errors of the call stay transient.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerApiError } from '../../src/services/signing.js';
import { ApiError } from '../../src/api/errors.js';
import {
  createLedgerClient,
  isTransientLedgerError,
  LedgerError,
  LedgerRpcError,
  LedgerSubmitError,
  LedgerTransportError,
  LedgerTxFailedError,
  tx,
} from '../../src/ledger/index.js';
import { createAdi, fundedLite, held, openTarget, type Target } from '../ledger-conformance/harness.js';

let T: Target;
beforeAll(async () => {
  T = await openTarget();
});
afterAll(async () => {
  await T?.stop();
});

describe('isTransientLedgerError', () => {
  it('a transaction that failed with unknownError on the ledger is permanent (and the API answers 400, not 502)', async () => {
    const c = T.client;
    const sponsor = await fundedLite(c, 5_000);
    const adi = await createAdi(c, sponsor, 100);
    const r = await c.signAndSubmit(adi.page, tx.updateKeyPage([{ type: 'setThreshold', threshold: 5 }]), held(adi.key, adi.page));
    const err = await c.waitForTransaction(r.txId, { throwOnFailure: true }).catch((e) => e);
    expect(err).toBeInstanceOf(LedgerTxFailedError);
    expect(err.code).toBe('unknownError');
    expect(isTransientLedgerError(err)).toBe(false);
    const api = ledgerApiError(err, 'sign') as ApiError;
    expect(api).toBeInstanceOf(ApiError);
    expect(api.status).toBe(400);
  });

  it('a submission refused with a failed unknownError status is permanent', async () => {
    const refused = {
      status: { code: 'unknownError', delivered: true, failed: true, error: { message: 'insufficient balance', code: 'unknownError' } },
      message: 'insufficient balance',
    };
    const fetch = async (_u: string, init: any) => ({
      ok: true,
      status: 200,
      text: async () => JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(init.body).id, result: [refused] }),
    });
    const c = createLedgerClient({ url: 'http://node.invalid', fetch: fetch as any });
    const err = await c.submit({ signatures: [] } as any).catch((e) => e);
    expect(err).toBeInstanceOf(LedgerSubmitError);
    expect(err.code).toBe('unknownError');
    expect(isTransientLedgerError(err)).toBe(false);
  });

  it('failures of the call itself stay transient', async () => {
    expect(isTransientLedgerError(new LedgerTransportError('ledger unreachable'))).toBe(true);
    expect(isTransientLedgerError(new LedgerRpcError('boom', 'unknownError', -33501))).toBe(true);
    expect(isTransientLedgerError(new LedgerRpcError('boom', 'internalError', -33500))).toBe(true);
    expect(isTransientLedgerError(new LedgerError('timed out waiting for x', 'timeout'))).toBe(true);
    // a JSON-RPC error from the node: the call failed, no transaction outcome
    const unreachable = createLedgerClient({ url: 'http://127.0.0.1:1', readRetryDelaysMs: [] });
    expect(isTransientLedgerError(await unreachable.networkStatus().catch((e) => e))).toBe(true);
  });

  it('refusals stay permanent', () => {
    expect(isTransientLedgerError(new LedgerSubmitError('invalid timestamp', 'badTimestamp', [{ status: { failed: true, code: 'badTimestamp' } }]))).toBe(
      false,
    );
    expect(isTransientLedgerError(new LedgerTxFailedError('rejected', 'rejected', 'acc://x'))).toBe(false);
  });
});
