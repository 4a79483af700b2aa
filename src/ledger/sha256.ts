/**
 * SHA-256 for accumulate.js and for the modules here that hash. accumulate.js computes it in JavaScript
 * (common/sha256.js), several times slower than Node's native implementation for the few bytes of a header and
 * tens of times for a data entry's kilobytes. On import, its module's export is replaced by the same function over
 * node:crypto (the same digests, the same streaming form when called without data), which every caller inside
 * accumulate.js reads through its module object (Transaction.hash, hashTree, the data entries' hashes). The
 * console's browser build puts src/console/shims/sha256.ts (accumulate.js's own) in this module's place.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

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
