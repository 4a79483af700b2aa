/**
 * One validator node. It holds its own keys and talks to its own ledger and chain endpoints; from a caller it
 * takes references only (ledger tx id, chain, anchor fields, execution tx hash) and recomputes everything
 * else itself, refusing with a reason (ValidatorRefusal) when anything does not hold.
 *
 *   attest   pre-execution: intent tx executed under the identity's book with a page's threshold met,
 *            intent recomputed from the stored bytes, legs of the chain, created_at not beyond now + CLOCK_SKEW_S,
 *            not expired, no conflicting anchor for the operation id (in this node's store, and none proven on
 *            chain since created_at) -> BLS signature over formulas.anchorMessage
 *   observe  post-execution: receipt + block read and proven (header hash, transactions and receipts tries),
 *            confirmations waited, status 1, the executed call is the committed one, expectedEvents from
 *            proven logs, expectedState by eth_getProof -> BLS signature over formulas.resultMessage
 *   writeResult  on a post-execution quorum (aggregate checked here): proof_result v2 to the protocol ADI's
 *            execution-results data account, once per (anchor, leaf)
 *
 * Each of the three is a factory over one shared node context (context.ts): attest.ts, observe.ts, result-write.ts.
 */
import type {
  AttestBatchRequest,
  AttestBatchResponse,
  ValidatorInfo,
  AttestRequest,
  AttestResponse,
  ObserveRequest,
  ObserveResponse,
  WriteResultRequest,
  WriteResultResponse,
} from '../protocol/validator-wire.js';
import { createAttestation } from './attest.js';
import { createBatchAttestation, createBatchPlanning } from './batch.js';
import { createNodeContext, type ValidatorNodeOptions } from './context.js';
import { createObservation } from './observe.js';
import { createResultWriter } from './result-write.js';

export { CLOCK_SKEW_S } from './attest.js';
export type { ValidatorNodeOptions } from './context.js';
export { ValidatorRefusal } from './refusal.js';

export interface ValidatorNode {
  readonly index: number;
  info(): ValidatorInfo;
  attest(req: AttestRequest): Promise<AttestResponse>;
  /** a batch anchor: every member checked, the batch recomputed, signed only when all pass (batch.ts) */
  attestBatch(req: AttestBatchRequest): Promise<AttestBatchResponse>;
  observe(req: ObserveRequest): Promise<ObserveResponse>;
  writeResult(req: WriteResultRequest): Promise<WriteResultResponse>;
  /** Closes the node's store file (stopping it): recording an attestation or a result afterwards fails. */
  close(): void;
}

export function createValidatorNode(opts: ValidatorNodeOptions): ValidatorNode {
  const ctx = createNodeContext(opts);
  const { keys, index, store } = ctx;
  const attest = createAttestation(ctx);
  const batches = createBatchPlanning(ctx);
  const attestBatch = createBatchAttestation(ctx, batches);
  const observation = createObservation(ctx, batches);
  const writeResult = createResultWriter(ctx, observation, batches);
  // identical requests arriving while one is being answered share its answer (a gateway retrying a slow round)
  const inflight = new Map<string, Promise<unknown>>();
  const shared =
    <Q, R>(kind: string, fn: (req: Q) => Promise<R>) =>
    (req: Q): Promise<R> => {
      const key = `${kind}:${JSON.stringify(req)}`;
      let p = inflight.get(key) as Promise<R> | undefined;
      if (!p) {
        p = fn(req).finally(() => inflight.delete(key));
        inflight.set(key, p);
      }
      return p;
    };

  return {
    index,
    info: () => ({
      index,
      blsPublicKey: keys.bls.publicKey,
      proofOfPossession: keys.bls.proofOfPossession,
      ed25519PublicKey: keys.ed25519.publicKey,
      keyPage: opts.protocol.keyPage,
      resultsAccount: opts.protocol.resultsAccount,
      chains: opts.chains.map((c) => ({ name: c.name, chainId: c.chainId })),
    }),
    attest: shared('attest', attest),
    attestBatch: shared('attest-batch', attestBatch),
    observe: shared('observe', observation.observe),
    close: () => store.close(),
    writeResult,
  };
}
