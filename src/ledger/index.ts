export * from './errors.js';
export * from './urls.js';
export * from './signing.js';
export * from './receipt.js';
export * as tx from './tx.js';
export { acmeForCredits, dataEntryHash } from './tx.js';
export type { KeyPageOp, AccountAuthOp } from './tx.js';
export * from './client.js';
export * from './bootstrap.js';
