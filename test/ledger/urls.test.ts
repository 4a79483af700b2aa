import { describe, expect, it } from 'vitest';
import { ED25519Key, Signer } from 'accumulate.js';
import {
  LedgerInputError,
  fromHex,
  isValidAdiRoot,
  liteAuthorityValid,
  liteIdentityUrl,
  normUrl,
  parseAccUrl,
  signatureMetadata,
  tx,
} from '../../src/ledger/index.js';
import { createLedgerClient } from '../../src/ledger/client.js';

describe('URLs and input validation', () => {
  it('rejects malformed URLs with a typed error naming the field', () => {
    for (const bad of ['', 'http://x.acme', 'acc://', 'acc://a b.acme', 'acc://a.acme//x', 'acc://a.acme?x=1', 'acc://a.acme#f', 42]) {
      expect(() => parseAccUrl(bad as string, 'principal')).toThrow(LedgerInputError);
    }
    try {
      parseAccUrl('http://x', 'signer');
    } catch (e) {
      expect(e).toMatchObject({ field: 'signer', code: 'badRequest' });
    }
    expect(normUrl('acc://Foo.ACME/Book/1/')).toBe('acc://foo.acme/book/1');
    expect(normUrl('foo.acme/data')).toBe('acc://foo.acme/data');
  });

  it('ADI names and lite identities', () => {
    expect(isValidAdiRoot('alice.acme')).toBe(true);
    expect(isValidAdiRoot('alice')).toBe(false);
    expect(isValidAdiRoot('123.acme')).toBe(false);
    expect(isValidAdiRoot('a.b.acme')).toBe(false);
    const k = ED25519Key.from(new Uint8Array(32).fill(3));
    expect(liteIdentityUrl(k.address.publicKey)).toBe(Signer.forLite(k).url.toString());
    const auth = liteIdentityUrl(k.address.publicKey).slice(6);
    expect(liteAuthorityValid(auth)).toBe(true);
    expect(liteAuthorityValid(`${auth.slice(0, 47)}${auth[47] === '0' ? '1' : '0'}`)).toBe(false);
    expect(() => liteIdentityUrl(new Uint8Array(31))).toThrow(/32 bytes/);
  });

  it('wrong key lengths and bad hex are typed errors', () => {
    expect(() => signatureMetadata({ publicKey: new Uint8Array(33), signer: 'acc://a.acme/book/1', signerVersion: 1 })).toThrow(/publicKey: expected 32 bytes/);
    expect(() => signatureMetadata({ publicKey: 'zz', signer: 'acc://a.acme/book/1', signerVersion: 1 })).toThrow(/not valid hex/);
    expect(() => signatureMetadata({ publicKey: new Uint8Array(32), signer: 'acc://a.acme/book/1', signerVersion: 0 })).toThrow(/signerVersion/);
    expect(() => fromHex('abc', 'signature', 64)).toThrow(LedgerInputError);
    expect(() => tx.updateKeyPage([{ type: 'addKey', publicKeyHash: new Uint8Array(20) }])).toThrow(/publicKeyHash/);
    expect(() => tx.addCredits({ recipient: 'acc://a.acme/book/1', amount: 0n, oracle: 5 })).toThrow(/amount/);
    expect(() => tx.writeData([])).toThrow(/data/);
  });

  it('the client refuses a non-http node URL', () => {
    expect(() => createLedgerClient({ url: 'acc://x.acme' })).toThrow(LedgerInputError);
    expect(createLedgerClient({ url: 'http://127.0.0.1:1/v3' }).endpoint).toBe('http://127.0.0.1:1/v3');
    expect(createLedgerClient({ url: 'http://127.0.0.1:1/' }).endpoint).toBe('http://127.0.0.1:1/v3');
  });

  it('acmeForCredits rounds up: units = amount × price / 1e8 buys at least the credits asked', () => {
    const oracle = 50_000_000;
    const amount = tx.acmeForCredits(500, oracle);
    expect((amount * BigInt(oracle)) / 100_000_000n).toBeGreaterThanOrEqual(50_000n);
    expect(((amount - 1n) * BigInt(oracle)) / 100_000_000n).toBeLessThan(50_000n);
  });
});
