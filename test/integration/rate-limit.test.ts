/** Rate limits: per-key limits (default 60/min, per-key rate_limit_rpm), per-IP without a key, headers on
 * every response, 429 body + Retry-After, and one limit shared exactly by several API processes on one database. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApp } from '../../src/api/app.js';
import { listen, type RunningServer } from '../../src/net/server.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { PROJECT_ROOT } from '../../src/devnet/temporal.js';
import { createScratchDatabase } from '../../src/devnet/postgres.js';
import { dbKinds, quietLogger, testConfig, testTemporalClient } from '../support/env.js';
import { createTestOrgAndKey, startTestApp, type TestApp } from '../support/platform.js';
import { compiledEntry, ensureBuild } from '../support/build.js';

// the entry points run from the compiled build, as `npm run api|worker` runs them (built here when stale)
beforeAll(ensureBuild, 300_000);

const MINUTE = 60_000;
// a fixed instant in the middle of a window, so a test never straddles a window boundary
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE + 20_000;

describe.each(dbKinds())('rate limits (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { clockMs: T0, env: { TRUST_PROXY: 'true', RATE_LIMIT_IP_RPM: '5' } });
  });
  afterAll(async () => t?.close());

  it('default is 60 per minute per key; headers on every response; X-RateLimit-Reset is the Unix time of the window end', async () => {
    const k = await createTestOrgAndKey(t.db, { isAdmin: true });
    const res = await t.call('/v1/admin/api-keys', { key: k.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('59');
    const windowEnd = (Math.floor(T0 / MINUTE) + 1) * 60;
    expect(res.headers.get('x-ratelimit-reset')).toBe(String(windowEnd));
    // also on errors and unknown routes, counted against the same key
    const nf = await t.call('/v1/none', { key: k.key });
    expect(nf.status).toBe(404);
    expect(nf.headers.get('x-ratelimit-remaining')).toBe('58');
    const bad = await t.call('/v1/admin/api-keys', { method: 'POST', key: k.key, body: '{}' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-ratelimit-remaining')).toBe('57');
  });

  it('per-key rate_limit_rpm: the request over the limit gets 429 with the spec body and Retry-After; other keys are unaffected', async () => {
    const k = await createTestOrgAndKey(t.db, { isAdmin: true, rateLimitRpm: 3 });
    const other = await createTestOrgAndKey(t.db, { orgId: k.orgId, isAdmin: true, rateLimitRpm: 3 });
    for (let i = 0; i < 3; i++) {
      const r = await t.call('/v1/admin/api-keys', { key: k.key });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
    }
    const over = await t.call('/v1/admin/api-keys', { key: k.key });
    expect(over.status).toBe(429);
    expect(await over.json()).toEqual({ error: 'Rate limit exceeded', code: 'RATE_LIMIT_EXCEEDED' });
    expect(over.headers.get('retry-after')).toBe('40'); // 20 s into the window
    expect(over.headers.get('x-ratelimit-limit')).toBe('3');
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(over.headers.get('x-request-id')).toBeTruthy();
    expect((await t.call('/v1/admin/api-keys', { key: other.key })).status).toBe(200);

    t.clock.ms += MINUTE; // next window
    try {
      const again = await t.call('/v1/admin/api-keys', { key: k.key });
      expect(again.status).toBe(200);
      expect(again.headers.get('x-ratelimit-remaining')).toBe('2');
    } finally {
      t.clock.ms -= MINUTE;
    }
  });

  it('without a valid key the limit is per client IP (RATE_LIMIT_IP_RPM), also for 401s', async () => {
    const ip = (n: number) => ({ 'X-Forwarded-For': `198.51.100.${n}` });
    for (let i = 0; i < 5; i++) {
      const r = await t.call('/docs/json', { headers: ip(1) });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBe('5');
    }
    expect((await t.call('/docs/json', { headers: ip(1) })).status).toBe(429);
    const unauth = await t.call('/v1/admin/api-keys', { headers: ip(1) });
    expect(unauth.status).toBe(429); // guessing keys from one address is throttled too
    expect((await t.call('/v1/admin/api-keys', { headers: ip(2) })).status).toBe(401);
    // a valid key is limited by its own bucket, whatever the address
    const k = await createTestOrgAndKey(t.db, { isAdmin: true });
    expect((await t.call('/v1/admin/api-keys', { key: k.key, headers: ip(1) })).status).toBe(200);
  });
});

async function burst(urls: string[], key: string, n: number): Promise<Response[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => fetch(`${urls[i % urls.length]}/v1/admin/api-keys`, { headers: { 'X-API-Key': key } })));
}

function summarize(responses: Response[]) {
  const by: Record<number, number> = {};
  for (const r of responses) by[r.status] = (by[r.status] ?? 0) + 1;
  return by;
}

describe.skipIf(!dbKinds().includes('postgres'))('one limit shared by several API processes on one Postgres database', () => {
  const LIMIT = 50;
  const N = 200;
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  const databases: Database[] = [];
  beforeAll(async () => {
    scratch = await createScratchDatabase(inject('postgresUrl'));
  });
  afterAll(async () => {
    for (const d of databases) await d.close();
    await scratch?.drop();
  });

  it(`two app instances (own connection pools, real HTTP) let exactly ${LIMIT} of ${N} concurrent requests through`, async () => {
    const servers: RunningServer[] = [];
    const clients: Awaited<ReturnType<typeof testTemporalClient>>[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const config = testConfig();
        const database = await openDatabase({ databaseUrl: scratch.url });
        databases.push(database);
        const temporal = await testTemporalClient(config);
        clients.push(temporal);
        const app = createApp({ config, database, temporal, logger: quietLogger, now: () => T0 });
        servers.push(await listen(app, '127.0.0.1', 0));
      }
      const k = await createTestOrgAndKey(databases[0].db, { isAdmin: true, rateLimitRpm: LIMIT });
      const responses = await burst(
        servers.map((s) => s.url),
        k.key,
        N,
      );
      expect(summarize(responses)).toEqual({ 200: LIMIT, 429: N - LIMIT });
      // each process answered both kinds, and every remaining count from 49 down to 0 was handed out once
      const remaining = responses.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-ratelimit-remaining')));
      expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
    } finally {
      for (const s of servers) await s.close();
      for (const c of clients) await c.connection.close();
    }
  });

  it(`two real API processes (npm run api) share one limit exactly under concurrent load`, async () => {
    const procs: ChildProcess[] = [];
    try {
      const k = await createTestOrgAndKey((await openDb()).db, { isAdmin: true, rateLimitRpm: LIMIT });
      const urls = await Promise.all([0, 1].map(() => startApiProcess(procs)));
      // real clocks: start the burst early in a window so it cannot straddle two
      const into = Date.now() % MINUTE;
      if (into > 50_000) await new Promise((r) => setTimeout(r, MINUTE - into + 200));
      const responses = await burst(urls, k.key, N);
      expect(summarize(responses)).toEqual({ 200: LIMIT, 429: N - LIMIT });
      const resets = new Set(responses.map((r) => r.headers.get('x-ratelimit-reset')));
      expect(resets.size).toBe(1);
      const reset = Number([...resets][0]);
      expect(reset * 1000 - Date.now()).toBeGreaterThan(0);
      expect(reset * 1000 - Date.now()).toBeLessThanOrEqual(MINUTE);
    } finally {
      for (const p of procs) p.kill('SIGTERM');
      await Promise.all(procs.map((p) => new Promise((r) => (p.exitCode !== null ? r(null) : p.once('exit', r)))));
    }
  }, 120_000);

  async function openDb() {
    const d = await openDatabase({ databaseUrl: scratch.url });
    databases.push(d);
    return d;
  }

  function startApiProcess(procs: ChildProcess[]): Promise<string> {
    const child = spawn(process.execPath, compiledEntry('api'), {
      cwd: PROJECT_ROOT,
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: scratch.url,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        API_PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    procs.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`api process did not start: ${stderr}`)), 60_000);
      child.once('exit', (code) => reject(new Error(`api process exited ${code}: ${stderr}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          const rec = JSON.parse(line) as { msg?: string; url?: string };
          if (rec.msg === 'api listening' && rec.url) {
            clearTimeout(timer);
            resolve(rec.url);
          }
        } catch {
          /* not a log line */
        }
      });
    });
  }
});
