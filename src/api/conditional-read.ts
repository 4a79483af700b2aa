/**
 * Conditional reads and waiting for a change (a long poll), with the standard headers: the answer carries an ETag
 * (a hash of its body); a request with `If-None-Match` naming it gets 304 Not Modified (RFC 9110 §13.1.2), and with
 * `Prefer: wait=<seconds>` as well (RFC 7240 §4.3) the server holds the request until the representation changes,
 * answering 200 with the new one as soon as it does, or 304 once the wait is over. A client following a resource
 * sends the ETag it holds each time: one request per change instead of one per polling interval.
 */
import { createHash } from 'node:crypto';

/** the longest wait a request may ask for, in seconds (a longer one is shortened to this) */
export const MAX_WAIT_SECONDS = 60;

/** A weak ETag of a JSON body (equal bodies, equal tags). */
export function etagOf(body: string): string {
  return `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/** Whether `If-None-Match` names `etag` (weak comparison; `*` matches any). */
export function noneMatchHits(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  const want = opaque(etag);
  return ifNoneMatch.split(',').some((t) => t.trim() === '*' || opaque(t) === want);
}

/**
 * The wait a `Prefer` header asks for, in seconds (at most MAX_WAIT_SECONDS), or 0. Other preferences and a
 * malformed value are ignored, as RFC 7240 asks of a server.
 */
export function preferredWait(prefer: string | undefined): number {
  if (!prefer) return 0;
  for (const part of prefer.split(',')) {
    const m = /^\s*wait\s*=\s*"?(\d{1,6})"?\s*(?:;.*)?$/i.exec(part);
    if (m) return Math.min(Number(m[1]), MAX_WAIT_SECONDS);
  }
  return 0;
}

/** visible ASCII with inner spaces: what an HTTP parser takes in a header value without refusing the request */
const HEADER_TEXT_PATTERN = '^[!-~]([ -~]*[!-~])?$';

/** The two request headers, as OpenAPI parameters of a read that offers them. */
export const CONDITIONAL_READ_PARAMETERS = [
  {
    in: 'header' as const,
    name: 'If-None-Match',
    required: false,
    description: 'The ETag of an answer the client holds: 304 Not Modified while the resource is unchanged',
    schema: { type: 'string' as const, maxLength: 1024, pattern: HEADER_TEXT_PATTERN },
  },
  {
    in: 'header' as const,
    name: 'Prefer',
    required: false,
    description: `With If-None-Match, \`wait=<seconds>\` (at most ${MAX_WAIT_SECONDS}): hold the request until the resource changes (200) or the wait ends (304); Preference-Applied echoes it`,
    schema: { type: 'string' as const, maxLength: 1024, pattern: HEADER_TEXT_PATTERN },
  },
];
