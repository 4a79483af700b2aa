/**
 * What the proof cycle of one intent leaves behind: the identifiers and quorum outputs the intent workflow
 * records step by step (stored on the intent row), from which the proof bundle is assembled (src/proof/assemble.ts)
 * by reading the ledger and the chains. Plain JSON (strings for integers), so it travels through Temporal.
 */
import type { Address, Hex } from 'viem';
import type { AuthorityReport } from './validator-wire.js';

/** One quorum round's aggregate (pre- or post-execution). */
export interface QuorumRecord {
  /** the 32-byte message every signer signed (formulas.anchorMessage / resultMessage) */
  message: Hex;
  /** EIP-2537 G1 aggregate signature (128 bytes) */
  aggregateSignature: Hex;
  /** decimal string */
  signerBitmap: string;
  signers: number[];
  /** per validator: signed, refused (with code and reason), failed, timed-out */
  outcomes: { index: number; status: string; code?: string; reason?: string }[];
}

export interface LegCycleRecord {
  legId: string;
  /** leaf of this leg in its chain's anchor */
  leafIndex: number;
  /** a batched leg: its Merkle path (siblings bottom-up) to the batch's commitment root */
  merkleProof?: Hex[];
  /** executeGovernanceProofDirect transaction */
  executionTx?: Hex;
  /** post-execution quorum over formulas.resultMessage */
  observation?: QuorumRecord & {
    resultHash: Hex;
    confirmations: number;
    checks: { callBinding: string; expectedEvents: number; expectedState: number };
  };
  /** the proof_result v2 record on the ledger */
  result?: { resultId: Hex; resultsAccount: string; txId: string; writtenBy: number };
  /** set when this leg failed: why */
  error?: string;
}

/**
 * The batch anchor a batched intent's legs joined on a chain (src/protocol/intent/batch.ts). `id` is the batch's
 * workflow id (the Temporal UI's batch); the anchor fields are set once the batch is attested, and then the cycle's
 * anchorId / commitmentRoot / leafCount and each leg's leafIndex are the batch's. `refused`: why the batch left
 * this intent out (its validators refused it), and the intent failed with that reason.
 */
export interface BatchMembership {
  id: string;
  anchorId?: Hex;
  operationId?: Hex;
  ledgerTxHash?: Hex;
  /** the members in batch order: intent id, the ledger transaction that stored it (id and hash), its operation id */
  members?: { intentId: string; ledgerTxId: string; ledgerTxHash: Hex; operationId: Hex }[];
  /** leaf of this intent's first leg */
  offset?: number;
  refused?: string;
}

export interface ChainCycleRecord {
  chain: string;
  /** decimal string */
  chainId: string;
  proofAnchor: Address;
  anchorId?: Hex;
  commitmentRoot?: Hex;
  /** decimal string */
  leafCount?: string;
  validatorSetRoot?: Hex;
  /** pre-execution quorum over formulas.anchorMessage */
  attestation?: QuorumRecord & { authority: AuthorityReport };
  createAnchorTx?: Hex;
  proveTx?: Hex;
  /** the batched class: the batch this chain's legs are anchored in */
  batch?: BatchMembership;
  legs: LegCycleRecord[];
}

export interface CycleRecord {
  intentId: string;
  adiUrl: string;
  dataAccountUrl: string;
  /** the WriteData transaction that stored the intent */
  ledgerTxId?: string;
  ledgerTxHash?: string;
  chains: ChainCycleRecord[];
  /** legs of the intent that did not complete (the bundle of a partial proof names them) */
  failedLegs?: { legId: string; chain: string; reason: string }[];
}

/** What the record keeps of a quorum round's result (the quorum client's QuorumResult). */
export interface QuorumRound {
  message: Hex;
  aggregateSignature: Hex;
  signerBitmap: bigint;
  signers: number[];
  outcomes: readonly { index: number; status: string; code?: string; reason?: string }[];
}

/** The stored form of a quorum round's result. */
export function quorumRecord(q: QuorumRound): QuorumRecord {
  return {
    message: q.message,
    aggregateSignature: q.aggregateSignature,
    signerBitmap: q.signerBitmap.toString(),
    signers: q.signers,
    outcomes: q.outcomes.map((o) => ({ index: o.index, status: o.status, ...(o.code ? { code: o.code } : {}), ...(o.reason ? { reason: o.reason } : {}) })),
  };
}
