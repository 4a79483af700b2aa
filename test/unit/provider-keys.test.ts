/** Provider key material: SLIP-0010 ed25519 (the spec's test vector 1), the stated path, and the envelope. */
import { describe, expect, it } from 'vitest';
import {
  kekRing,
  newDataKey,
  newKekEntry,
  newProviderKey,
  openMnemonic,
  openPrivateKey,
  parseKekList,
  privateKeyOfMnemonic,
  publicKeyOf,
  sealMnemonic,
  sealPrivateKey,
  slip10Ed25519,
  unwrapDataKey,
  wrapDataKey,
} from '../../src/identity/provider-keys.js';

const H = 0x80000000;
const seed = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('SLIP-0010 ed25519', () => {
  it('matches test vector 1 of the specification', () => {
    expect(hex(slip10Ed25519(seed, []))).toBe('2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7');
    expect(hex(slip10Ed25519(seed, [H]))).toBe('68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3');
    expect(hex(slip10Ed25519(seed, [H, H + 1, H + 2, H + 2, H + 1_000_000_000]))).toBe('8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793');
  });
  it('refuses a non-hardened index', () => {
    expect(() => slip10Ed25519(seed, [1])).toThrow(/hardened/);
  });
  it("derives the provider key along m/44'/281'/0'/0'/0' from the BIP-39 seed of the mnemonic", () => {
    const k = newProviderKey();
    expect(k.mnemonic.split(' ')).toHaveLength(24);
    expect(publicKeyOf(privateKeyOfMnemonic(k.mnemonic))).toBe(k.publicKey);
    // the abandon×23 art mnemonic: a fixed derivation (a change of path or seed changes this key)
    const fixed = `${'abandon '.repeat(23)}art`;
    expect(publicKeyOf(privateKeyOfMnemonic(fixed))).toBe('996c16c3886e4699f1b9885f81ab38685a619fc4d650a1164952acc68e0f5dff');
    expect(() => privateKeyOfMnemonic('not a mnemonic')).toThrow(/BIP-39/);
  });
});

describe('envelope encryption', () => {
  const k1 = parseKekList(newKekEntry('k1'));
  const k2 = parseKekList(newKekEntry('k2'));
  it('opens with the KEK that wrapped the data key, also after rotation; never with another identity or KEK', () => {
    const id = '00000000-0000-4000-8000-000000000001';
    const { dataKey, wrapped } = newDataKey(kekRing(k1), id);
    const sealed = sealPrivateKey(dataKey, id, Buffer.alloc(32, 7));
    const m = sealMnemonic(dataKey, id, 'word '.repeat(23).trim());
    const rotated = kekRing([...k2, ...k1]);
    const dk = unwrapDataKey(rotated, id, wrapped);
    expect(hex(openPrivateKey(dk, id, sealed))).toBe('07'.repeat(32));
    expect(openMnemonic(dk, id, m)).toBe('word '.repeat(23).trim());
    const rewrapped = wrapDataKey(rotated, id, dk);
    expect(rewrapped.kekId).toBe('k2');
    expect(hex(unwrapDataKey(kekRing(k2), id, rewrapped))).toBe(hex(dk));
    expect(() => unwrapDataKey(kekRing(k2), id, wrapped)).toThrow(/k1 .* not configured/);
    expect(() => unwrapDataKey(rotated, '00000000-0000-4000-8000-000000000002', wrapped)).toThrow();
    expect(() => openPrivateKey(dk, '00000000-0000-4000-8000-000000000002', sealed)).toThrow();
    expect(sealed.includes('07'.repeat(8))).toBe(false);
  });
  it('PROVIDER_KEKS: id:base64 entries, 32-byte keys, unique ids; errors hold no key bytes', () => {
    expect(parseKekList(`${newKekEntry('a')},${newKekEntry('b')}`).map((k) => k.id)).toEqual(['a', 'b']);
    expect(() => parseKekList('a:AAAA')).toThrow(/32 bytes/);
    expect(() => parseKekList(`${newKekEntry('a')},${newKekEntry('a')}`)).toThrow(/twice/);
    expect(() => parseKekList('')).toThrow(/no key/);
    const e = (() => {
      try {
        parseKekList('a:AAAA');
      } catch (x) {
        return (x as Error).message;
      }
    })();
    expect(e).not.toContain('AAAA');
  });
});
