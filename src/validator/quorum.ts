/**
 * Quorum aggregation for the gateway's activities: fan a request out to every validator, verify each BLS
 * signature before it counts, aggregate once the signed power meets the threshold, and report per validator
 * what happened (signed, refused with its reason, failed, timed out).
 *
 *   const q = createQuorumClient({ validators: [{ index, url, publicKey }, ...] });   // default 2/3, power 100 each
 *   const pre = await q.attest(attestRequest, { message: anchorMessage({...}) });     // throws QuorumUnreachableError
 *   await executeComprehensiveProof(w, anchor, { anchorId, signerBitmap: pre.signerBitmap, signature: pre.aggregateSignature });
 *   const post = await q.observe(observeRequest, { chainId, proofAnchor, validatorSetRoot });
 *   const written = await q.writeResult(observeRequest, post);
 *
 * Signature checks are aggregated: the signatures over one message are summed and checked once against the sum of
 * their keys (two pairings, the check ProofAnchor makes; keys carry proofs of possession); when that fails, each
 * signature is verified alone so a bad one is named and dropped. Public keys are checked once, up front.
 */
import type { Address, Hex } from 'viem';
import { blsAggregateSignatures, blsSignatureProblem, blsVerify, blsVerifyAggregate, g2FromEip2537, signerBitmap as toBitmap } from '../chain/bls.js';
import { resultMessage } from '../chain/formulas.js';
import { resetTolerantFetch } from '../net/fetch.js';
import { VALIDATOR_API, type AttestRequest, type AttestResponse, type ObserveRequest, type ObserveResponse, type WriteResultResponse } from '../protocol/validator-wire.js';

export interface QuorumValidator {
  /** position in the on-chain validator set (bit of the signer bitmap) */
  index: number;
  url: string;
  /** EIP-2537 G2 public key as registered on chain */
  publicKey: Hex;
  /** default 100 */
  power?: bigint;
}

export type OutcomeStatus = 'signed' | 'refused' | 'failed' | 'timed-out' | 'pending';

export interface ValidatorOutcome {
  index: number;
  url: string;
  status: OutcomeStatus;
  /** refusal code from the validator, or INVALID_SIGNATURE / WRONG_MESSAGE / HTTP_<n> / NETWORK */
  code?: string;
  reason?: string;
  elapsedMs?: number;
}

export interface QuorumResult<R> {
  message: Hex;
  aggregateSignature: Hex;
  signerBitmap: bigint;
  signers: number[];
  signedPower: bigint;
  totalPower: bigint;
  outcomes: ValidatorOutcome[];
  /** the responses whose signatures were aggregated, by validator index */
  responses: Map<number, R>;
  elapsedMs: number;
  /** time spent verifying signatures (BLS) in this round */
  verifyMs: number;
}

/** What a result write needs of a post-execution round: who signed and their aggregate. */
export type QuorumAggregate = Pick<QuorumResult<unknown>, 'signers' | 'aggregateSignature' | 'signerBitmap'>;

export class QuorumUnreachableError extends Error {
  constructor(
    readonly outcomes: ValidatorOutcome[],
    readonly signedPower: bigint,
    readonly requiredPower: bigint,
  ) {
    super(
      `quorum unreachable: ${signedPower} of ${requiredPower} required power signed; ` +
        outcomes.filter((o) => o.status !== 'signed').map((o) => `validator ${o.index} ${o.status}${o.reason ? ` (${o.reason})` : ''}`).join('; '),
    );
    this.name = 'QuorumUnreachableError';
  }
}

export interface QuorumClientOptions {
  validators: readonly QuorumValidator[];
  thresholdNum?: bigint;
  thresholdDen?: bigint;
  /** per-request timeout for attest; default 10 s */
  attestTimeoutMs?: number;
  /** per-request timeout for observe (validators wait for confirmations); default 120 s */
  observeTimeoutMs?: number;
  /** per-request timeout for a result write; default 90 s */
  writeTimeoutMs?: number;
  /**
   * 'all' (default): wait for every validator (or its timeout) and report each;
   * 'quorum': resolve as soon as a verified quorum is in (the rest are reported 'pending').
   */
  settle?: 'all' | 'quorum';
  fetch?: typeof fetch;
}

interface Candidate<R> {
  index: number;
  message: Hex;
  signature: Hex;
  response: R;
  verified?: boolean;
}

