/**
 * Failure types of the proof cycle's activities that no retry can fix, one per condition (shared by the activities
 * that throw them and the workflows that must not retry them; a plain constant, safe in the workflow sandbox).
 */
export const NON_RETRYABLE_INTENT_ERRORS = [
  /** the client's signature does not verify over the hash_to_sign the workflow holds (checked before submitting) */
  'InvalidSignature',
  /** the ledger refused the client's signature, or the signer is no longer valid */
  'SignatureRejected',
  /** the prepared ledger transaction could not be rebuilt byte for byte */
  'SigningDataChanged',
  /** validators refused to attest for good: too little power is left for a quorum */
  'AttestationRefused',
  /** validators refused to confirm the execution's effects for good */
  'ObservationRefused',
  /** the account reverted a leg's call */
  'ExecutionReverted',
  /** the account cannot pay what the legs send */
  'InsufficientFunds',
  /** the chain is unknown, has no system contracts, or fewer validator URLs than registered validators */
  'ChainNotConfigured',
  /** no intent with this id */
  'IntentNotFound',
  /** a step after the signature on an intent whose signature never reached the ledger */
  'IntentNotSubmitted',
  /** a leg id that is not among the intent's legs on this chain */
  'LegNotOnChain',
  /** proving the anchor before an attestation was recorded */
  'AttestationMissing',
  /** observing a leg before its execution was recorded */
  'LegNotExecuted',
  /** recording a leg's result before its observation was recorded */
  'LegNotObserved',
] as const;
export type IntentFailure = (typeof NON_RETRYABLE_INTENT_ERRORS)[number];

/**
 * Failure types of identity provisioning's ledger steps that no retry can fix: the name is taken, the sponsor or the
 * page lacks credits or funds, the key page changed under us, the client's key is the sponsor's.
 */
export const NON_RETRYABLE_LEDGER_ERRORS = [
  'NameTaken',
  'SponsorOutOfCredits',
  'SponsorOutOfFunds',
  'PageOutOfCredits',
  'KeyPageChanged',
  'ClientKeyIsSponsor',
] as const;

/** Failure types of the chain steps that no retry can fix: a chain that is not (or not consistently) configured. */
export const NON_RETRYABLE_CHAIN_ERRORS = ['ChainNotConfigured'] as const;

/** Update rejections of POST /v1/transaction/{id}/signature and the HTTP status each maps to. */
export const SIGNATURE_REJECTIONS = {
  InvalidInput: 400,
  WrongSigner: 400,
  InvalidSignature: 400,
  SignatureRejected: 400,
  AlreadySigned: 409,
  IntentClosed: 409,
  IntentExpired: 409,
  SigningDataChanged: 409,
  /** the ledger refused the signature's timestamp or key page version: fetch fresh signing data and sign again */
  SigningDataStale: 409,
  /** fresh signing data is being prepared: sign what it answers */
  SignatureInFlight: 409,
  LedgerUnavailable: 502,
} as const;
export type SignatureRejection = keyof typeof SIGNATURE_REJECTIONS;

/** The error of an intent that expired unsigned (its workflow's, or the expiry sweep's). */
export const EXPIRED_UNSIGNED = 'expired: no valid signature arrived before expires_at';
