/**
 * Idempotency-Key for creating POSTs (opt-in per route: `middleware: [idempotency(deps)]`, or `idempotent: true`
 * with secureRoute). Records live in Postgres per (organization, key), so every API process sees them:
 *   - first request: the key is claimed (in_progress), the handler runs, and its response is stored;
 *   - replay (same key, same method, path and body): the stored status, body and headers Location, Cache-Control
 *     and Retry-After, with `idempotent: true` added to a JSON object body and the header Idempotent-Replayed: true;
 *   - same key, different body/method/path: 422 IDEMPOTENCY_KEY_MISMATCH;
 *   - same key while the first request still runs: 409 IDEMPOTENCY_KEY_IN_FLIGHT with Retry-After;
 *   - stored: 2xx and the final client errors 404/410/422. Not stored (the key is released and may be
 *     retried): 5xx, 400 validation errors, 401/402/403/409/429 — outcomes a retry can change (402: credits or a
 *     grant the client or operator can top up);
 *   - kept 24 hours (maintenanceWorkflow purges expired rows; an expired record found earlier is replaced);
 *   - if storing the response fails after the handler succeeded, the client still gets it, and the claim stays in
 *     progress (logged) so a retry is a 409 until the lease passes instead of running the handler a second time;
 *   - secrets are never stored: a handler whose response holds one (a raw API key) names its fields with
 *     `withholdOnReplay(c, paths, note)`; they are removed before the response is stored, so a replay answers
 *     without them, with `redacted` (the paths) and `note` (what to do instead) in the body; fields named in its
 *     `drop` option (a "store this key now" warning) are left out of the replay as well.
 * The body is fingerprinted as SHA-256 over canonical JSON (object keys sorted), so whitespace and key order do
 * not matter. The header may be an RFC 8941 quoted string (IETF draft) or bare (Stripe); 1–255 visible characters.
 * A header that is present but empty or malformed is a 400 VALIDATION_ERROR with details.field "Idempotency-Key".
 */
import { createHash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  getIdempotencyRecord,
  releaseIdempotencyKey,
  storedResponse,
  takeOverIdempotencyKey,
  type ClaimInput,
} from '../../db/idempotency.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { requireAuth } from './auth.js';

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** an in-progress claim older than this is presumed abandoned (its process died) and may be taken over */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000;
const STORED_CLIENT_ERRORS = new Set([404, 410, 422]);
/** response headers stored with the body and sent again on a replay */
export const REPLAYED_HEADERS = ['Location', 'Cache-Control', 'Retry-After'] as const;
const KEY_SYNTAX = /^[\x21-\x7e]{1,255}$/;

