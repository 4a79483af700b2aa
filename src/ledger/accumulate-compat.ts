/**
 * Interop fix for accumulate.js 0.11.9, applied once on import.
 *
 * Time fields (e.g. TransactionHeader.expire.atTime) are encoded by the Go reference as a *signed* (zigzag)
 * varint of Unix seconds (pkg/types/encoding/writer.go WriteTime -> writeInt -> binary.PutVarint), while
 * accumulate.js 0.11.9 writes an unsigned varint (src/encoding/encodable.ts Time.encode). The transaction hash
 * of any transaction with `expire.atTime` therefore differs from the node's, and the node answers
 * "transaction XXXXXXXX is not signed". Found by the conformance suite against the Go simulator v1.4.0.
 * We patch only that one encoder, using accumulate.js's own varint function.
 */
import { Time, varintMarshalBinary } from 'accumulate.js/encoding';

const patched = Symbol.for('proof-gateway.accumulate-time-zigzag');
const proto = Time.prototype as unknown as Record<symbol, boolean> & { encode(v: Date): Uint8Array };
if (!proto[patched]) {
  proto.encode = function encode(value: Date): Uint8Array {
    return varintMarshalBinary(Math.floor(value.getTime() / 1000));
  };
  proto[patched] = true;
}
