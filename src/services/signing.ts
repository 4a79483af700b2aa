/**
 * What the governance and co-signing use cases share: the format checks of a signature submission, the local
 * Ed25519 check that answers 400 before anything is sent, and the mapping of ledger errors to API errors
 * (input → 400 naming the field, transient → 502, unknown transaction → 404, refusal → 400/409).
 */
import { ApiError } from './errors.js';
import { isNotFound, isTransientLedgerError, LedgerError, LedgerInputError, verifyExternalSignature } from '../ledger/index.js';
import { redactUrls } from '../net/redact.js';
import { signatureFormatProblem } from '../protocol/signature.js';

/** Format checks of a signature submission; the hex strings lower-cased. */
export function parseSignatureBody(b: { signature: string; public_key: string }): { signature: string; publicKey: string } {
  const malformed = signatureFormatProblem(b.signature, b.public_key);
  if (malformed) throw new ApiError(400, 'VALIDATION_ERROR', malformed.message, { field: malformed.field });
  return { signature: b.signature.toLowerCase(), publicKey: b.public_key.toLowerCase() };
}

/** 400 unless `signature` verifies over `hashToSign` with `publicKey`. */
export function requireValidSignature(hashToSign: string, signature: string, publicKey: string): void {
  const v = verifyExternalSignature({ hashToSign, signature, publicKey });
  if (!v.ok) throw new ApiError(400, 'INVALID_SIGNATURE', `signature: ${v.reason}`, { field: 'signature' });
}

const FIELD_NAMES: Record<string, string> = {
  publicKey: 'public_key',
  signerUrl: 'signer_url',
  txId: 'target_id',
  pendingTx: 'target_id',
  principal: 'identity',
};

/** A ledger error as the API error it stands for; `fieldNames` renames the ledger's input names to the route's fields. */
export function ledgerApiError(e: unknown, context: string, fieldNames: Record<string, string> = {}): ApiError | unknown {
  if (e instanceof ApiError) return e;
  if (e instanceof LedgerInputError) {
    const field = fieldNames[e.field] ?? FIELD_NAMES[e.field] ?? e.field;
    return new ApiError(400, 'VALIDATION_ERROR', `${field}: ${e.message.replace(/^[A-Za-z]+: /, '')}`, { field });
  }
  // the ledger's messages quote LEDGER_URL, which may carry credentials
  const message = redactUrls((e as Error).message);
  if (isTransientLedgerError(e)) return new ApiError(502, 'LEDGER_UNAVAILABLE', `${context}: the ledger network did not answer (${message}); retry`);
  if (isNotFound(e)) return new ApiError(404, 'LEDGER_NOT_FOUND', `${context}: not found on the ledger (${message})`);
  if (e instanceof LedgerError) {
    if (e.code === 'conflict') return new ApiError(409, 'ALREADY_SIGNED', `${context}: ${message}`);
    return new ApiError(400, 'LEDGER_REFUSED', `${context}: the ledger refused it (${e.code}): ${message}`, { ledger_code: e.code });
  }
  return e;
}
