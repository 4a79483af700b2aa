/**
 * Every error code the gateway answers with: its HTTP status, what it means, whether repeating the same request can
 * succeed later, and whether the caller can do anything about it. Served as GET /v1/errors; a test scans the source
 * and fails on a code thrown anywhere that is missing here (or listed here and thrown nowhere), and on a status
 * thrown with a code that this catalogue does not give it.
 */

export interface ErrorCodeEntry {
  code: string;
  /** the status the code usually comes with */
  status: number;
  /** every status it can come with, `status` first */
  statuses: number[];
  meaning: string;
  /** repeating the identical request can succeed later (after Retry-After where one is sent) */
  retryable: boolean;
  /** `platform`: nothing the caller can change; `caller`: the request, the key or the account must change */
  audience: 'caller' | 'platform';
}

type Row = [code: string, status: number | number[], meaning: string, opts?: { retryable?: boolean; audience?: 'caller' | 'platform' }];

const RETRY = { retryable: true } as const;
const PLATFORM = { retryable: true, audience: 'platform' } as const;

const ROWS: Row[] = [
  // the request itself
  ['VALIDATION_ERROR', 400, 'An input is invalid; details.field names it (a body that is not JSON: field "body") and the message says why'],
  ['MALFORMED_REQUEST', 400, 'The HTTP request could not be parsed (bad header lines or framing); it never reached the API'],
  ['PAYLOAD_TOO_LARGE', 413, 'The request body is larger than 1 MiB'],
  ['UNSUPPORTED_MEDIA_TYPE', 415, 'The body was not sent as Content-Type: application/json'],
  ['HEADERS_TOO_LARGE', 431, 'The request headers are larger than the server accepts'],
  ['METHOD_NOT_ALLOWED', 405, 'The path exists but does not take this method; the Allow header lists the methods it takes'],
  ['NOT_FOUND', 404, "No such route, or no such resource (webhook endpoint, delivery, event, API key) in the caller's organization"],
  ['HTTP_ERROR', 500, 'A failure raised by the HTTP framework that has no code of its own; the status is the one answered'],
  // authentication and authorization
  ['MISSING_API_KEY', 401, 'No API key: send X-API-Key (or Authorization: Bearer <key>)'],
  ['INVALID_API_KEY_FORMAT', 401, 'The key presented is not ck_live_ followed by 43 base62 characters'],
  ['INVALID_API_KEY', 401, 'No such API key'],
  ['UNSUPPORTED_AUTH_SCHEME', 401, 'The Authorization header uses a scheme other than Bearer, and no X-API-Key was sent'],
  ['CONFLICTING_API_KEYS', 401, 'X-API-Key and Authorization: Bearer carry different keys; send one'],
  ['API_KEY_DEACTIVATED', 403, 'The API key was revoked; revocation is final'],
  [
    'API_KEY_EXPIRED',
    [403, 409],
    'The API key has passed its expires_at (403 on any call made with it; 409 when rotating an expired key, which would inherit the expiry)',
  ],
  ['INSUFFICIENT_SCOPE', 403, 'The key lacks a scope the operation needs; the message names it (GET /v1/scopes lists them)'],
  ['ORG_MISMATCH', 403, "org_id names another organization than the caller's"],
  ['ORG_NOT_FOUND', 403, 'The API key belongs to no organization'],
  [
    'API_KEY_EXCEEDS_CALLER',
    403,
    "Creating or rotating a key beyond the calling key's own bounds: details.bound names scopes (a scope it does not hold), rate_limit_rpm (above its own) or expires_at (later than its own, or never when it expires)",
  ],
  ['API_KEY_LIMIT_REACHED', 403, 'The organization already holds the most active API keys it may; revoke one first'],
  ['RATE_LIMIT_EXCEEDED', 429, "Over the key's (or, without a key, the client address's) requests per minute; wait Retry-After seconds", RETRY],
  // sign-up
  ['SIGNUP_DISABLED', 403, 'Self-service sign-up is turned off on this gateway', { audience: 'platform' }],
  ['SIGNUP_LIMIT_REACHED', 429, 'The gateway accepted its most sign-ups for the hour; retry after Retry-After seconds', RETRY],
  // idempotency
  ['IDEMPOTENCY_KEY_IN_FLIGHT', 409, 'A request with the same Idempotency-Key is still running; retry with the same key after Retry-After', RETRY],
  ['IDEMPOTENCY_KEY_MISMATCH', 422, 'The Idempotency-Key was already used with another request body or path; use a new key'],
  // identities
  ['IDENTITY_NOT_FOUND', 404, "No such identity in the caller's organization"],
  ['IDENTITY_NOT_ACTIVE', 409, 'The identity is not active yet (or any more); wait for provisioning to finish'],
  ['IDENTITY_RETIRED', 409, 'The identity is retired'],
  ['IDENTITY_NO_PUBLIC_KEY', 400, 'The identity was created with only a public_key_hash; supply the key with PATCH /v1/identity/{id}'],
  ['IDENTITY_QUOTA_EXCEEDED', 403, "The organization's identity quota is used up (failed identities count); retire one"],
  [
    'CREDIT_GRANT_EXCEEDED',
    402,
    "More credits were asked for (creating an identity, or POST /v1/identity/{id}/credits) than remain in the organization's credit grant; details.remaining says how many remain",
  ],
  ['PUBLIC_KEY_HASH_MISMATCH', 400, 'public_key does not hash (SHA-256 over the raw 32 bytes) to public_key_hash'],
  ['PUBLIC_KEY_ALREADY_SET', 409, 'The identity already has a different public key'],
  ['NAME_TAKEN', 409, 'The identity name (its ledger ADI) is already taken'],
  ['UNKNOWN_CHAIN', 400, 'A chain name the gateway does not know; the message lists the known ones (GET /v1/chains)'],
  ['CHAIN_UNAVAILABLE', 400, 'The chain has no system contracts deployed yet; no account can be created there'],
  ['CHAIN_NOT_FOUND', 404, 'No such chain in the gateway configuration'],
  // intents and signatures
  ['INTENT_NOT_FOUND', 404, "No such intent in the caller's organization"],
  ['UNSUPPORTED_INTENT', 422, 'The intent is well-formed but asks for something the gateway does not support'],
  ['NO_ACCOUNT_ON_CHAIN', 400, 'The identity has no abstract account on the chain a leg names'],
  ['SIGNER_NOT_ON_PAGE', 400, 'The signing key is not a member of the key page named'],
  [
    'INSUFFICIENT_CREDITS',
    402,
    'The key page has no ledger credits; the ledger would refuse the transaction. Buy some with POST /v1/identity/{id}/credits (key_page_url for a page other than page 1)',
  ],
  ['INSUFFICIENT_BALANCE', 402, "The identity's ledger token account holds less than the transfer's amount; details.balance says how much it holds"],
  [
    'NO_TOKEN_ACCOUNT',
    409,
    "The identity has no ledger token account (provisioned before identities got one); details.token_account names the account to create, with the governance operation create_token_account (POST /v1/governance, signed by the identity's key)",
  ],
  ['INVALID_SIGNATURE', 400, 'The signature does not verify against public_key over hash_to_sign'],
  ['WRONG_SIGNER', 400, 'The signing data was prepared for another key than public_key'],
  ['SIGNATURE_REJECTED', 400, 'The ledger refused the signature, or the signer is no longer valid'],
  [
    'ALREADY_SIGNED',
    409,
    'Already signed by this key (a co-signature: the key had signed the transaction with that vote, details.tx_hash names it; nothing was sent): treat as success and read the resource for its status',
  ],
  ['INTENT_CLOSED', 409, 'The intent takes no signature any more (failed or finished)'],
  ['INTENT_EXPIRED', 409, 'The intent expired before it was signed; prepare a new one'],
  ['SIGNING_DATA_CHANGED', 409, 'The prepared ledger transaction can no longer be rebuilt byte for byte; prepare again'],
  [
    'PROVIDER_POLICY_DENIED',
    403,
    'A prepare for a provider-signing identity is outside its provider_policy; details.rule names the rule (provider_policy when none is set, allowed_chains, allowed_targets, max_value_per_leg, max_value_per_24h), with the leg or chain it concerns',
  ],
  ['PROVIDER_SIGNING_UNAVAILABLE', 400, 'signing_mode provider was asked for, but this gateway has no key-encryption key configured (PROVIDER_KEKS)'],
  [
    'PROVIDER_SIGNING_FAILED',
    503,
    'The gateway could not sign with the key it holds for the identity (its worker lacks the key-encryption key, or is unreachable); retry. A prepare that fails so is closed as failed (details.intent_id) and gives its policy spend back: prepare again',
    PLATFORM,
  ],
  [
    'KEY_SWITCH_IN_PROGRESS',
    409,
    "A provider identity's switch to external signing is already waiting for its governance operation (PATCH public_key); read the identity",
  ],
  ['MNEMONIC_NOT_FOUND', 404, 'No mnemonic at this URL: it was retrieved already, has expired, or never existed (one answer for all)'],
  [
    'SIGNING_DATA_STALE',
    409,
    "The ledger refused the signature's signing data: details.cause is timestamp (the key signed something prepared later; a key's signature timestamps only grow) or key_page_version (the key page changed since it was prepared). The intent, sign request or governance operation stays open: fetch fresh signing data (details.signing_data_url: POST /v1/transaction/{id}/signing-data, /v1/sign/{id}/signing-data or /v1/governance/{id}/signing-data) and sign again",
  ],
  [
    'SIGNATURE_IN_FLIGHT',
    409,
    'A signature (or fresh signing data) for this intent or operation is being prepared or submitted; retry after Retry-After',
    RETRY,
  ],
  ['LEDGER_REFUSED', 400, 'The ledger network refused the transaction; details.ledger_code says why'],
  ['LEDGER_NOT_FOUND', 404, 'The ledger network has no such transaction or account'],
  ['LEDGER_UNAVAILABLE', 502, 'The ledger network did not answer; the request can be retried', PLATFORM],
  // governance and co-signing
  ['GOVERNANCE_NOT_FOUND', 404, "No such governance operation in the caller's organization"],
  ['GOVERNANCE_CLOSED', 409, 'The governance operation takes no signature any more'],
  ['MIXED_OPERATION_KINDS', 400, 'Operations of different kinds cannot be mixed in one request; send one request per kind'],
  ['QUORUM_UNREACHABLE', 400, 'The operation would leave the key page unable to reach its threshold; send force: true to do it anyway'],
  ['SIGN_REQUEST_NOT_FOUND', 404, "No such sign request in the caller's organization"],
  ['SIGN_REQUEST_SPENT', 404, 'The sign request was already used; prepare a new one with POST /v1/sign'],
  ['SIGN_REQUEST_IN_FLIGHT', 409, 'The sign request is being submitted; retry after Retry-After', RETRY],
  ['PENDING_TX_NOT_FOUND', 404, 'No such pending ledger transaction (give the TxID acc://<hash>@<principal>)'],
  ['PENDING_ACTION_NOT_FOUND', 404, 'No such pending action'],
  ['TX_NOT_PENDING', 409, 'The ledger transaction is no longer pending'],
  // proofs
  ['PROOF_NOT_FOUND', 404, "No proof with this id (or for this transaction hash) in the caller's organization"],
  ['TRANSACTION_NOT_FOUND', 404, 'No such transaction on the ledger'],
  ['NOT_DELIVERED', 404, 'The ledger transaction is not delivered; only delivered transactions have a receipt'],
  // webhooks
  ['INVALID_WEBHOOK_URL', 400, 'The webhook URL is not allowed (not http(s), or a private address outside the devnet)'],
  ['INVALID_WEBHOOK_SECRET', 400, 'secret must be whsec_ followed by base64 of 24 to 64 random bytes'],
  ['WEBHOOK_ENDPOINT_LIMIT', 409, 'The organization already has the most webhook endpoints it may'],
  ['CONCURRENT_ROTATION', 409, 'The webhook secret was rotated concurrently; read the endpoint and rotate again if needed'],
  ['ENDPOINT_DISABLED', 409, 'The webhook endpoint is disabled or deleted; re-enable it first'],
  ['REDELIVERY_UNAVAILABLE', 503, 'The redelivery could not be started now; nothing changed, retry later', PLATFORM],
  // the gateway itself
  ['SERVICE_UNAVAILABLE', 503, 'A dependency (the database, Temporal, the ledger) is unavailable; retry after Retry-After', PLATFORM],
  ['INTERNAL_ERROR', 500, 'An unexpected error; the request id (X-Request-Id) finds it in the server log', { audience: 'platform' }],
];

export const ERROR_CATALOGUE: readonly ErrorCodeEntry[] = ROWS.map(([code, status, meaning, opts]) => {
  const statuses = Array.isArray(status) ? status : [status];
  return { code, status: statuses[0], statuses, meaning, retryable: opts?.retryable ?? false, audience: opts?.audience ?? 'caller' };
});
