/** The validator network: node, HTTP API, quorum client, keys, store. The wire types are in src/protocol/. */
export * from './node.js';
export * from './http.js';
export * from './quorum.js';
export * from './keys.js';
export * from './store.js';
