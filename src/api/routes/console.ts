/**
 * The customer console (public page, src/console): GET /console serves the page; GET /console/assets/{file} its
 * bundled script and stylesheet (versioned names, built once per process on first use by src/console/bundle.ts).
 * The page itself needs no key: it signs in with an API key in the browser and calls the API with it.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { consoleBundle } from '../../console/bundle.js';
import { CONSOLE_CSP, consolePage } from '../../console/page.js';
import type { AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { errorResponses, RATE_LIMIT_HEADERS } from '../schemas/common.js';

export function registerConsoleRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/console',
      tags: ['Console'],
      summary: 'Customer console',
      description:
        "The organization's identities, intents, proofs (verified in the browser), pending signatures and webhooks, in the browser. Signs in with an API key; every asset is served by this gateway (/console/assets/…).",
      security: [],
      responses: {
        200: { description: 'HTML page', headers: RATE_LIMIT_HEADERS, content: { 'text/html': { schema: z.string() } } },
        ...errorResponses(429, 500),
      },
    }),
    (async (c: Context<AppEnv>) => {
      const bundle = await consoleBundle();
      c.header('Content-Security-Policy', CONSOLE_CSP);
      c.header('Cache-Control', 'no-cache');
      c.header('X-Content-Type-Options', 'nosniff');
      return c.html(consolePage(bundle));
    }) as never,
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/console/assets/{file}',
      tags: ['Console'],
      summary: 'A script or stylesheet of the console',
      description: 'The console bundle (JavaScript, under 200 KB gzipped) and its stylesheet, named by content hash as the page names them; cached for a year.',
      security: [],
      request: {
        params: z.object({
          file: z.string().openapi({ param: { name: 'file', in: 'path' }, description: 'Asset file name, as the page names it (console-<hash>.js or .css)' }),
        }),
      },
      responses: {
        200: {
          description: 'JavaScript or CSS',
          headers: RATE_LIMIT_HEADERS,
          content: { 'text/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } },
        },
        ...errorResponses(404, 429),
      },
    }),
    (async (c: Context<AppEnv>) => {
      const bundle = await consoleBundle();
      const file = c.req.param('file');
      const found = [bundle.script, bundle.style].find((a) => a.name === file);
      if (!found) throw new ApiError(404, 'NOT_FOUND', 'No such asset');
      return c.body(new Uint8Array(found.body), 200, {
        'Content-Type': found.contentType,
        'Cache-Control': 'public, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
      });
    }) as never,
  );
}