export interface QuorumClient {
  readonly validators: readonly QuorumValidator[];
  /** pre-execution attestations over `expect.message` (formulas.anchorMessage computed by the caller) */
  attest(req: AttestRequest, expect: { message: Hex }, opts?: { settle?: 'all' | 'quorum' }): Promise<QuorumResult<AttestResponse>>;
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
  const validators = [...opts.validators].sort((a, b) => a.index - b.index);
  if (new Set(validators.map((v) => v.index)).size !== validators.length) throw new Error('duplicate validator index');
  const num = opts.thresholdNum ?? 2n;
  const den = opts.thresholdDen ?? 3n;
  const power = (v: QuorumValidator) => v.power ?? 100n;
  const totalPower = validators.reduce((a, v) => a + power(v), 0n);
  const byIndex = new Map(validators.map((v) => [v.index, v]));
  const doFetch = opts.fetch ?? resetTolerantFetch;
  const pk = (i: number): Hex => byIndex.get(i)!.publicKey;
  // decode (and subgroup-check) every key once, up front: a bad registered key fails here, not mid-round
  for (const v of validators) g2FromEip2537(v.publicKey);
  const meets = (signed: bigint) => signed > 0n && signed * den >= totalPower * num;
  const requiredPower = (totalPower * num + den - 1n) / den;

