/**
 * freePort picks ports for processes that listen on them later. They come from below the kernel's ephemeral range,
 * which outgoing connections use, so no connection can take one meanwhile; and concurrent callers get distinct ports.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/devnet/ports.js';

describe('freePort', () => {
  it('gives distinct, bindable ports below the ephemeral range to concurrent callers', async () => {
    const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    expect(new Set(ports).size).toBe(50);
    for (const p of ports) {
      expect(p).toBeGreaterThanOrEqual(20_000);
      expect(p).toBeLessThan(ephemeralLow);
    }
    const servers = await Promise.all(
      ports.map(
        (p) =>
          new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
            const s = createServer();
            s.once('error', reject);
            s.listen(p, '127.0.0.1', () => resolve(s));
          }),
      ),
    );
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });
});
