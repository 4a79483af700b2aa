/** The validator network: node, HTTP API, quorum library, effect proofs, result record. */
export * from './node.js';
export * from './http.js';
export * from './quorum.js';
export * from './keys.js';
export * from './record.js';
export * from './evm-proofs.js';
export * from './mpt.js';
export * from './store.js';
