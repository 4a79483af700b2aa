/**
 * The spec's ledger token transfer, the intent shape `{ type: "sendTokens", to, amount }`: ACME sent on the ledger
 * from the identity's token account to `to` (a ledger token account URL). No chain leg and no validator round: the
 * ledger executes it under the identity's key page, and its proof is the ledger's Merkle receipt of the transaction.
 *
 * `amount` is in ACME, as a JSON number (the contract's type) or a decimal string (exact beyond a double's digits),
 * with at most 8 decimal places: ACME's precision, 1 ACME = 10^8 base units. It is carried on in base units.
 * The URL form of `to` is checked by the gateway with the ledger's URL rules (this module stays free of them).
 */
import { IntentRequestError } from './request.js';

export const SEND_TOKENS = 'sendTokens';
/** decimal places of ACME (base units per ACME = 10^ACME_PRECISION) */
export const ACME_PRECISION = 8;
/** the ledger's token amounts are uint256 in base units; a transfer this large is an input error long before */
const MAX_ACME_DIGITS = 30;

export interface TransferRequest {
  /** the recipient as given (checked and normalized by the caller) */
  to: unknown;
  /** base units (10^-8 ACME) */
  amount: bigint;
  /** the amount in ACME as a decimal string, as the client meant it */
  amountAcme: string;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Is this request intent the ledger token transfer shape? */
export function isSendTokensIntent(intent: unknown): boolean {
  return isObj(intent) && intent.type === SEND_TOKENS;
}

/** A JSON number's exact decimal digits (its shortest round-trip form), exponent form expanded. */
function numberText(n: number): string {
  const s = String(n);
  const m = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const digits = m[1]! + (m[2] ?? '');
  const point = m[1]!.length + Number(m[3]);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** ACME (number or decimal string) → base units; 400 naming intent.amount when it is not a positive amount of at most 8 decimals. */
export function acmeAmount(v: unknown): { amount: bigint; text: string } {
  const field = 'intent.amount';
  let text: string;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new IntentRequestError(`${field}: must be a finite number of ACME, got ${v}`, field);
    text = numberText(v);
  } else if (typeof v === 'string') text = v.trim();
  else throw new IntentRequestError(`${field}: required, an amount of ACME (a number such as 1.5, or a decimal string)`, field);
  if (text.startsWith('-')) throw new IntentRequestError(`${field}: must be greater than 0 ACME, got ${text}`, field);
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new IntentRequestError(`${field}: must be an amount of ACME in decimal notation (e.g. 1.5), got ${JSON.stringify(text.slice(0, 80))}`, field);
  const whole = m[1]!.replace(/^0+(?=\d)/, '');
  const frac = (m[2] ?? '').replace(/0+$/, '');
  if (frac.length > ACME_PRECISION) {
    throw new IntentRequestError(
      `${field}: ${text} ACME has ${frac.length} decimal places; ACME has ${ACME_PRECISION} (the smallest amount is 0.00000001 ACME)`,
      field,
      'VALIDATION_ERROR',
      { precision: ACME_PRECISION },
    );
  }
  if (whole.length > MAX_ACME_DIGITS) throw new IntentRequestError(`${field}: ${text} ACME is larger than any ledger balance`, field);
  const amount = BigInt(whole) * 10n ** BigInt(ACME_PRECISION) + BigInt(frac.padEnd(ACME_PRECISION, '0') || '0');
  if (amount === 0n) throw new IntentRequestError(`${field}: must be greater than 0 ACME`, field);
  return { amount, text: frac ? `${whole}.${frac}` : whole };
}

/** Base units as an ACME decimal string (100000000 → "1", 150000000 → "1.5"). */
export function formatAcme(base: bigint | string): string {
  const b = BigInt(base);
  const unit = 10n ** BigInt(ACME_PRECISION);
  const frac = (b % unit).toString().padStart(ACME_PRECISION, '0').replace(/0+$/, '');
  return `${b / unit}${frac ? `.${frac}` : ''}`;
}

/** The transfer of a `{ type: "sendTokens", to, amount }` intent; 400 naming the field for anything else in it. */
export function transferFromRequest(intent: unknown): TransferRequest {
  if (!isSendTokensIntent(intent)) throw new IntentRequestError(`intent.type: must be "${SEND_TOKENS}"`, 'intent.type');
  const o = intent as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !['type', 'to', 'amount', 'tokenSymbol'].includes(k));
  if (extra.length) {
    throw new IntentRequestError(`intent.${extra[0]}: not a field of a sendTokens intent ({ type: "sendTokens", to, amount })`, `intent.${extra[0]}`);
  }
  if (o.tokenSymbol !== undefined && String(o.tokenSymbol).toUpperCase() !== 'ACME') {
    throw new IntentRequestError(`intent.tokenSymbol: a sendTokens intent sends ACME, got ${JSON.stringify(o.tokenSymbol)}`, 'intent.tokenSymbol');
  }
  if (typeof o.to !== 'string' || !o.to.trim()) {
    throw new IntentRequestError('intent.to: required, the URL of a ledger token account (e.g. acc://bob.acme/tokens)', 'intent.to');
  }
  const { amount, text } = acmeAmount(o.amount);
  return { to: o.to.trim(), amount, amountAcme: text };
}

/** A sendTokens intent as stored (the `intent` of its row; intent_type `sendTokens`). */
export interface TransferDocument {
  type: typeof SEND_TOKENS;
  /** the identity's token account, the transaction's principal */
  from: string;
  /** the recipient token account */
  to: string;
  /** base units (10^-8 ACME), decimal string */
  amount: string;
  /** the same amount in ACME, decimal string */
  amount_acme: string;
}

/** The identity's ACME token account, made by provisioning (acc://<adi>/tokens). */
export function identityTokenAccount(adiUrl: string): string {
  return `${adiUrl.replace(/\/+$/, '')}/tokens`;
}
