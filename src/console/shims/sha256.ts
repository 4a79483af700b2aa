/** Browser stand-in for src/ledger/sha256.ts (node:crypto) in the console bundle: accumulate.js's own SHA-256. */
export { sha256 } from 'accumulate.js/common';
