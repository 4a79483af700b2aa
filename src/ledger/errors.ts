/**
 * Typed ledger errors. Status numbers and labels follow the Accumulate v3 API
 * (errors.Status in accumulate.js; JSON-RPC code = -33000 - status).
 */
export const STATUS = {
  ok: 200,
  delivered: 201,
  pending: 202,
  remote: 203,
  badRequest: 400,
  unauthenticated: 401,
  insufficientCredits: 402,
  unauthorized: 403,
  notFound: 404,
  notAllowed: 405,
  rejected: 406,
  expired: 407,
  conflict: 409,
  badSignerVersion: 411,
  badTimestamp: 412,
  badUrlLength: 413,
  insufficientBalance: 415,
  internalError: 500,
  unknownError: 501,
} as const;
export type StatusLabel = keyof typeof STATUS;

export const JSONRPC_PROTOCOL_BASE = -33000;

export function statusLabel(n: number): StatusLabel | undefined {
  for (const [k, v] of Object.entries(STATUS)) if (v === n) return k as StatusLabel;
  return undefined;
}

/** Base class of every error thrown by src/ledger. */
export class LedgerError extends Error {
  constructor(
    message: string,
    /** Accumulate status label, e.g. "notFound", "badTimestamp". */
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LedgerError';
  }
}

/** Caller passed something malformed (bad URL, wrong key length, bad hex...). Nothing was sent. */
export class LedgerInputError extends LedgerError {
  constructor(
    message: string,
    /** Which input was wrong, e.g. "url", "publicKey", "signature". */
    readonly field: string,
  ) {
    super(message, 'badRequest');
    this.name = 'LedgerInputError';
  }
}

/** The node answered with a JSON-RPC error (protocol errors carry an Accumulate status). */
export class LedgerRpcError extends LedgerError {
  constructor(
    message: string,
    code: string,
    readonly rpcCode: number,
    readonly data?: unknown,
  ) {
    super(message, code);
    this.name = 'LedgerRpcError';
  }
  get status(): number | undefined {
    return this.rpcCode <= JSONRPC_PROTOCOL_BASE ? JSONRPC_PROTOCOL_BASE - this.rpcCode : undefined;
  }
}

/** The node was unreachable or answered with something that is not JSON-RPC (transient). */
export class LedgerTransportError extends LedgerError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'transport', options);
    this.name = 'LedgerTransportError';
  }
}

/** A submission was refused for at least one message (signature or transaction). */
export class LedgerSubmitError extends LedgerError {
  constructor(
    message: string,
    code: string,
    readonly submissions: unknown[],
  ) {
    super(message, code);
    this.name = 'LedgerSubmitError';
  }
}

/** A transaction finished in a failed state (rejected, expired, insufficientCredits...). */
export class LedgerTxFailedError extends LedgerError {
  constructor(
    message: string,
    code: string,
    readonly txId: string,
  ) {
    super(message, code);
    this.name = 'LedgerTxFailedError';
  }
}

export function isNotFound(e: unknown): boolean {
  return e instanceof LedgerError && e.code === 'notFound';
}

/** The submission a LedgerSubmitError was raised for carries the node's failed status (its verdict on the message). */
function refusedWithStatus(e: LedgerSubmitError): boolean {
  return e.submissions.some((s: any) => s && s.success !== true && s.status?.failed === true);
}

/**
 * A failure worth retrying with the same input: the node unreachable or timing out, or an internal error on its
 * side. Refusals (bad input, a signature the network rejects, a conflict) are not, and neither is a transaction's
 * outcome: a transaction that finished failed (LedgerTxFailedError) or a message the node answered with a failed
 * status stays so whatever its label, and Go labels most ordinary execution failures unknownError (e.g. an
 * AddCredits with too little balance, a threshold above the page's keys). unknownError stays transient where it
 * is no such verdict: a JSON-RPC error of the call itself.
 */
export function isTransientLedgerError(e: unknown): boolean {
  if (e instanceof LedgerTransportError) return true;
  if (e instanceof LedgerInputError) return false;
  if (e instanceof LedgerTxFailedError) return false;
  if (e instanceof LedgerSubmitError && e.code === 'unknownError' && refusedWithStatus(e)) return false;
  return e instanceof LedgerError && ['internalError', 'unknownError', 'timeout', 'rpcError'].includes(e.code);
}
