/**
 * Quorum aggregation for the gateway's activities: fan a request out to every validator, verify each BLS
 * signature before it counts, aggregate once the signed power meets the threshold, and report per validator
 * what happened (signed, refused with its reason, failed, timed out).
 *
 *   const q = createQuorumClient({ validators: [{ index, url, publicKey }, ...], clientKey });   // default 2/3, power 100 each
 *   const pre = await q.attest(attestRequest, { message: anchorMessage({...}) });     // throws QuorumUnreachableError
 *   await executeComprehensiveProof(w, anchor, { anchorId, signerBitmap: pre.signerBitmap, signature: pre.aggregateSignature });
 *   const post = await q.observe(observeRequest, { chainId, proofAnchor, validatorSetRoot });
 *   const written = await q.writeResult(observeRequest, post);
 *
 * Signature checks are aggregated: the signatures over one message are summed and checked once against the sum of
 * their keys (two pairings, the check ProofAnchor makes; keys carry proofs of possession); when that fails, each
 * signature is verified alone so a bad one is named and dropped. Public keys are checked once, up front.
 *
 * Every request is signed with the gateway's key (`clientKey`, the hex seed of VALIDATOR_CLIENT_KEY), which the
 * validators must trust; a validator answers within its poll bound, and a request still under way there is asked
 * again until the per-request timeouts below (each the overall deadline of its round).
 *
 * quorum/types.ts holds the set's arithmetic and the outcome types, quorum/post.ts one request to one validator,
 * quorum/round.ts one round over all of them.
 */
import type { Address, Hex } from 'viem';
import { g2FromEip2537 } from '../chain/bls.js';
import { resultMessage } from '../chain/formulas.js';
import { httpFetch } from '../net/fetch.js';
import { gatewayKeyFromSeed } from '../protocol/validator-auth.js';
import {
  VALIDATOR_API,
  type AttestBatchRequest,
  type AttestBatchResponse,
  type AttestRequest,
  type AttestResponse,
  type ObserveRequest,
  type ObserveResponse,
  type WriteResultResponse,
} from '../protocol/validator-wire.js';
import { postToValidator } from './quorum/post.js';
import { runRound } from './quorum/round.js';
import { createQuorumSet, type QuorumAggregate, type QuorumResult, type QuorumValidator, type ValidatorOutcome } from './quorum/types.js';

export { QuorumUnreachableError } from './quorum/types.js';
export type { OutcomeStatus, QuorumAggregate, QuorumResult, QuorumValidator, ValidatorOutcome } from './quorum/types.js';

export interface QuorumClientOptions {
  validators: readonly QuorumValidator[];
  /** the gateway's Ed25519 seed (hex) its requests are signed with; the validators trust its public key */
  clientKey: string;
  thresholdNum?: bigint;
  thresholdDen?: bigint;
  /** overall deadline of an attest request (polls renewed until then); default 10 s */
  attestTimeoutMs?: number;
  /** overall deadline of an observe request (validators wait for confirmations); default 120 s */
  observeTimeoutMs?: number;
  /** overall deadline of a result write; default 90 s */
  writeTimeoutMs?: number;
  /**
   * 'all' (default): wait for every validator (or its timeout) and report each;
   * 'quorum': resolve as soon as a verified quorum is in (the rest are reported 'pending').
   */
  settle?: 'all' | 'quorum';
  fetch?: typeof fetch;
}

export interface QuorumClient {
  readonly validators: readonly QuorumValidator[];
  /** pre-execution attestations over `expect.message` (formulas.anchorMessage computed by the caller) */
  attest(req: AttestRequest, expect: { message: Hex }, opts?: { settle?: 'all' | 'quorum' }): Promise<QuorumResult<AttestResponse>>;
  /** pre-execution attestations of a batch anchor over `expect.message` (its anchorMessage); same rules as attest */
  attestBatch(req: AttestBatchRequest, expect: { message: Hex }, opts?: { settle?: 'all' | 'quorum' }): Promise<QuorumResult<AttestBatchResponse>>;
  /** post-execution observations; each response's result message is recomputed from its resultHash */
  observe(
    req: ObserveRequest,
    expect: { chainId: bigint; proofAnchor: Address; validatorSetRoot: Hex },
    opts?: { settle?: 'all' | 'quorum' },
  ): Promise<QuorumResult<ObserveResponse> & { resultHash: Hex }>;
  /**
   * Asks the designated signer (chosen by the anchor id among the signers) to write the proof_result record;
   * on failure the next signer. Idempotent on the validators' side.
   */
  writeResult(req: ObserveRequest, post: QuorumAggregate): Promise<WriteResultResponse & { writtenBy: number; attempts: ValidatorOutcome[] }>;
}

