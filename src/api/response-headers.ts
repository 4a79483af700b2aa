/**
 * Headers that every response carries (X-Request-Id, X-RateLimit-*), set before the route answers. Served by
 * @hono/node-server they go straight onto the Node response, which merges them with the headers of whatever
 * response the route builds (a Response object too; the route's own headers win), so that Hono builds no Headers
 * object for a plain JSON answer; in memory (`app.request`, no Node response) through `c.header`.
 */
import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import type { AppEnv } from './deps.js';

/** The Node response of a request served by @hono/node-server, while its headers can still be set. */
export function nodeResponse(c: Context<AppEnv>): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  return outgoing && !outgoing.headersSent ? outgoing : undefined;
}

export function setResponseHeader(c: Context<AppEnv>, name: string, value: string): void {
  const outgoing = nodeResponse(c);
  if (outgoing) outgoing.setHeader(name, value);
  else c.header(name, value);
}
