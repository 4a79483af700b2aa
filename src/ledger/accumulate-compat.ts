/**
 * Two adjustments to accumulate.js 0.11.9, applied once on import (every module here that hashes or encodes with
 * accumulate.js imports this one first).
 *
 * Time fields (e.g. TransactionHeader.expire.atTime) are encoded by the Go reference as a *signed* (zigzag)
 * varint of Unix seconds (pkg/types/encoding/writer.go WriteTime -> writeInt -> binary.PutVarint), while
 * accumulate.js 0.11.9 writes an unsigned varint (src/encoding/encodable.ts Time.encode). The transaction hash
 * of any transaction with `expire.atTime` therefore differs from the node's, and the node answers
 * "transaction XXXXXXXX is not signed". Found by the conformance suite against the Go simulator v1.4.0.
 * We patch only that one encoder, using accumulate.js's own varint function.
 *
 * SHA-256: accumulate.js computes it in JavaScript (common/sha256.js), several times slower than Node's native
 * implementation for the few bytes of a header and tens of times for a data entry's kilobytes. Its module's export
 * is replaced by the same function over node:crypto (same digests, the same streaming form when called without
 * data), which every caller inside accumulate.js reads through its module object (Transaction.hash, hashTree, the
 * data entries' hashes); this module's `sha256` is that function for our own callers.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Time, varintMarshalBinary } from 'accumulate.js/encoding';

const patched = Symbol.for('proof-gateway.accumulate-time-zigzag');
const proto = Time.prototype as unknown as Record<symbol, boolean> & { encode(v: Date): Uint8Array };
if (!proto[patched]) {
  proto.encode = function encode(value: Date): Uint8Array {
    return varintMarshalBinary(Math.floor(value.getTime() / 1000));
  };
  proto[patched] = true;
}

/** The streaming form accumulate.js's sha256 returns when called without data. */
interface Sha256Stream {
  add(data: Uint8Array): void;
  digest(): Uint8Array;
}

/** SHA-256 of `data` as a plain 32-byte Uint8Array (as accumulate.js returns it), or a stream when no data is given. */
export function sha256(data: Uint8Array): Uint8Array;
export function sha256(): Sha256Stream;
export function sha256(data?: Uint8Array): Uint8Array | Sha256Stream {
  const h = createHash('sha256');
  if (data === undefined) {
    return {
      add: (d) => void h.update(d),
      digest: () => new Uint8Array(h.digest()),
    };
  }
  return new Uint8Array(h.update(data).digest());
}

const require = createRequire(import.meta.url);
const shaModule = require(join(dirname(require.resolve('accumulate.js/common')), 'sha256.js')) as { sha256: unknown };
shaModule.sha256 = sha256;
