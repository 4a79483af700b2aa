/**
 * The one mask for URLs inside text that leaves the process (log lines, API error fields). RPC providers put their
 * API key in the path (…/v2/<key>) or the query (?apikey=…), and a LEDGER_URL may carry user:password@; viem and
 * the ledger client quote the whole URL in their error messages. In every http(s)/ws(s) URL found in the text:
 *  - user:password@ becomes ***@;
 *  - for the origins of the configured dependency URLs (chain RPCs, the ledger, the validators: registered by
 *    loadConfig, or passed in) everything after scheme://host:port becomes /***;
 *  - elsewhere the query becomes ?*** (the path stays: it names the endpoint).
 */

import { scrubQueryError } from './redact-query.js';

const URL_IN_TEXT = /\b(https?|wss?):\/\/([^\s/?#@"'<>`]*@)?([^\s/?#@"'<>`]+)([^\s"'<>`]*)/gi;
const TRAILING_PUNCTUATION = /[).,;:!\]}]+$/;

const secretOrigins = new Set<string>();

function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Mark these URLs' origins as ones whose path and query may hold a key (loadConfig registers CHAINS, LEDGER_URL, VALIDATOR_URLS). */
export function registerSecretUrls(urls: Iterable<string>): void {
  for (const url of urls) {
    const o = originOf(url);
    if (o) secretOrigins.add(o);
  }
}

/** `text` with the URLs in it masked (see the module comment); `secretUrls` adds origins to the registered ones. */
export function redactUrls(text: string, secretUrls: readonly string[] = []): string {
  if (!text.includes('://')) return text;
  const extra = secretUrls.length ? new Set(secretUrls.map(originOf).filter((o): o is string => !!o)) : undefined;
  return text.replace(URL_IN_TEXT, (_m, scheme: string, userinfo: string | undefined, host: string, rest: string) => {
    const trailing = TRAILING_PUNCTUATION.exec(rest)?.[0] ?? '';
    let tail = trailing ? rest.slice(0, -trailing.length) : rest;
    const origin = originOf(`${scheme}://${host}`);
    if (origin && (secretOrigins.has(origin) || extra?.has(origin))) {
      tail = tail === '' || tail === '/' ? tail : '/***';
    } else {
      tail = tail.replace(/\?[^#]*/, '?***');
    }
    return `${scheme}://${userinfo ? '***@' : ''}${host}${tail}${trailing}`;
  });
}

/**
 * Masks the URLs in an error and its causes in place (message, stack; viem's shortMessage and details too), so
 * that what is kept of it elsewhere (a Temporal activity failure, stored in the workflow's history and shown in the
 * Temporal UI, and the error texts the workflows pass on to the API) holds no key, and no parameter of a failed
 * database query (src/net/redact-query.ts). Returns the error.
 */
export function redactError<T>(err: T): T {
  let e: unknown = err;
  for (let depth = 0; e instanceof Error && depth < 8; depth++) {
    const x = e as Error & { shortMessage?: unknown; details?: unknown };
    scrubQueryError(x);
    x.message = redactUrls(x.message);
    if (typeof x.stack === 'string') x.stack = redactUrls(x.stack);
    if (typeof x.shortMessage === 'string') x.shortMessage = redactUrls(x.shortMessage);
    if (typeof x.details === 'string') x.details = redactUrls(x.details);
    e = x.cause;
  }
  return err;
}
