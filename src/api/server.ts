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
  });
}
