/** Serve a Hono app over node:http (the gateway's API and a validator's alike); resolves once listening. */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';

/** How long close() lets requests in flight finish before it cuts their connections. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

export interface RunningServer {
  url: string;
  port: number;
  /**
   * Graceful stop: refuse new connections at once, close idle keep-alive connections, let requests in flight
   * answer (their connections close after the answer), and after `graceMs` (default 10 s) cut whatever is still
   * open. Resolves once every connection is gone.
   */
  close(opts?: { graceMs?: number }): Promise<void>;
}

export function listen(app: Pick<Hono, 'fetch'>, host: string, port: number): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    let server: ServerType;
    let closing: Promise<void> | undefined;
    // answers not yet sent: on shutdown they are told to close their connection (Connection: close)
    const pending = new Set<ServerResponse>();
    server = serve({ fetch: app.fetch, hostname: host, port }, (info) => {
      resolve({
        url: `http://${host}:${info.port}`,
        port: info.port,
        close: (opts = {}) => (closing ??= drain(server as Server, pending, opts.graceMs ?? DEFAULT_SHUTDOWN_GRACE_MS)),
      });
    });
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      if (closing) res.shouldKeepAlive = false;
      else {
        pending.add(res);
        res.once('close', () => pending.delete(res));
      }
    });
    server.once('error', reject);
    server.on('clientError', (err: NodeJS.ErrnoException, socket: import('node:stream').Duplex) => {
      // A request node:http cannot parse (malformed or folded header lines, bad framing) never reaches the app;
      // answer it in the API's error format instead of node's bare, untyped 400.
      // as node's default: no answer on a reset or unwritable socket, nor over a response already under way
      const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
      if (err.code === 'ECONNRESET' || !socket.writable || inFlight) return void socket.destroy();
      const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
      const body = JSON.stringify(
        tooLarge
          ? { error: 'Request headers too large', code: 'HEADERS_TOO_LARGE' }
          : { error: `Malformed HTTP request: ${err.code ?? 'unparseable'}`, code: 'MALFORMED_REQUEST' },
      );
      socket.end(
        `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\ncontent-type: application/json\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
  });
}

function drain(server: Server, pending: Set<ServerResponse>, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    for (const res of pending) if (!res.headersSent) res.shouldKeepAlive = false;
    pending.clear();
    // Once an answer in flight is written its connection turns idle: close it then (node only closes the
    // connections idle at the moment close() is called).
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
