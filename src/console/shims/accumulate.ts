/**
 * Browser stand-in for the 'accumulate.js' package root in the console bundle: only what the verifier's modules
 * take from it (the core and messaging types, URLs, the signer and Ed25519 key classes), without the root's API
 * clients, BIP-39 word lists and streams, which the verifier never runs.
 */
export * as core from 'accumulate.js/core';
export * as messaging from 'accumulate.js/messaging';
export { URL } from 'accumulate.js/address';
export { ED25519Key, Signer } from 'accumulate.js/signing';
