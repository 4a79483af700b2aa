/**
 * A validator's HTTP API (Hono), whose paths and bodies src/protocol/validator-wire.ts states: GET /v1/health and
 * GET /v1/info (public), POST /v1/attest, /v1/attest-batch, /v1/observe and /v1/results (signed by a trusted gateway key).
 *
 * A POST passes, in this order, before the node sees it:
 *   1. the size limit (1 MiB): 413, and the connection is closed (Connection: close), since the rest of the body
 *      is not read;
 *   2. authentication (src/protocol/validator-auth.ts): 401 for no, a bad or a replayed signature, an untrusted key
 *      or a timestamp out of the window; the body is read as bytes for its hash, never parsed before this;
 *   3. the cap on requests in flight: 503 BUSY with Retry-After (also when too many long-polls are under way);
 *   4. JSON and shape (wire-schemas.ts): 400 naming the field;
 *   5. the node, through a bounded long-poll (long-poll.ts): the answer, or 202 PENDING after the poll bound.
 * A refusal answers 422 {ok:false, code, reason}; any other failure 500 {ok:false, code:'INTERNAL', reason:'internal
 * error'}, its details in the validator's log only. Every answer is JSON.
 */
import { type Context, Hono } from 'hono';
import type { z } from 'zod';
import { blsReady } from '../chain/bls.js';
import { createLogger, type Logger } from '../log.js';
import { type DrainBudget, readLimitedBody } from '../net/limited-body.js';
import { listen, type RunningServer } from '../net/server.js';
import { DEFAULT_AUTH_WINDOW_MS, NonceLedger, parseTrustedGatewayKeys, verifyValidatorRequest } from '../protocol/validator-auth.js';
import {
  type AttestBatchRequest,
  type AttestRequest,
  type ObserveRequest,
  VALIDATOR_API,
  type ValidatorErrorResponse,
  type ValidatorPendingResponse,
  type WriteResultRequest,
} from '../protocol/validator-wire.js';
import { LongPolls } from './long-poll.js';
import { ValidatorRefusal, type ValidatorNode } from './node.js';
import { attestBatchRequestSchema, attestRequestSchema, firstIssue, observeRequestSchema, writeResultRequestSchema } from './wire-schemas.js';

export interface ValidatorHttpOptions {
  /** Ed25519 public keys (hex) of the gateways this validator answers; at least one (several: rotation) */
  trustedGatewayKeys: readonly string[];
  /** largest request body; default 1 MiB */
  maxBodyBytes?: number;
  /** signed requests handled at once; beyond it 503 + Retry-After; default 128 */
  maxInFlight?: number;
  /** works (attestations, observations, result writes) under way at once, long-polls included; default 512 */
  maxWorks?: number;
  /** the longest a request is held before a 202 PENDING; default 10 s */
  pollWaitMs?: number;
  /** the clock difference tolerated on a request's timestamp, each way; default 60 s */
  authWindowMs?: number;
  logger?: Logger;
  now?: () => number;
}

export const DEFAULT_MAX_BODY_BYTES = 1 << 20;
export const DEFAULT_MAX_IN_FLIGHT = 128;
export const DEFAULT_POLL_WAIT_MS = 10_000;

type ErrorBody = ValidatorErrorResponse;

