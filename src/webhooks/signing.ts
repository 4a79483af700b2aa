/**
 * Standard Webhooks v1 signing (https://www.standardwebhooks.com): `webhook-signature` is a space-separated list
 * of `v1,<base64 HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}")>`, the key being the base64 part of a
 * `whsec_` secret. Several entries let a receiver accept either secret while one is being rotated.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new secret: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** Whether a caller-supplied secret is a usable Standard Webhooks secret (24–64 key bytes). */
export function isValidSecret(secret: string): boolean {
  if (!secret.startsWith(PREFIX)) return false;
  const b64 = secret.slice(PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return false;
  const n = Buffer.from(b64, 'base64').length;
  return n >= 24 && n <= 64;
}

function key(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

export function sign(secret: string, msgId: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', key(secret)).update(`${msgId}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** Headers for one attempt, signed with every given secret (current first). */
export function signedHeaders(secrets: string[], msgId: string, timestamp: number, body: string): SignedHeaders {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => sign(s, msgId, timestamp, body)).join(' '),
  };
}

export class SignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignatureError';
  }
}

/**
 * Receiver-side check over the raw body string (never a re-serialised object): one v1 entry must match and the
 * timestamp must be within `toleranceSeconds` of `now`. Throws SignatureError saying what is wrong.
 */
export function verify(
  secret: string,
  headers: Record<string, string | undefined>,
  body: string,
  opts: { toleranceSeconds?: number; now?: number } = {},
): void {
  const h = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const id = h['webhook-id'];
  const ts = h['webhook-timestamp'];
  const sigs = h['webhook-signature'];
  if (!id || !ts || !sigs) throw new SignatureError('missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d+$/.test(ts)) throw new SignatureError('webhook-timestamp is not a unix time in seconds');
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const tolerance = opts.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(ts)) > tolerance) throw new SignatureError(`webhook-timestamp is more than ${tolerance} s away from now`);
  const expected = Buffer.from(sign(secret, id, Number(ts), body).slice(3), 'base64');
  for (const entry of sigs.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const got = Buffer.from(value, 'base64');
    if (got.length === expected.length && timingSafeEqual(got, expected)) return;
  }
  throw new SignatureError('no v1 signature matches');
}
