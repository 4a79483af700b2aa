/**
 * prepareExternalSignature with pendingTx computes what the signature commits to from the transaction the node
 * returns, and only after that transaction hashes to the requested hash: a node answering with another
 * transaction, with an altered body, or with no transaction at all is refused, so the gateway never hands out a
 * hash_to_sign for something other than what was asked. A small fake node (the client's fetch option).
 */
import { ED25519Key, core } from 'accumulate.js';
import { describe, expect, it } from 'vitest';
import { createLedgerClient, LedgerError, LedgerTransportError, toHex, tx } from '../../src/ledger/index.js';
import { hashToSign, metadataHash } from '../../src/ledger/signing.js';

const key = ED25519Key.from(new Uint8Array(32).fill(7));
const PAGE = 'acc://x.acme/book/1';
const txn = new core.Transaction({ header: { principal: 'acc://x.acme/data', initiator: new Uint8Array(32).fill(1) }, body: tx.writeData(['hello']) });
const HASH = toHex(txn.hash());
const TXID = `acc://${HASH}@x.acme/data`;

/** a node that answers the transaction query with `answer(record)` and the key page honestly */
function fakeNode(answer: (rec: any) => any) {
  const rec = { recordType: 'message', id: TXID, status: 'pending', statusNo: 202, message: { type: 'transaction', transaction: txn.asObject() } };
  const fetch = async (_u: string, init: any) => {
    const m = JSON.parse(init.body);
    let result: any;
    if (m.params?.scope === PAGE) {
      result = { recordType: 'account', account: { type: 'keyPage', url: PAGE, version: 1, keys: [{ publicKeyHash: toHex(key.address.publicKeyHash) }] } };
    } else if (String(m.params?.scope).includes('@')) {
      result = answer(JSON.parse(JSON.stringify(rec)));
    }
    return { ok: true, status: 200, text: async () => JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) };
  };
  return createLedgerClient({ url: 'http://node.invalid', fetch: fetch as any, readRetryDelaysMs: [] });
}

const prepare = (c: ReturnType<typeof fakeNode>) => c.prepareExternalSignature({ pendingTx: TXID, signerUrl: PAGE, publicKey: key.address.publicKey });

describe('prepareExternalSignature on a pending transaction', () => {
  it('an honest answer: signs SHA-256(metadata hash || requested hash)', async () => {
    const p = await prepare(fakeNode((r) => r));
    expect(p.txHash).toBe(HASH);
    expect(p.txId).toBe(TXID);
    expect(p.hashToSign).toBe(toHex(hashToSign(metadataHash(p.metadata), Buffer.from(HASH, 'hex'))));
    expect(p.initiator).toBe(false);
  });

  it('refuses an answer that names another transaction', async () => {
    const err = await prepare(fakeNode((r) => ({ ...r, id: `acc://${'b'.repeat(64)}@x.acme/data` }))).catch((e) => e);
    expect(err).toBeInstanceOf(LedgerTransportError);
    expect(err.message).toMatch(/names another transaction \(b{64}\); refusing to sign it/);
  });

  it('refuses an answer whose transaction body does not hash to the requested hash', async () => {
    const err = await prepare(
      fakeNode((r) => {
        r.message.transaction.body = new core.Transaction({ header: { principal: 'acc://x.acme/data' }, body: tx.writeData(['evil']) }).asObject().body;
        return r;
      }),
    ).catch((e) => e);
    expect(err).toBeInstanceOf(LedgerTransportError);
    expect(err.message).toMatch(/carries a transaction that hashes to [0-9a-f]{64}; refusing/);
    expect(err.message).not.toContain(`${HASH};`);
  });

  it('refuses an answer without the transaction (or with only a remote reference)', async () => {
    const none = await prepare(fakeNode((r) => ({ ...r, message: { type: 'transaction' } }))).catch((e) => e);
    expect(none).toBeInstanceOf(LedgerTransportError);
    expect(none.message).toMatch(/does not carry a transaction that can be hashed/);
    const remote = await prepare(
      fakeNode((r) => {
        r.message.transaction.body = { type: 'remote', hash: HASH };
        return r;
      }),
    ).catch((e) => e);
    expect(remote).toBeInstanceOf(LedgerTransportError);
  });

  it('refuses a transaction that is already final', async () => {
    const err = await prepare(fakeNode((r) => ({ ...r, status: 'delivered', statusNo: 201 }))).catch((e) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect(err.code).toBe('notAllowed');
    expect(err.message).toMatch(/no longer pending \(delivered\)/);
  });
});
