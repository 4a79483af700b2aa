/** Serve a Hono app over node:http; resolves once listening. */
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export function listen(app: Hono<any>, host: string, port: number): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    let server: ServerType;
    server = serve({ fetch: app.fetch, hostname: host, port }, (info) => {
      resolve({
        url: `http://${host}:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((res) => {
            // stop keep-alive sockets too, so shutdown does not wait for idle clients
            (server as import('node:http').Server).closeAllConnections?.();
            server.close(() => res());
          }),
      });
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
