/**
 * Failure types of the proof cycle's activities that no retry can fix (shared by the activities that throw them and
 * the workflows that must not retry them; a plain constant, safe in the workflow sandbox).
 */
export const NON_RETRYABLE_INTENT_ERRORS = [
  'SignatureRejected',
  'SigningDataChanged',
  'AttestationRefused',
  'ObservationRefused',
  'ExecutionReverted',
  'InsufficientFunds',
  'ChainNotConfigured',
  'IntentNotFound',
];

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
  LedgerUnavailable: 502,
} as const;
export type SignatureRejection = keyof typeof SIGNATURE_REJECTIONS;
