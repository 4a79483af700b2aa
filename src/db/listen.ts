/**
 * Postgres LISTEN on one dedicated connection (a pooled connection cannot hold a LISTEN: it goes back to the pool).
 * The connection is remade when it drops, with a growing pause (0.5 s … 15 s); `onState(false)` is called when it
 * drops and `onState(true)` each time it listens again: a subscriber must treat every notification sent while it was
 * down as lost (they are: Postgres queues notifications only for connected listeners).
 */
import type pg from 'pg';

export interface Listener {
  close(): Promise<void>;
}

export function listenPostgres(
  Client: typeof pg.Client,
  url: string,
  channel: string,
  onMessage: (payload: string) => void,
  onState: (listening: boolean) => void,
): Listener {
  let closed = false;
  let client: pg.Client | undefined;
  let pause = 500;
  let timer: NodeJS.Timeout | undefined;

  const connect = async () => {
    if (closed) return;
    const c = new Client({ connectionString: url, connectionTimeoutMillis: 10_000, keepAlive: true });
    client = c;
    let down = false;
    const lost = () => {
      if (down) return;
      down = true;
      onState(false);
      c.end().catch(() => {});
      if (!closed) {
        timer = setTimeout(connect, pause);
        timer.unref();
        pause = Math.min(pause * 2, 15_000);
      }
    };
    c.on('error', lost);
    c.on('end', lost);
    c.on('notification', (m) => {
      if (m.channel === channel) onMessage(m.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`LISTEN "${channel.replaceAll('"', '""')}"`);
      if (closed || down) return;
      pause = 500;
      onState(true);
    } catch {
      lost();
    }
  };
  void connect();

  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      await client?.end().catch(() => {});
    },
  };
}
