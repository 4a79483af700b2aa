/** Builds the Hono app from injected dependencies. Routes validate and delegate; they hold no state. */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from './deps.js';
import { notFound, onError } from './errors.js';
import { requestId } from './middleware/request-id.js';
import { registerEventRoutes } from './routes/events.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerWebhookRoutes } from './routes/webhooks.js';

export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        const issue = result.error.issues[0];
        const field = issue?.path.join('.') || '(body)';
        return c.json(
          { error: `${field}: ${issue?.message ?? 'invalid'}`, code: 'VALIDATION_ERROR', details: result.error.issues },
          400,
        );
      }
    },
  });
  app.use('*', requestId(deps.logger));
  app.onError(onError);
  app.notFound(notFound);
  registerHealthRoutes(app, deps);
  registerWebhookRoutes(app, deps);
  registerEventRoutes(app, deps);
  return app;
}
