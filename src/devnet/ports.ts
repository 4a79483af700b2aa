import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A port that was free a moment ago, for a process that will listen on it soon. It is picked below the kernel's
 * ephemeral range (ip_local_port_range), where the OS never hands ports to outgoing connections: a port picked
 * inside that range (listen(0)) can be taken by any process's next outgoing connection while, say, Temporal starts
 * before the anvil that was to listen on it (seen in CI as anvil exiting with "address in use"). Falls back to a
 * port the OS picks when none of 50 random tries below the range is free.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const low = 20_000;
  const high = Math.min(ephemeralLow(), 65_536) - 1;
  for (let i = 0; high > low && i < 50; i++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    // not one this process handed out already (callers often pick several at once, before anything listens)
    if (handedOut.has(port)) continue;
    handedOut.add(port); // before the check: concurrent callers must not pick it meanwhile
    if (await portIsFree(port, host)) return port;
    handedOut.delete(port);
  }
  return osPickedPort(host);
}
const handedOut = new Set<number>();

/** The first port of the kernel's ephemeral range (Linux; 32768, the kernel's default, elsewhere). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function osPickedPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** True when nothing listens on host:port. */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}
