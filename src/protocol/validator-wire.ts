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
 *   POST /v1/attest-batch AttestBatchRequest -> 200 AttestBatchResponse | 202 ... | 422 ... (`members`: each refused one)
 *
 * A batch anchor (the `batched` proof class, src/protocol/intent/batch.ts) holds the legs of several intents: the
 * validator checks every member as it checks one intent and signs the batch's anchor only when all pass; otherwise
 * its 422 BATCH_MEMBER_REFUSED names each refused member with its code and reason. Observations and result writes
 * of a member's leg name the batch (`batch.members`), its anchor id and the leg's leaf in the batch.
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
  attestBatch: '/v1/attest-batch',
} as const;

/** One member of a batch the validator refused, and why (the code and reason of a refusal of that intent alone). */
export interface MemberRefusal {
  intentTxId: string;
  code: string;
  reason: string;
}

/** A validator's answer when it refuses (422, with its reason code), cannot read the body (400) or fails (500). */
export interface ValidatorErrorResponse {
  ok: false;
  code: string;
  reason: string;
  validatorIndex?: number;
  /** 400: the body field that is missing or malformed (dotted path, e.g. anchor.anchorId) */
  field?: string;
  /** 422 BATCH_MEMBER_REFUSED: the members of the batch that were refused */
  members?: MemberRefusal[];
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

/** The members of a batch anchor: their intents' ledger transactions, in batch order. */
export interface BatchRef {
  members: string[];
}

export interface AttestBatchRequest {
  chain: string;
  batch: BatchRef;
  anchor: AnchorRef;
}

export interface AttestBatchResponse extends Omit<AttestResponse, 'kind' | 'authority' | 'legs'> {
  kind: 'batch-attestation';
  /** per member in batch order: its operation id, authority and legs */
  members: { intentTxId: string; operationId: Hex; authority: AuthorityReport; legs: string[] }[];
}

export interface ObserveRequest {
  intentTxId: string;
  chain: string;
  /** the batch the leg's anchor holds (a batched intent's leg); absent: the intent's own anchor */
  batch?: BatchRef;
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

/** The observe request for leaf `leafIndex` of an anchor executed by `executionTxHash` (of a batch: `batch`). */
export function observeRequestFor(
  intentTxId: string,
  chain: string,
  anchorId: Hex,
  leafIndex: number | bigint,
  executionTxHash: Hex,
  batch?: BatchRef,
): ObserveRequest {
  return { intentTxId, chain, ...(batch ? { batch } : {}), anchorId, leafIndex: leafIndex.toString(), executionTxHash };
}

/** The attest request for a batch anchor over `members` (their intents' ledger tx ids, in batch order). */
export function attestBatchRequestFor(
  members: readonly string[],
  chain: string,
  plan: { anchor: Address; commitmentRoot: Hex; operationId: Hex; ledgerTxHash: Hex; leafCount: bigint; anchorId: Hex },
): AttestBatchRequest {
  const { anchor } = attestRequestFor('', chain, plan);
  return { chain, batch: { members: [...members] }, anchor };
}