export function parseIdempotencyKey(header: string): string | undefined {
  let v = header.trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
  return KEY_SYNTAX.test(v) ? v : undefined;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function fingerprint(bodyText: string): string {
  let material = bodyText;
  try {
    if (bodyText.trim() !== '') material = canonical(JSON.parse(bodyText));
  } catch {
    /* not JSON: hash the bytes as sent */
  }
  return createHash('sha256').update(material, 'utf8').digest('hex');
}

/** Fields of a response that must not be stored for replay, and the note a replay carries instead. */
export interface WithheldFields {
  /** dotted paths into the JSON body, e.g. `api_key.key` */
  paths: string[];
  note: string;
  /** dotted paths of fields that only make sense beside the withheld ones (e.g. "store this key now"): dropped from
   * the replay too, without being listed in `redacted` */
  drop?: string[];
}

declare module 'hono' {
  interface ContextVariableMap {
    idempotencyWithheld?: WithheldFields;
  }
}

/**
 * Declare, from a handler, that these fields of its JSON response are secrets shown once: they are never written to
 * the idempotency record, and a replay answers without them (with `redacted` and `note`).
 */
export function withholdOnReplay(c: Context, paths: string[], note: string, opts: { drop?: string[] } = {}): void {
  c.set('idempotencyWithheld', { paths, note, ...(opts.drop ? { drop: opts.drop } : {}) });
}

/** A copy of `body` without the withheld fields, naming the ones it removed in `redacted`, with the note. */
export function redactWithheld(body: unknown, withheld: WithheldFields | undefined): unknown {
  if (!withheld || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const copy = structuredClone(body) as Record<string, unknown>;
  const remove = (path: string): boolean => {
    const parts = path.split('.');
    let node: unknown = copy;
    for (const part of parts.slice(0, -1)) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
    const last = parts[parts.length - 1];
    if (!(node && typeof node === 'object' && Object.hasOwn(node, last))) return false;
    delete (node as Record<string, unknown>)[last];
    return true;
  };
  const removed = withheld.paths.filter(remove);
  if (removed.length === 0) return body;
  for (const path of withheld.drop ?? []) remove(path);
  return { ...copy, redacted: removed, note: withheld.note };
}

export interface IdempotencyOptions {
  retentionMs?: number;
  leaseMs?: number;
}

export function idempotency(deps: AppDeps, opts: IdempotencyOptions = {}): MiddlewareHandler<AppEnv> {
  const db = deps.database.db;
  const now = deps.now ?? Date.now;
  const retentionMs = opts.retentionMs ?? IDEMPOTENCY_RETENTION_MS;
  const leaseMs = opts.leaseMs ?? IDEMPOTENCY_LEASE_MS;

  return async (c, next) => {
    const header = c.req.header('idempotency-key');
    if (header === undefined) return next();
    // present but empty (`Idempotency-Key:`) is a mistake, not an opt-out: the client meant to send a key
    const key = parseIdempotencyKey(header);
    if (!key) {
      const problem = header.trim() === '' ? 'is empty' : 'must be 1 to 255 visible ASCII characters';
      throw new ApiError(400, 'VALIDATION_ERROR', `Idempotency-Key: ${problem} (a UUID is recommended; omit the header to send without one)`, {
        field: 'Idempotency-Key',
      });
    }
    const auth = requireAuth(c);
    const bodyText = await c.req.text(); // cached by Hono: the route's validator reads it again
    const t = now();
    const claim: ClaimInput = {
      orgId: auth.orgId,
      key,
      method: c.req.method,
      path: c.req.path,
      requestHash: fingerprint(bodyText),
      now: new Date(t),
      expiresAt: new Date(t + retentionMs),
    };

    let owned = false;
    for (let attempt = 0; attempt < 5 && !owned; attempt++) {
      if (await claimIdempotencyKey(db, claim)) {
        owned = true;
        break;
      }
      const rec = await getIdempotencyRecord(db, auth.orgId, key);
      if (!rec) continue; // released between our insert and read: try again
      if (rec.expiresAt.getTime() <= t) {
        owned = await takeOverIdempotencyKey(db, claim, rec.createdAt);
        continue;
      }
      if (rec.requestHash !== claim.requestHash || rec.method !== claim.method || rec.path !== claim.path) {
        throw new ApiError(
          422,
          'IDEMPOTENCY_KEY_MISMATCH',
          'Idempotency-Key was already used with a different request; use a new key for a different request',
          { original_method: rec.method, original_path: rec.path },
        );
      }
      if (rec.state === 'in_progress') {
        if (rec.createdAt.getTime() + leaseMs <= t) {
          owned = await takeOverIdempotencyKey(db, claim, rec.createdAt);
          continue;
        }
        throw new ApiError(
          409,
          'IDEMPOTENCY_KEY_IN_FLIGHT',
          'A request with this Idempotency-Key is still in progress; retry later with the same key',
          undefined,
          { 'Retry-After': '1' },
        );
      }
      // completed: replay the stored response
      c.header('Idempotent-Replayed', 'true');
      const { body, headers } = storedResponse(rec);
      for (const name of REPLAYED_HEADERS) if (headers[name] !== undefined) c.header(name, headers[name]);
      const status = rec.responseStatus ?? 200;
      if (body === null || body === undefined) return c.body(null, status as 200);
      const replay = typeof body === 'object' && !Array.isArray(body) ? { ...(body as object), idempotent: true } : body;
      return c.json(replay as object, status as 200);
    }
    if (!owned) {
      throw new ApiError(409, 'IDEMPOTENCY_KEY_IN_FLIGHT', 'A request with this Idempotency-Key is in progress; retry later with the same key', undefined, {
        'Retry-After': '1',
      });
    }

    let keepClaim = false;
    try {
      await next();
      const status = c.res.status;
      if ((status >= 200 && status < 300) || STORED_CLIENT_ERRORS.has(status)) {
        let body: unknown = null;
        const text = await c.res.clone().text();
        if (text !== '') {
          try {
            body = JSON.parse(text);
          } catch {
            body = null; // only JSON bodies are replayed; creating routes answer JSON
          }
        }
        // The handler's work is done: from here on the claim is never released (a retry must not run it again).
        keepClaim = true;
        try {
          const headers: Record<string, string> = {};
          for (const name of REPLAYED_HEADERS) {
            const v = c.res.headers.get(name);
            if (v !== null) headers[name] = v;
          }
          await completeIdempotencyKey(db, auth.orgId, key, claim.now, status, { body: redactWithheld(body, c.get('idempotencyWithheld')), headers });
        } catch (err) {
          // The client still gets the real response. The record stays in_progress: a retry with this key is a 409
          // until the lease passes, rather than a second execution now.
          // the driver's own message only: the query error's text repeats its parameters, i.e. the response body
          const cause = (err as { cause?: unknown }).cause;
          c.get('logger').error('idempotency record could not be completed; the claim is kept in progress', {
            reason: cause instanceof Error ? cause.message : 'query failed',
            response_status: status,
          });
        }
      }
    } finally {
      if (!keepClaim) await releaseIdempotencyKey(db, auth.orgId, key, claim.now).catch(() => {});
    }
  };
}
