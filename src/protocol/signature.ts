/**
 * The format of a signature submission (an intent's signature, a governance signature, a co-signature): the
 * Ed25519 signature as 128 hex characters and the public key that signed as 64. One check with one wording for the
 * API's answers and the intent workflow's Update validator; plain code, safe in the workflow sandbox.
 */

const SIGNATURE_HEX = /^[0-9a-fA-F]{128}$/;
const PUBLIC_KEY_HEX = /^[0-9a-fA-F]{64}$/;

export interface SignatureFormatProblem {
  /** the request field at fault */
  field: 'signature' | 'public_key';
  /** the answer's text, naming the field */
  message: string;
}

/** The first format problem of a submission (the signature is checked first), or undefined when both are well-formed. */
export function signatureFormatProblem(signature: unknown, publicKey: unknown): SignatureFormatProblem | undefined {
  if (typeof signature !== 'string' || !SIGNATURE_HEX.test(signature)) {
    return { field: 'signature', message: 'signature: must be 128 hex characters (64-byte Ed25519 signature)' };
  }
  if (typeof publicKey !== 'string' || !PUBLIC_KEY_HEX.test(publicKey)) {
    return { field: 'public_key', message: 'public_key: must be 64 hex characters (32-byte Ed25519 public key)' };
  }
  return undefined;
}