  async function post<T>(v: QuorumValidator, path: string, body: unknown, timeoutMs: number): Promise<{ ok: true; data: T } | { ok: false; outcome: Omit<ValidatorOutcome, 'index' | 'url'> }> {
    const t0 = performance.now();
    try {
      const res = await doFetch(`${v.url.replace(/\/$/, '')}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      let data: Record<string, unknown> | null;
      try {
        data = JSON.parse(text);
      } catch {
        return { ok: false, outcome: { status: 'failed', code: `HTTP_${res.status}`, reason: `not JSON: ${text.slice(0, 120)}`, elapsedMs: Math.round(performance.now() - t0) } };
      }
      if (res.status === 422 && data?.ok === false) {
        return { ok: false, outcome: { status: 'refused', code: String(data.code), reason: String(data.reason), elapsedMs: Math.round(performance.now() - t0) } };
      }
      if (!res.ok || data?.ok !== true) {
        return { ok: false, outcome: { status: 'failed', code: (data?.code as string | undefined) ?? `HTTP_${res.status}`, reason: String(data?.reason ?? `HTTP ${res.status}`), elapsedMs: Math.round(performance.now() - t0) } };
      }
      return { ok: true, data: data as T };
    } catch (e) {
      const err = e as Error;
      const timedOut = err.name === 'TimeoutError' || err.name === 'AbortError';
      return {
        ok: false,
        outcome: {
          status: timedOut ? 'timed-out' : 'failed',
          code: timedOut ? 'TIMEOUT' : 'NETWORK',
          reason: timedOut ? `no answer within ${timeoutMs} ms` : `${err.message}${(err as { cause?: { code?: string } }).cause?.code ? ` (${(err as { cause?: { code?: string } }).cause!.code})` : ''}`,
          elapsedMs: Math.round(performance.now() - t0),
        },
      };
    }
  }

  /** Verifies the unverified candidates of one message; marks each verified true/false. */
  function verifyGroup<R>(message: Hex, cands: Candidate<R>[], outcomes: Map<number, ValidatorOutcome>) {
    const unverified = cands.filter((c) => c.verified === undefined);
    if (!unverified.length) return;
    const pts: Candidate<R>[] = [];
    for (const c of unverified) {
      const problem = blsSignatureProblem(c.signature);
      if (problem === undefined) pts.push(c);
      else {
        c.verified = false;
        Object.assign(outcomes.get(c.index)!, { status: 'failed', code: 'INVALID_SIGNATURE', reason: `malformed signature: ${problem}` });
      }
    }
    if (!pts.length) return;
    // One check of the plain aggregate, e(Σσ_i, g2) = e(H(m), Σpk_i): two pairings whatever the count, and exactly
    // what ProofAnchor verifies. Sound as a multi-signature because every key was registered with a proof of
    // possession (no rogue keys). Only when it fails is each signature checked alone, to name and drop the bad one.
    const batchOk = pts.length > 1 && blsVerifyAggregate(pts.map((c) => c.signature), message, pts.map((c) => pk(c.index)));
    for (const c of pts) {
      const ok = batchOk || blsVerify(c.signature, message, pk(c.index));
      c.verified = ok;
      if (!ok) Object.assign(outcomes.get(c.index)!, { status: 'failed', code: 'INVALID_SIGNATURE', reason: 'signature does not verify against the validator key' });
      else Object.assign(outcomes.get(c.index)!, { status: 'signed', code: undefined, reason: undefined });
    }
  }

  async function round<R extends { signature: Hex }>(
    path: string,
    body: unknown,
    timeoutMs: number,
    settle: 'all' | 'quorum',
    messageOf: (r: R) => Hex | { error: string },
  ): Promise<QuorumResult<R>> {
    const t0 = performance.now();
    const outcomes = new Map<number, ValidatorOutcome>(validators.map((v) => [v.index, { index: v.index, url: v.url, status: 'pending' as OutcomeStatus }]));
    const groups = new Map<string, Candidate<R>[]>();
    let outstanding = validators.length;
    let verifyMs = 0;
    const answered = new Set<number>();
    const snapshot = () => [...outcomes.values()].map((o) => ({ ...o }));

    const best = (): { message: Hex; signed: Candidate<R>[]; power: bigint } | undefined => {
      let out: { message: Hex; signed: Candidate<R>[]; power: bigint } | undefined;
      for (const [m, cs] of groups) {
        const signed = cs.filter((c) => c.verified === true);
        const p = signed.reduce((a, c) => a + power(byIndex.get(c.index)!), 0n);
        if (!out || p > out.power) out = { message: m as Hex, signed, power: p };
      }
      return out;
    };

    return new Promise((resolve, reject) => {
      let finished = false;
      const finish = () => {
        if (finished) return;
        const all = outstanding === 0;
        // verify a group only once it could make quorum (or at the end)
        for (const [m, cs] of groups) {
          const potential = cs.filter((c) => c.verified !== false).reduce((a, c) => a + power(byIndex.get(c.index)!), 0n);
          if (all || (settle === 'quorum' && meets(potential))) {
            const tv = performance.now();
            verifyGroup(m as Hex, cs, outcomes);
            verifyMs += performance.now() - tv;
          }
        }
        const b = best();
        const outPower = validators.filter((v) => !answered.has(v.index)).reduce((a, v) => a + power(v), 0n);
        const unverifiedPower = (m: string) => (groups.get(m) ?? []).filter((c) => c.verified === undefined).reduce((a, c) => a + power(byIndex.get(c.index)!), 0n);
        if (b && meets(b.power) && (settle === 'quorum' || all)) {
          finished = true;
          const signers = b.signed.map((c) => c.index).sort((x, y) => x - y);
          resolve({
            message: b.message,
            aggregateSignature: blsAggregateSignatures(b.signed.map((c) => c.signature)),
            signerBitmap: toBitmap(signers),
            signers,
            signedPower: b.power,
            totalPower,
            outcomes: snapshot(),
            responses: new Map(b.signed.map((c) => [c.index, c.response])),
            elapsedMs: Math.round(performance.now() - t0),
            verifyMs: Math.round(verifyMs),
          });
          return;
        }
        const reachable = [...groups.keys()].some((m) => {
          const g = groups.get(m)!;
          const p = g.filter((c) => c.verified === true).reduce((a, c) => a + power(byIndex.get(c.index)!), 0n);
          return meets(p + unverifiedPower(m) + outPower);
        });
        if (all || (settle === 'quorum' && !reachable && !meets(outPower))) {
          if (!all) {
            // nothing outstanding can make a quorum anymore: settle the unverified now for the report
            for (const [m, cs] of groups) verifyGroup(m as Hex, cs, outcomes);
            const b2 = best();
            if (b2 && meets(b2.power)) return finish();
          }
          finished = true;
          reject(new QuorumUnreachableError(snapshot(), best()?.power ?? 0n, requiredPower));
        }
      };
      for (const v of validators) {
        post<R>(v, path, body, timeoutMs)
          .then((r) => {
            const o = outcomes.get(v.index)!;
            if (!r.ok) Object.assign(o, r.outcome);
            else {
              o.elapsedMs = Math.round(performance.now() - t0);
              const m = messageOf(r.data);
              if (typeof m !== 'string') Object.assign(o, { status: 'failed', code: 'WRONG_MESSAGE', reason: m.error });
              else if (typeof r.data.signature !== 'string') Object.assign(o, { status: 'failed', code: 'INVALID_SIGNATURE', reason: 'no signature' });
              else {
                const key = m.toLowerCase();
                const list = groups.get(key) ?? [];
                list.push({ index: v.index, message: key as Hex, signature: r.data.signature, response: r.data });
                groups.set(key, list);
                o.status = 'pending';
                o.code = 'UNVERIFIED';
              }
            }
          })
          .catch((e) => Object.assign(outcomes.get(v.index)!, { status: 'failed', code: 'INTERNAL', reason: (e as Error).message }))
          .finally(() => {
            outstanding--;
            answered.add(v.index);
            try {
              finish();
            } catch (e) {
              if (!finished) {
                finished = true;
                reject(e);
              }
            }
          });
      }
    });
  }

  return {
    validators,
    attest(req, expect, o) {
      const want = expect.message.toLowerCase();
      return round<AttestResponse>(VALIDATOR_API.attest, req, opts.attestTimeoutMs ?? 10_000, o?.settle ?? opts.settle ?? 'all', (r) =>
        typeof r.message === 'string' && r.message.toLowerCase() === want ? want as Hex : { error: `signed message ${String(r.message)} is not the expected ${want}` },
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
        if (typeof r.message === 'string' && r.message.toLowerCase() !== m.toLowerCase()) return { error: 'signed message is not the result message of its result hash' };
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
