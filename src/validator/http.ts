/**
 * A validator's HTTP API (Hono), whose paths and bodies src/protocol/validator-wire.ts states: GET /v1/info (keys,
 * key page, chains), POST /v1/attest, /v1/observe and /v1/results. A refusal answers 422 {ok:false, code, reason},
 * a body that is not JSON 400, and unexpected failures 500 {ok:false, code:'INTERNAL', reason}.
 */
import { type Context, Hono } from 'hono';
import { listen, type RunningServer } from '../net/server.js';
import { blsReady } from '../chain/bls.js';
import { type AttestRequest, type ObserveRequest, VALIDATOR_API, type ValidatorErrorResponse, type WriteResultRequest } from '../protocol/validator-wire.js';
import { ValidatorRefusal, type ValidatorNode } from './node.js';

export function createValidatorApp(node: ValidatorNode): Hono {
  const app = new Hono();
  const run = (fn: (body: unknown) => Promise<unknown>) => async (c: Context) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json({ ok: false, code: 'BAD_REQUEST', reason: 'body must be JSON' } satisfies ValidatorErrorResponse, 400);
    }
    try {
      return c.json(await fn(body));
    } catch (e) {
      if (e instanceof ValidatorRefusal)
        return c.json({ ok: false, code: e.code, reason: e.message, validatorIndex: node.index } satisfies ValidatorErrorResponse, 422);
      return c.json({ ok: false, code: 'INTERNAL', reason: (e as Error).message, validatorIndex: node.index } satisfies ValidatorErrorResponse, 500);
    }
  };
  app.get(VALIDATOR_API.info, (c) => c.json(node.info()));
  app.get(VALIDATOR_API.health, (c) => c.json({ status: 'healthy', index: node.index }));
  app.post(
    VALIDATOR_API.attest,
    run((b) => node.attest(b as AttestRequest)),
  );
  app.post(
    VALIDATOR_API.observe,
    run((b) => node.observe(b as ObserveRequest)),
  );
  app.post(
    VALIDATOR_API.results,
    run((b) => node.writeResult(b as WriteResultRequest)),
  );
  return app;
}

/** Listens once the fast BLS engine is loaded, so the first requests are not signed the slow way. */
export async function serveValidator(node: ValidatorNode, host = '127.0.0.1', port = 0): Promise<RunningServer> {
  await blsReady();
  return listen(createValidatorApp(node), host, port);
}
