/** The quorum client's vocabulary: the validators it asks, what each answered, a round's result, and the set's arithmetic. */
import type { Hex } from 'viem';
import type { MemberRefusal } from '../../protocol/validator-wire.js';

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
  /** a refused batch (BATCH_MEMBER_REFUSED): the members this validator refused, with their codes and reasons */
  members?: MemberRefusal[];
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
        outcomes
          .filter((o) => o.status !== 'signed')
          .map((o) => `validator ${o.index} ${o.status}${o.reason ? ` (${o.reason})` : ''}`)
          .join('; '),
    );
    this.name = 'QuorumUnreachableError';
  }
}

/** The validators of a quorum with their powers, and the threshold arithmetic over them. */
export interface QuorumSet {
  /** ascending by index */
  readonly validators: readonly QuorumValidator[];
  readonly byIndex: ReadonlyMap<number, QuorumValidator>;
  power(v: QuorumValidator): bigint;
  readonly totalPower: bigint;
  /** the least signed power that meets the threshold */
  readonly requiredPower: bigint;
  meets(signed: bigint): boolean;
  /** the registered public key of validator `i` */
  pk(i: number): Hex;
}

export function createQuorumSet(list: readonly QuorumValidator[], num: bigint, den: bigint): QuorumSet {
  const validators = [...list].sort((a, b) => a.index - b.index);
  if (new Set(validators.map((v) => v.index)).size !== validators.length) throw new Error('duplicate validator index');
  const power = (v: QuorumValidator) => v.power ?? 100n;
  const totalPower = validators.reduce((a, v) => a + power(v), 0n);
  const byIndex = new Map(validators.map((v) => [v.index, v]));
  const pk = (i: number): Hex => byIndex.get(i)!.publicKey;
  const meets = (signed: bigint) => signed > 0n && signed * den >= totalPower * num;
  const requiredPower = (totalPower * num + den - 1n) / den;
  return { validators, byIndex, power, totalPower, requiredPower, meets, pk };
}
