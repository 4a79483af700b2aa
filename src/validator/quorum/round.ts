/**
 * One quorum round: the request goes to every validator at once; answers are grouped by the message they signed, a
 * group's signatures are verified once it could make a quorum (aggregated: one check for the group, each alone only
 * when that fails), and the round settles on the best verified group, or fails with QuorumUnreachableError.
 */
import type { Hex } from 'viem';
import { blsAggregateSignatures, blsSignatureProblem, blsVerify, blsVerifyAggregate, signerBitmap as toBitmap } from '../../chain/bls.js';
import type { PostResult } from './post.js';
import { type OutcomeStatus, type QuorumResult, type QuorumSet, QuorumUnreachableError, type QuorumValidator, type ValidatorOutcome } from './types.js';

interface Candidate<R> {
  index: number;
  message: Hex;
  signature: Hex;
  response: R;
  verified?: boolean;
}

/** Verifies the unverified candidates of one message; marks each verified true/false. */
function verifyGroup<R>(set: QuorumSet, message: Hex, cands: Candidate<R>[], outcomes: Map<number, ValidatorOutcome>) {
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
  const batchOk =
    pts.length > 1 &&
    blsVerifyAggregate(
      pts.map((c) => c.signature),
      message,
      pts.map((c) => set.pk(c.index)),
    );
  for (const c of pts) {
    const ok = batchOk || blsVerify(c.signature, message, set.pk(c.index));
    c.verified = ok;
    if (!ok)
      Object.assign(outcomes.get(c.index)!, { status: 'failed', code: 'INVALID_SIGNATURE', reason: 'signature does not verify against the validator key' });
    else Object.assign(outcomes.get(c.index)!, { status: 'signed', code: undefined, reason: undefined });
  }
}

export async function runRound<R extends { signature: Hex }>(
  set: QuorumSet,
  post: <T>(v: QuorumValidator, path: string, body: unknown, timeoutMs: number) => Promise<PostResult<T>>,
  path: string,
  body: unknown,
  timeoutMs: number,
  settle: 'all' | 'quorum',
  messageOf: (r: R) => Hex | { error: string },
): Promise<QuorumResult<R>> {
  const { validators, byIndex, power, meets, totalPower, requiredPower } = set;
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
          verifyGroup(set, m as Hex, cs, outcomes);
          verifyMs += performance.now() - tv;
        }
      }
      const b = best();
      const outPower = validators.filter((v) => !answered.has(v.index)).reduce((a, v) => a + power(v), 0n);
      const unverifiedPower = (m: string) =>
        (groups.get(m) ?? []).filter((c) => c.verified === undefined).reduce((a, c) => a + power(byIndex.get(c.index)!), 0n);
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
          for (const [m, cs] of groups) verifyGroup(set, m as Hex, cs, outcomes);
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