export function createValidatorApp(node: ValidatorNode, opts: ValidatorHttpOptions): Hono {
  const trusted = parseTrustedGatewayKeys(opts.trustedGatewayKeys);
  if (trusted.size === 0) throw new Error('a validator needs at least one trusted gateway key (TRUSTED_GATEWAY_KEYS)');
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxInFlight = opts.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  const windowMs = opts.authWindowMs ?? DEFAULT_AUTH_WINDOW_MS;
  const now = opts.now ?? Date.now;
  const log = opts.logger ?? createLogger('info', { process: 'validator', index: node.index });
  const nonces = new NonceLedger(windowMs);
  const polls = new LongPolls(opts.pollWaitMs ?? DEFAULT_POLL_WAIT_MS, opts.maxWorks ?? 512, 60_000, now);
  const index = node.index;
  let inFlight = 0;

  const fail = (c: Context, status: 400 | 401 | 404 | 405 | 413 | 500 | 503, code: string, reason: string, extra: Partial<ErrorBody> = {}) =>
    c.json({ ok: false, code, reason, validatorIndex: index, ...extra } satisfies ErrorBody, status);
  const busy = (c: Context, reason: string) => {
    c.header('Retry-After', '1');
    return fail(c, 503, 'BUSY', reason);
  };
  const internal = (c: Context, e: unknown, path: string) => {
    log.error('validator request failed', { path, err: e, stack: (e as Error)?.stack });
    return fail(c, 500, 'INTERNAL', 'internal error');
  };

  const signed =
    <S extends z.ZodType>(path: string, schema: S, work: (body: z.output<S>) => Promise<unknown>) =>
    async (c: Context) => {
      const bytes = await readLimitedBody(c.req.raw, maxBody, DRAIN);
      if (bytes === undefined) {
        c.header('Connection', 'close');
        return fail(c, 413, 'PAYLOAD_TOO_LARGE', `request body larger than ${maxBody} bytes`);
      }
      const auth = verifyValidatorRequest({
        trusted,
        header: (n) => c.req.header(n),
        request: { method: 'POST', path, validatorIndex: index, body: bytes },
        nonces,
        windowMs,
        now: now(),
      });
      if (!auth.ok) return auth.code === 'BUSY' ? busy(c, auth.reason) : fail(c, 401, auth.code, auth.reason);
      if (inFlight >= maxInFlight) return busy(c, `more than ${maxInFlight} requests in flight`);
      inFlight++;
      try {
        let json: unknown;
        try {
          json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
        } catch {
          return fail(c, 400, 'BAD_REQUEST', 'body must be JSON');
        }
        const parsed = schema.safeParse(json);
        if (!parsed.success) {
          const { field, message } = firstIssue(parsed.error);
          return fail(c, 400, 'BAD_REQUEST', `${field}: ${message}`, { field });
        }
        const body = parsed.data as z.output<S>;
        const a = await polls.answer(`${path} ${JSON.stringify(body)}`, () => work(body));
        if (a.state === 'busy') return busy(c, 'too many requests under way');
        if (a.state === 'pending') {
          const pending: ValidatorPendingResponse = {
            ok: false,
            kind: 'pending',
            code: 'PENDING',
            reason: 'not done yet: ask again',
            retryAfterMs: 0,
            validatorIndex: index,
          };
          return c.json(pending, 202);
        }
        if (a.state === 'done') return c.json(a.value as object);
        if (a.error instanceof ValidatorRefusal) {
          const members = (a.error as { members?: ErrorBody['members'] }).members;
          return c.json(
            { ok: false, code: a.error.code, reason: a.error.message, validatorIndex: index, ...(members ? { members } : {}) } satisfies ErrorBody,
            422,
          );
        }
        return internal(c, a.error, path);
      } finally {
        inFlight--;
      }
    };

  const app = new Hono();
  app.onError((e, c) => internal(c, e, c.req.path));
  app.notFound((c) => fail(c, 404, 'NOT_FOUND', `no ${c.req.method} ${c.req.path} on a validator`));
  app.get(VALIDATOR_API.info, (c) => c.json(node.info()));
  app.get(VALIDATOR_API.health, (c) => c.json({ status: 'healthy', index }));
  app.post(
    VALIDATOR_API.attest,
    signed(VALIDATOR_API.attest, attestRequestSchema, (b) => node.attest(b as AttestRequest)),
  );
  app.post(
    VALIDATOR_API.attestBatch,
    signed(VALIDATOR_API.attestBatch, attestBatchRequestSchema, (b) => node.attestBatch(b as AttestBatchRequest)),
  );
  app.post(
    VALIDATOR_API.observe,
    signed(VALIDATOR_API.observe, observeRequestSchema, (b) => node.observe(b as ObserveRequest)),
  );
  app.post(
    VALIDATOR_API.results,
    signed(VALIDATOR_API.results, writeResultRequestSchema, (b) => node.writeResult(b as WriteResultRequest)),
  );
  for (const [path, allow] of [
    [VALIDATOR_API.info, 'GET'],
    [VALIDATOR_API.health, 'GET'],
    [VALIDATOR_API.attest, 'POST'],
    [VALIDATOR_API.attestBatch, 'POST'],
    [VALIDATOR_API.observe, 'POST'],
    [VALIDATOR_API.results, 'POST'],
  ] as const) {
    app.all(path, (c) => {
      c.header('Allow', allow);
      return fail(c, 405, 'METHOD_NOT_ALLOWED', `${path} takes ${allow} only`);
    });
  }
  return app;
}

/** The most of an oversized body read and discarded before the 413, and for how long at most. */
const DRAIN: DrainBudget = { bytes: 8 << 20, ms: 1_000 };

/** Listens once the fast BLS engine is loaded, so the first requests are not signed the slow way. */
export async function serveValidator(node: ValidatorNode, opts: ValidatorHttpOptions & { host?: string; port?: number }): Promise<RunningServer> {
  await blsReady();
  return listen(createValidatorApp(node, opts), opts.host ?? '127.0.0.1', opts.port ?? 0);
}
