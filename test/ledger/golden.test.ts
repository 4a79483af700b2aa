/**
 * Golden vectors: a transaction and a signature encoded by hand (Accumulate binary format, written out in this
 * test only) hash to the same bytes as accumulate.js; an external Ed25519 signature over hash_to_sign verifies,
 * one over the ASCII of the hex does not. Pinned hex values catch any drift in accumulate.js.
 */
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { ED25519Key, core } from 'accumulate.js';
import { encode } from 'accumulate.js/encoding';
import { sha256 as accumulateSha256 } from 'accumulate.js/common';
import { sha256 } from '../../src/ledger/sha256.js';
import {
  attachSignature,
  buildTransaction,
  dataEntryHash,
  hashToSign,
  liteIdentityUrl,
  metadataHash,
  prepareSigning,
  signatureMetadata,
  toHex,
  transactionHash,
  tx,
  verifyExternalSignature,
  verifySignature,
} from '../../src/ledger/index.js';

// ---- a minimal hand encoder (test only): field = uvarint(n) || value
const sha = (...b: Uint8Array[]) => new Uint8Array(createHash('sha256').update(Buffer.concat(b)).digest());
function uvarint(n: bigint | number): Uint8Array {
  let x = BigInt(n);
  const out: number[] = [];
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return Uint8Array.from(out);
}
const zigzag = (n: number) => uvarint(n >= 0 ? BigInt(n) << 1n : ~(BigInt(n) << 1n));
const cat = (...b: Uint8Array[]) => new Uint8Array(Buffer.concat(b));
const f = (n: number, v: Uint8Array) => cat(uvarint(n), v);
const str = (s: string) => {
  const b = new TextEncoder().encode(s);
  return cat(uvarint(b.length), b);
};
const bytes = (b: Uint8Array) => cat(uvarint(b.length), b);
function bigBE(v: bigint): Uint8Array {
  let h = v.toString(16);
  if (h.length % 2) h = `0${h}`;
  return bytes(Uint8Array.from(Buffer.from(h, 'hex')));
}

const SEED = new Uint8Array(32).fill(1);
const KEY = ED25519Key.from(SEED);
const PK = KEY.address.publicKey;
const LITE = liteIdentityUrl(PK);
const TS = 1_700_000_000_000_000;

function handMetadata(signer: string, version: number, ts: number): Uint8Array {
  // ED25519Signature{1 type=2, 2 publicKey, 4 signer, 5 signerVersion, 6 timestamp}
  return cat(f(1, uvarint(2)), f(2, bytes(PK)), f(4, str(signer)), f(5, uvarint(version)), f(6, uvarint(ts)));
}

