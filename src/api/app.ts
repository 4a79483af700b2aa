/** Builds the Hono app from injected dependencies. Routes validate and delegate; they hold no state. */
import { OpenAPIHono } from '@hono/zod-openapi';
import { apiLedgerClient } from '../services/deps.js';
import type { AppDeps, AppDepsInput, AppEnv } from './deps.js';
import { errorBody, fieldOfPath, onError } from './errors.js';
import { findHostileText } from './hostile-text.js';
import { apiKeyAuth } from './middleware/auth.js';
import { bodyLimit } from './middleware/body-limit.js';
import { HttpMetrics, httpMetrics } from './middleware/metrics.js';
import { requestId } from './middleware/request-id.js';
import { routeCheck, routeNotFound } from './middleware/routing.js';
import { registerDocsRoutes } from './openapi.js';
import { notFoundOfParamIssues } from './schemas/common.js';
import { registerAdminApiKeyRoutes } from './routes/admin-api-keys.js';
import { registerEventRoutes } from './routes/events.js';
import { registerCosignRoutes } from './routes/cosign.js';
import { registerCreditRoutes } from './routes/credits.js';
import { registerGovernanceRoutes } from './routes/governance.js';
import { registerChainRoutes } from './routes/chains.js';
import { registerConsoleRoutes } from './routes/console.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerMeRoutes } from './routes/me.js';
import { registerIdentityRoutes } from './routes/identity.js';
import { registerTransactionRoutes } from './routes/transaction.js';
import { registerProofRoutes } from './routes/proof.js';
import { registerMetricsRoute } from './routes/metrics.js';
import { registerPortalRoutes } from './routes/portal.js';
import { registerSigningDataRoutes } from './routes/signing-data.js';
import { registerWebhookRoutes } from './routes/webhooks.js';

/** Largest request body accepted; larger bodies get 413 PAYLOAD_TOO_LARGE. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Order: request id + log line → metrics → route check (a path no route has is a 404, a method it does not take a
 * 405, with or without a key) → API-key auth and rate limit (every response gets the X-RateLimit-* headers;
 * everything else but the public paths needs a valid key) → body limit → routes. Routes demand scopes and opt into
 * Idempotency-Key through secureRoute (src/api/secure-route.ts).
 */
export function createApp(input: AppDepsInput, opts: { metrics?: HttpMetrics } = {}): OpenAPIHono<AppEnv> {
  const deps: AppDeps = { ...input, ledger: input.ledger ?? apiLedgerClient(input.config) };
  const metrics = opts.metrics ?? new HttpMetrics();
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      // text with a NUL or a lone surrogate, anywhere in a validated input, is refused before the schema's own
      // issues (src/api/hostile-text.ts); on success the parsed value is checked, which is what the handler gets
      // (a path parameter names a resource, so such a value names none: the route's 404 for a malformed id, or
      // the plain NOT_FOUND where its schema accepted the value)
      const hostile = result.target !== 'param' || result.success ? findHostileText((result as { data?: unknown }).data) : undefined;
      if (hostile && result.target === 'param') return c.json(errorBody('Not found', 'NOT_FOUND'), 404);
      if (hostile) {
        const field = result.target === 'json' || hostile.field !== 'body' ? hostile.field : result.target;
        return c.json(errorBody(`${field}: ${hostile.problem}`, 'VALIDATION_ERROR', { field }), 400);
      }
      if (!result.success) {
        const issues = result.error.issues;
        // a path parameter names a resource: a value that cannot name one is not found, exactly like an unknown id
        if (result.target === 'param') {
          const nf = notFoundOfParamIssues(issues);
          return c.json(errorBody(nf.message, nf.code, nf.details), 404);
        }
        // details.field names the first failing field, as on every VALIDATION_ERROR; details.issues has them all
        const field = fieldOfPath(issues[0]?.path ?? []) || (result.target === 'json' ? 'body' : result.target);
        return c.json({ error: `${field}: ${issues[0]?.message ?? 'invalid'}`, code: 'VALIDATION_ERROR', details: { field, issues } }, 400);
      }
    },
  });
  app.use('*', requestId(deps.logger));
  app.use('*', httpMetrics(metrics));
  app.use('*', routeCheck(app));
  app.use('*', apiKeyAuth(deps));
  app.use('*', bodyLimit(MAX_BODY_BYTES));
  app.onError(onError);
  app.notFound(routeNotFound);
  registerHealthRoutes(app, deps);
  registerMeRoutes(app, deps);
  registerAdminApiKeyRoutes(app, deps);
  registerIdentityRoutes(app, deps);
  registerCreditRoutes(app, deps);
  registerTransactionRoutes(app, deps);
  registerProofRoutes(app, deps);
  registerChainRoutes(app, deps);
  registerGovernanceRoutes(app, deps);
  registerCosignRoutes(app, deps);
  registerSigningDataRoutes(app, deps);
  registerPortalRoutes(app, deps);
  registerConsoleRoutes(app);
  registerMetricsRoute(app, deps, metrics);
  registerWebhookRoutes(app, deps);
  registerEventRoutes(app, deps);
  registerDocsRoutes(app, deps); // last: describes every route registered above
  return app;
}
