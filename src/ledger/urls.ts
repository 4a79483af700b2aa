/** Accumulate URL helpers. Parsing is done by accumulate.js; this adds validation and typed errors. */
import { URL as AccURL, Signer, type ED25519Key } from 'accumulate.js';
import { sha256 as accSha256 } from 'accumulate.js/common';
import { LedgerInputError } from './errors.js';

const MAX_URL_LENGTH = 500;
const AUTHORITY_RE = /^[A-Za-z0-9][A-Za-z0-9.\-_]*$/;
const PATH_SEG_RE = /^[A-Za-z0-9.\-_:]+$/;

/** Parse and validate an Accumulate URL (acc://authority/path). Throws LedgerInputError naming the field. */
export function parseAccUrl(input: unknown, field = 'url'): AccURL {
  if (typeof input !== 'string' && !(input instanceof AccURL)) {
    throw new LedgerInputError(`${field}: expected an acc:// URL string`, field);
  }
  const s = input.toString().trim();
  if (s.length === 0) throw new LedgerInputError(`${field}: empty URL`, field);
  if (s.length > MAX_URL_LENGTH) throw new LedgerInputError(`${field}: URL longer than ${MAX_URL_LENGTH} characters`, field);
  if (/\s/.test(s)) throw new LedgerInputError(`${field}: malformed URL ${JSON.stringify(s)} (contains whitespace)`, field);
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(s);
  if (m && m[1]!.toLowerCase() !== 'acc') {
    throw new LedgerInputError(`${field}: malformed URL ${JSON.stringify(s)} (scheme must be acc://)`, field);
  }
  let u: AccURL;
  try {
    u = AccURL.parse(s);
  } catch (e) {
    throw new LedgerInputError(`${field}: malformed URL ${JSON.stringify(s)}: ${(e as Error).message}`, field);
  }
  if (!u.authority || !AUTHORITY_RE.test(u.authority) || u.authority.includes('..')) {
    throw new LedgerInputError(`${field}: malformed URL ${JSON.stringify(s)} (bad authority)`, field);
  }
  if (u.query || u.fragment || u.username) {
    throw new LedgerInputError(`${field}: malformed URL ${JSON.stringify(s)} (query, fragment or user info not allowed)`, field);
  }
  const segs = u.path.split('/').filter((x) => x.length > 0);
  if (u.path.includes('//')) throw new LedgerInputError(`${field}: malformed URL ${JSON.stringify(s)} (empty path segment)`, field);
  for (const seg of segs) {
    if (!PATH_SEG_RE.test(seg)) throw new LedgerInputError(`${field}: malformed URL ${JSON.stringify(s)} (bad path segment ${JSON.stringify(seg)})`, field);
  }
  return u;
}

/** Canonical (lower-case) string form used as a map key; Accumulate URLs are case-insensitive. */
export function normUrl(input: string | AccURL, field = 'url'): string {
  const u = parseAccUrl(input, field);
  const path = u.path.replace(/\/+$/, '');
  return `acc://${u.authority}${path}`.toLowerCase();
}

export function urlAuthority(input: string | AccURL): string {
  return parseAccUrl(input).authority.toLowerCase();
}

/** Parent URL (acc://a.acme/x/y -> acc://a.acme/x); undefined for a root. */
export function parentUrl(input: string): string | undefined {
  const n = normUrl(input);
  const rest = n.slice('acc://'.length);
  const i = rest.lastIndexOf('/');
  return i < 0 ? undefined : `acc://${rest.slice(0, i)}`;
}

/** Is the root label a valid ADI name (`name.acme`)? */
export function isValidAdiRoot(authority: string): boolean {
  const a = authority.toLowerCase();
  if (!a.endsWith('.acme')) return false;
  const label = a.slice(0, -5);
  if (label.length === 0 || label.includes('.')) return false;
  if (/^[0-9]+$/.test(label)) return false;
  return /^[a-z0-9-]+$/.test(label);
}

/** Is this a lite identity / lite token account authority (40 hex + 8 hex checksum)? */
export function isLiteAuthority(authority: string): boolean {
  return /^[0-9a-f]{48}$/i.test(authority);
}

/** Lite identity URL of an Ed25519 public key (acc://<hex(sha256(pk)[0:20])><checksum>). */
export function liteIdentityUrl(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new LedgerInputError(`publicKey: expected 32 bytes, got ${publicKey.length}`, 'publicKey');
  const key = { address: { publicKeyHash: sha256Bytes(publicKey) } } as unknown as ED25519Key;
  return Signer.forLite(key).url.toString();
}

export function liteTokenUrl(publicKey: Uint8Array): string {
  return `${liteIdentityUrl(publicKey)}/ACME`;
}

/** Lite identity URL checksum check for an existing authority string. */
export function liteAuthorityValid(authority: string): boolean {
  if (!isLiteAuthority(authority)) return false;
  const a = authority.toLowerCase();
  const key = a.slice(0, 40);
  const check = sha256Bytes(new TextEncoder().encode(key)).slice(28);
  return Buffer.from(check).toString('hex') === a.slice(40);
}

/** Key page URL: book + 1-based index. */
export function keyPageUrl(book: string, index: number): string {
  return `${normUrl(book)}/${index}`;
}

function sha256Bytes(b: Uint8Array): Uint8Array {
  return accSha256(b);
}
