/**
 * A validator's HTTP API (Hono):
 *   GET  /v1/info                   keys, key page, chains
 *   POST /v1/attest   AttestRequest     -> 200 AttestResponse | 422 {ok:false, code, reason}
 *   POST /v1/observe  ObserveRequest    -> 200 ObserveResponse | 422 ...
 *   POST /v1/results  WriteResultRequest -> 200 WriteResultResponse | 422 ...
 * Unexpected failures answer 500 {ok:false, code:'INTERNAL', reason}.
 */
import { Hono } from 'hono';
import { listen, type RunningServer } from '../api/server.js';
import { blsReady } from '../chain/bls.js';
import { ValidatorRefusal, type ValidatorNode } from './node.js';

export function createValidatorApp(node: ValidatorNode): Hono {
  const app = new Hono();
  const run = (fn: (body: any) => Promise<unknown>) => async (c: any) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json({ ok: false, code: 'BAD_REQUEST', reason: 'body must be JSON' }, 400);
    }
    try {
      return c.json(await fn(body));
    } catch (e) {
      if (e instanceof ValidatorRefusal) return c.json({ ok: false, code: e.code, reason: e.message, validatorIndex: node.index }, 422);
      return c.json({ ok: false, code: 'INTERNAL', reason: (e as Error).message, validatorIndex: node.index }, 500);
    }
  };
  app.get('/v1/info', (c) => c.json(node.info()));
  app.get('/v1/health', (c) => c.json({ status: 'healthy', index: node.index }));
  app.post('/v1/attest', run((b) => node.attest(b)));
  app.post('/v1/observe', run((b) => node.observe(b)));
  app.post('/v1/results', run((b) => node.writeResult(b)));
  return app;
}

/** Listens once the fast BLS engine is loaded, so the first requests are not signed the slow way. */
export async function serveValidator(node: ValidatorNode, host = '127.0.0.1', port = 0): Promise<RunningServer> {
  await blsReady();
  return listen(createValidatorApp(node), host, port);
}
