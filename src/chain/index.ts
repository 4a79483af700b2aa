/**
 * The chain side of the gateway. Modules:
 *  - formulas: commitments, leaves, Merkle, anchor id, signed messages, validator-set root, operation id
 *  - bls: min-sig BLS12-381 (keys G2, signatures G1) with EIP-2537 encodings
 *  - registry: chain name <-> id <-> RPC <-> confirmations <-> contract addresses
 *  - clients: viem public/wallet clients for one chain
 *  - deploy: CREATE2 deployment and offline address computation of ProofAnchor + AccountFactory
 *  - anchor: createAnchor / executeComprehensiveProof / rotateValidatorSet / reads
 *  - account: account address prediction, createAccount, executeGovernanceProofDirect, executeLeg
 *  - logs: bounded eth_getLogs searches (spans the provider allows, start block found by timestamp)
 *  - abi: generated ABIs and bytecode
 */
export * from './formulas.js';
export * from './bls.js';
export * from './registry.js';
export * from './clients.js';
export * from './deploy.js';
export * from './anchor.js';
export * from './account.js';
export * from './logs.js';
export * as abi from './abi/index.js';
