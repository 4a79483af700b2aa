/**
 * Browser stand-in for Node's global Buffer in the console bundle (injected where the verifier's modules name
 * `Buffer`): the operations they use, on Uint8Array: from (bytes, hex, UTF-8), concat, byteLength, equals,
 * toString (hex, UTF-8). Hex parsing stops at the first character pair that is not hex, as Node's does.
 */
const utf8 = new TextEncoder();
const text = new TextDecoder();

function hexBytes(s: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i + 1 < s.length; i += 2) {
    const pair = s.slice(i, i + 2);
    if (!/^[0-9a-fA-F]{2}$/.test(pair)) break;
    out.push(Number.parseInt(pair, 16));
  }
  return Uint8Array.from(out);
}

/** The bytes Buffer's functions return: a Uint8Array that also compares and prints like a Buffer. */
class Bytes extends Uint8Array {
  equals(other: Uint8Array): boolean {
    return this.length === other.length && this.every((v, i) => v === other[i]);
  }

  override toString(encoding = 'utf8'): string {
    if (encoding === 'hex') return Array.from(this, (v) => v.toString(16).padStart(2, '0')).join('');
    return text.decode(this);
  }
}

function bytesOf(source: ArrayLike<number>): Bytes {
  const b = new Bytes(source.length);
  b.set(source);
  return b;
}

export const Buffer = {
  from(value: string | ArrayLike<number> | ArrayBuffer | Iterable<number>, encoding?: string): Bytes {
    if (typeof value === 'string') return bytesOf(encoding === 'hex' ? hexBytes(value) : utf8.encode(value));
    if (value instanceof ArrayBuffer) return bytesOf(new Uint8Array(value));
    return bytesOf(Uint8Array.from(value as ArrayLike<number>));
  },
  alloc: (size: number): Bytes => new Bytes(size),
  concat(list: readonly Uint8Array[]): Bytes {
    const b = new Bytes(list.reduce((n, x) => n + x.length, 0));
    let at = 0;
    for (const x of list) {
      b.set(x, at);
      at += x.length;
    }
    return b;
  },
  byteLength: (s: string | Uint8Array): number => (typeof s === 'string' ? utf8.encode(s).length : s.length),
  isBuffer: (x: unknown): x is Bytes => x instanceof Bytes,
};
