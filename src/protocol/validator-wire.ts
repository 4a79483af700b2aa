/**
 * The validators' HTTP API as both sides see it: the paths, the request and response bodies of attest, observe and
 * results, and the refusal answer. A validator node serves it (src/validator/http.ts), the gateway's quorum client
 * calls it (src/validator/quorum.ts); integers beyond 2^53 travel as decimal strings.
 *
 *   GET  /v1/health                      {status, index}                     (public)
 *   GET  /v1/info                        ValidatorInfo                       (public: public keys only)
 *   POST /v1/attest   AttestRequest      -> 200 AttestResponse      | 202 ValidatorPendingResponse | 422 ValidatorErrorResponse
 *   POST /v1/observe  ObserveRequest     -> 200 ObserveResponse     | 202 ... | 422 ...
 *   POST /v1/results  WriteResultRequest -> 200 WriteResultResponse | 202 ... | 422 ...
 *
 * Every POST is signed by a gateway key the validator trusts (src/protocol/validator-auth.ts). Other answers, all
 * ValidatorErrorResponse: 400 BAD_REQUEST (not JSON, or a field missing or malformed: `field` names it),
 * 401 UNAUTHENTICATED (no, bad or replayed signature, untrusted key, timestamp out of the window), 404 NOT_FOUND,
 * 413 PAYLOAD_TOO_LARGE (with Connection: close), 503 BUSY (too many requests in flight; Retry-After in seconds)
 * and 500 INTERNAL (reason 'internal error' only; the details stay in the validator's log).
 *
 * Long waits are bounded long-polls: a POST is answered within the validator's poll bound (10 s by default). When
 * its work (an observation waiting for confirmations, a result write waiting for the ledger) is not done by then the
 * answer is 202 ValidatorPendingResponse and the work goes on; the client asks again with the same body (a freshly
 * signed request) after `retryAfterMs`, until the answer comes or its own deadline passes.
 */
import type { Address, Hex } from 'viem';
import type { ProofResultRecord } from './result-record.js';

export const VALIDATOR_API = {
  info: '/v1/info',
  health: '/v1/health',
  attest: '/v1/attest',
  observe: '/v1/observe',
  results: '/v1/results',
} as const;

/** A validator's answer when it refuses (422, with its reason code), cannot read the body (400) or fails (500). */
export interface ValidatorErrorResponse {
  ok: false;
  code: string;
  reason: string;
  validatorIndex?: number;
  /** 400: the body field that is missing or malformed (dotted path, e.g. anchor.anchorId) */
  field?: string;
}

/** 202: the request's work is still under way; ask again (same body, newly signed) after `retryAfterMs`. */
export interface ValidatorPendingResponse {
  ok: false;
  kind: 'pending';
  code: 'PENDING';
  reason: string;
  retryAfterMs: number;
  validatorIndex: number;
}

export interface AnchorRef {
  proofAnchor?: Address;
  commitmentRoot: Hex;
  operationId: Hex;
  ledgerTxHash: Hex;
  /** decimal string */
  leafCount: string;
  anchorId: Hex;
}

export interface AttestRequest {
  /** ledger transaction that wrote the intent: acc://<hash>@<data account> */
  intentTxId: string;
  /** chain name or id */
  chain: string;
  anchor: AnchorRef;
}

export interface AuthorityReport {
  keyBook: string;
  keyPage: string;
  keyPageVersion: number;
  threshold: number;
  signatures: number;
  /** how many of `signatures` came through delegate books (one per delegate whose page met its threshold) */
  delegated?: number;
}

export interface AttestResponse {
  ok: true;
  kind: 'attestation';
  validatorIndex: number;
  publicKey: Hex;
  chainId: string;
  anchorId: Hex;
  operationId: Hex;
  validatorSetRoot: Hex;
  message: Hex;
  signature: Hex;
  authority: AuthorityReport;
  legs: string[];
  elapsedMs: number;
}

export interface ObserveRequest {
  intentTxId: string;
  chain: string;
  anchorId: Hex;
  /** leaf index of the leg in the anchor (decimal string or number) */
  leafIndex: string | number;
  executionTxHash: Hex;
}

export interface ObservedResult {
  chainId: string;
  txHash: Hex;
  blockNumber: string;
  blockHash: Hex;
  blockTimestamp: string;
  transactionsRoot: Hex;
  receiptsRoot: Hex;
  stateRoot: Hex;
  status: number;
  txIndex: string;
  gasUsed: string;
  eventsHash: Hex;
  eventCount: number;
  executionCommitment: Hex;
}

export interface ObserveResponse {
  ok: true;
  kind: 'observation';
  validatorIndex: number;
  publicKey: Hex;
  anchorId: Hex;
  leafIndex: string;
  legId: string;
  validatorSetRoot: Hex;
  resultHash: Hex;
  message: Hex;
  signature: Hex;
  result: ObservedResult;
  confirmations: number;
  checks: { callBinding: 'calldata' | 'event'; expectedEvents: number; expectedState: number };
  elapsedMs: number;
}

export interface WriteResultRequest extends ObserveRequest {
  aggregateSignature: Hex;
  /** decimal string */
  signerBitmap: string;
}

export interface WriteResultResponse {
  ok: true;
  kind: 'result-write';
  written: boolean;
  resultId: Hex;
  resultsAccount: string;
  txId: string;
  entryHash?: string;
  record: ProofResultRecord;
}

export interface ValidatorInfo {
  index: number;
  blsPublicKey: Hex;
  proofOfPossession: Hex;
  ed25519PublicKey: Hex;
  keyPage: string;
  resultsAccount: string;
  chains: { name: string; chainId: number }[];
}

/** The attest request for an anchor planned with planIntentAnchor (or formulas.planAnchor). */
export function attestRequestFor(
  intentTxId: string,
  chain: string,
  plan: { anchor: Address; commitmentRoot: Hex; operationId: Hex; ledgerTxHash: Hex; leafCount: bigint; anchorId: Hex },
): AttestRequest {
  return {
    intentTxId,
    chain,
    anchor: {
      proofAnchor: plan.anchor,
      commitmentRoot: plan.commitmentRoot,
      operationId: plan.operationId,
      ledgerTxHash: plan.ledgerTxHash,
      leafCount: plan.leafCount.toString(),
      anchorId: plan.anchorId,
    },
  };
}

/** The observe request for leaf `leafIndex` of an anchor executed by `executionTxHash`. */
export function observeRequestFor(intentTxId: string, chain: string, anchorId: Hex, leafIndex: number | bigint, executionTxHash: Hex): ObserveRequest {
  return { intentTxId, chain, anchorId, leafIndex: leafIndex.toString(), executionTxHash };
}