export function createQuorumClient(opts: QuorumClientOptions): QuorumClient {
  const set = createQuorumSet(opts.validators, opts.thresholdNum ?? 2n, opts.thresholdDen ?? 3n);
  const { validators, byIndex } = set;
  const doFetch = opts.fetch ?? httpFetch;
  const key = gatewayKeyFromSeed(opts.clientKey);
  // decode (and subgroup-check) every key once, up front: a bad registered key fails here, not mid-round
  for (const v of validators) g2FromEip2537(v.publicKey);
  const post = <T>(v: QuorumValidator, path: string, body: unknown, timeoutMs: number) => postToValidator<T>(doFetch, key, v, path, body, timeoutMs);
  const round = <R extends { signature: Hex }>(
    path: string,
    body: unknown,
    timeoutMs: number,
    settle: 'all' | 'quorum',
    messageOf: (r: R) => Hex | { error: string },
  ) => runRound<R>(set, post, path, body, timeoutMs, settle, messageOf);

  return {
    validators,
    attest(req, expect, o) {
      const want = expect.message.toLowerCase();
      return round<AttestResponse>(VALIDATOR_API.attest, req, opts.attestTimeoutMs ?? 10_000, o?.settle ?? opts.settle ?? 'all', (r) =>
        typeof r.message === 'string' && r.message.toLowerCase() === want
          ? (want as Hex)
          : { error: `signed message ${String(r.message)} is not the expected ${want}` },
      );
    },
    attestBatch(req, expect, o) {
      const want = expect.message.toLowerCase();
      return round<AttestBatchResponse>(VALIDATOR_API.attestBatch, req, opts.attestTimeoutMs ?? 10_000, o?.settle ?? opts.settle ?? 'all', (r) =>
        typeof r.message === 'string' && r.message.toLowerCase() === want
          ? (want as Hex)
          : { error: `signed message ${String(r.message)} is not the expected ${want}` },
      );
    },
    async observe(req, expect, o) {
      const res = await round<ObserveResponse>(VALIDATOR_API.observe, req, opts.observeTimeoutMs ?? 120_000, o?.settle ?? opts.settle ?? 'all', (r) => {
        if (typeof r.resultHash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(r.resultHash)) return { error: 'no result hash' };
        const m = resultMessage({
          chainId: expect.chainId,
          anchor: expect.proofAnchor,
          anchorId: req.anchorId,
          leafIndex: BigInt(req.leafIndex),
          resultHash: r.resultHash,
          validatorSetRoot: expect.validatorSetRoot,
        });
        if (typeof r.message === 'string' && r.message.toLowerCase() !== m.toLowerCase())
          return { error: 'signed message is not the result message of its result hash' };
        return m.toLowerCase() as Hex;
      });
      const first = res.responses.values().next().value as ObserveResponse;
      return { ...res, resultHash: first.resultHash };
    },
    async writeResult(req, postQ) {
      const signers = postQ.signers;
      if (!signers.length) throw new Error('no signers');
      const start = Number(BigInt(req.anchorId) % BigInt(signers.length));
      const order = [...signers.slice(start), ...signers.slice(0, start)];
      const attempts: ValidatorOutcome[] = [];
      const body = { ...req, aggregateSignature: postQ.aggregateSignature, signerBitmap: postQ.signerBitmap.toString() };
      for (const i of order) {
        const v = byIndex.get(i)!;
        const r = await post<WriteResultResponse>(v, VALIDATOR_API.results, body, opts.writeTimeoutMs ?? 90_000);
        if (r.ok) return { ...r.data, writtenBy: i, attempts };
        attempts.push({ index: i, url: v.url, ...r.outcome });
      }
      throw new Error(`no validator wrote the result: ${attempts.map((a) => `${a.index} ${a.status} ${a.reason ?? ''}`).join('; ')}`);
    },
  };
}