describe('golden vectors', () => {
  it('lite identity URL of the fixed key', () => {
    const keyHex = Buffer.from(sha(PK).slice(0, 20)).toString('hex');
    const check = Buffer.from(sha(new TextEncoder().encode(keyHex)).slice(28)).toString('hex');
    expect(LITE).toBe(`acc://${keyHex}${check}`);
    expect(LITE).toMatchInlineSnapshot(`"acc://34750f98bd59fcfc946da45aaabe933be154a4b5127bc39c"`);
  });

  it('signature metadata hash and transaction hash match a hand encoding', () => {
    const principal = `${LITE}/ACME`;
    const md = sha(handMetadata(LITE, 1, TS));
    const meta = signatureMetadata({ publicKey: PK, signer: LITE, signerVersion: 1, timestamp: TS });
    expect(toHex(metadataHash(meta))).toBe(toHex(md));

    const txn = buildTransaction(principal, tx.addCredits({ recipient: LITE, amount: 123_456_789n, oracle: 50_000_000 }));
    const p = prepareSigning(txn, meta, true);
    expect(p.initiator).toBe(true);
    expect(toHex(txn.header!.initiator!)).toBe(toHex(md));

    // header{1 principal, 2 initiator}; body{1 type=14 addCredits, 2 recipient, 3 amount, 4 oracle}
    const header = cat(f(1, str(principal)), f(2, md));
    const body = cat(f(1, uvarint(14)), f(2, str(LITE)), f(3, bigBE(123_456_789n)), f(4, uvarint(50_000_000)));
    const txHash = sha(sha(header), sha(body));
    expect(toHex(p.txHash)).toBe(toHex(txHash));
    expect(toHex(p.hashToSign)).toBe(toHex(sha(md, txHash)));
    expect(toHex(hashToSign(md, txHash))).toBe(toHex(sha(md, txHash)));
    // pinned values (regression guard for the accumulate.js encoder)
    expect(toHex(p.txHash)).toMatchInlineSnapshot(`"efc700b720b5543d4f40629f9b6e5b5ee69d8d0002f2d8969deb240375674ea0"`);
    expect(toHex(p.hashToSign)).toMatchInlineSnapshot(`"6173dbae187ab7b746bc16b616c80a0dca7a03c2fef76119739031fef07c4e76"`);
  });

  it('the accumulate.js signer produces the same signature as our prepare + raw Ed25519 sign', async () => {
    const principal = `${LITE}/ACME`;
    const body = tx.addCredits({ recipient: LITE, amount: 5n * 10n ** 8n, oracle: 50_000_000 });
    const a = new core.Transaction({ header: { principal }, body });
    const sdkSig = (await KEY.sign(a, { signer: LITE, signerVersion: 1, timestamp: TS })) as core.ED25519Signature;
    const b = buildTransaction(principal, body);
    const p = prepareSigning(b, signatureMetadata({ publicKey: PK, signer: LITE, signerVersion: 1, timestamp: TS }), true);
    const ours = ed25519.sign(p.hashToSign, SEED);
    expect(toHex(ours)).toBe(toHex(sdkSig.signature!));
    expect(toHex(p.txHash)).toBe(toHex(sdkSig.transactionHash!));
  });

  it('an external signature over the raw 32 bytes verifies; over the ASCII of the hex it fails with a clear reason', () => {
    const txn = buildTransaction(`${LITE}/ACME`, tx.writeData(['x']));
    const meta = signatureMetadata({ publicKey: PK, signer: LITE, signerVersion: 1, timestamp: TS });
    const p = prepareSigning(txn, meta, true);
    const good = ed25519.sign(p.hashToSign, SEED);
    expect(verifyExternalSignature({ hashToSign: p.hashToSign, signature: good, publicKey: PK }).ok).toBe(true);
    expect(verifySignature(attachSignature(meta, good, p.txHash), p.txHash).ok).toBe(true);

    const overHex = ed25519.sign(new TextEncoder().encode(toHex(p.hashToSign)), SEED);
    const v1 = verifyExternalSignature({ hashToSign: p.hashToSign, signature: overHex, publicKey: PK });
    expect(v1).toMatchObject({ ok: false, code: 'unauthenticated' });
    expect(v1.ok ? '' : v1.reason).toMatch(/ASCII of the hex/);
    const v2 = verifySignature(attachSignature(meta, overHex, p.txHash), p.txHash);
    expect(v2.ok).toBe(false);
    // a signature over a second hash of hash_to_sign fails too
    const doubleHashed = ed25519.sign(sha(p.hashToSign), SEED);
    expect(verifyExternalSignature({ hashToSign: p.hashToSign, signature: doubleHashed, publicKey: PK }).ok).toBe(false);
  });

  it('the initiator is written before hashing (accumulate.js memoises Transaction.hash)', () => {
    const txn = buildTransaction(`${LITE}/ACME`, tx.writeData(['trap']));
    const stale = txn.hash(); // the SDK trap: hash cached without initiator
    const p = prepareSigning(txn, signatureMetadata({ publicKey: PK, signer: LITE, signerVersion: 1, timestamp: TS }), true);
    expect(toHex(p.txHash)).not.toBe(toHex(stale));
    expect(toHex(p.txHash)).toBe(toHex(transactionHash(new core.Transaction(txn.asObject()))));
  });

  it('delegated signature metadata hashes the whole wrapper (hand encoding)', () => {
    const page = 'acc://a.acme/book/1';
    const delegator = 'acc://b.acme/book/1';
    const meta = signatureMetadata({ publicKey: PK, signer: page, signerVersion: 3, timestamp: 7, vote: 'reject', delegators: [delegator] });
    // ED25519Signature + 7 vote=1 (reject); DelegatedSignature{1 type=delegated, 2 signature (nested), 3 delegator}
    const inner = cat(f(1, uvarint(2)), f(2, bytes(PK)), f(4, str(page)), f(5, uvarint(3)), f(6, uvarint(7)), f(7, uvarint(1)));
    const delegatedType = Number(core.SignatureType.Delegated);
    const outer = cat(f(1, uvarint(delegatedType)), f(2, bytes(inner)), f(3, str(delegator)));
    expect(toHex(metadataHash(meta))).toBe(toHex(sha(outer)));
  });

  it('double-hash WriteData entry hash = sha256(merkleRoot(sha256(part_i)))', () => {
    const parts = ['a', 'bb', 'ccc'].map((s) => new TextEncoder().encode(s));
    const l = parts.map((p) => sha(p));
    const root = sha(sha(l[0]!, l[1]!), l[2]!);
    expect(toHex(dataEntryHash(parts))).toBe(toHex(sha(root)));
  });

  it('expire.atTime is encoded like the Go node (zigzag varint of Unix seconds)', () => {
    const at = new Date(1_800_000_000_000);
    const h = new core.TransactionHeader({ principal: 'acc://a.acme', expire: { atTime: at } });
    const expire = f(1, zigzag(1_800_000_000));
    expect(toHex(encode(h))).toBe(toHex(cat(f(1, str('acc://a.acme')), f(5, bytes(expire)))));
  });

  it("accumulate.js hashes with Node's SHA-256: the same digests, plain Uint8Arrays, and its streaming form", () => {
    const abc = new TextEncoder().encode('abc');
    expect(toHex(sha256(abc))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    for (const n of [0, 1, 55, 56, 64, 1000, 70_000]) {
      const data = Uint8Array.from({ length: n }, (_, i) => (i * 31) & 255);
      const d = sha256(data);
      expect(Object.getPrototypeOf(d)).toBe(Uint8Array.prototype);
      expect(toHex(d)).toBe(toHex(sha(data)));
      const stream = sha256();
      stream.add(data.subarray(0, n >> 1));
      stream.add(data.subarray(n >> 1));
      expect(toHex(stream.digest())).toBe(toHex(d));
    }
    // the library's own callers (Transaction.hash, hashTree) read this function through its module
    expect(toHex((accumulateSha256 as (d: Uint8Array) => Uint8Array)(abc))).toBe(toHex(sha256(abc)));
  });
});
