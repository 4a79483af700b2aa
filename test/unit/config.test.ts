import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEVNET_CHAINS, loadConfig } from '../../src/config.js';
import { configProblems } from '../support/config.js';

describe('config', () => {
  it('has working embedded defaults', () => {
    const c = loadConfig({});
    expect(c.env).toBe('devnet');
    expect(c.api).toEqual({ host: '127.0.0.1', port: 8080, publicBaseUrl: 'http://127.0.0.1:8080', heapGrowingPercent: 30 });
    expect(c.databaseUrl).toBeUndefined();
    expect(c.temporal).toMatchObject({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'gateway' });
    expect(c.chains).toEqual(DEVNET_CHAINS);
    expect(c.chains.map((x) => [x.name, x.chainId])).toEqual([
      ['ethereum-sepolia', 11155111],
      ['polygon-amoy', 80002],
    ]);
    expect(c.validatorUrls).toEqual([]);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      GATEWAY_ENV: 'production',
      API_HOST: '0.0.0.0',
      API_PORT: '9000',
      PUBLIC_BASE_URL: 'https://gw.example.com',
      DATABASE_URL: 'postgres://u:p@db:5432/gw',
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'prod',
      TEMPORAL_TASK_QUEUE: 'q',
      CHAINS: JSON.stringify([{ name: 'base-sepolia', chainId: 84532, rpcUrl: 'https://rpc.example', confirmations: 5 }]),
      LEDGER_URL: 'https://ledger.example',
      VALIDATOR_URLS: 'http://v1:9000, http://v2:9000',
      LOG_LEVEL: 'debug',
    });
    expect(c.api.publicBaseUrl).toBe('https://gw.example.com');
    expect(c.databaseUrl).toBe('postgres://u:p@db:5432/gw');
    expect(c.chains).toEqual([{ name: 'base-sepolia', chainId: 84532, rpcUrl: 'https://rpc.example', confirmations: 5 }]);
    expect(c.validatorUrls).toEqual(['http://v1:9000', 'http://v2:9000']);
    expect(c.logLevel).toBe('debug');
  });

  it('reads the platform settings: rate limits, proxy trust, sandbox grant', () => {
    expect(loadConfig({}).platform).toEqual({
      defaultRpm: 60,
      ipRpm: 60,
      trustProxy: false,
      trustProxyHops: 1,
      maxKeysPerOrg: 50,
      sandbox: { identityQuota: 5, creditGrant: 10_000n },
      signupMaxPerHour: 100,
    });
    const c = loadConfig({
      RATE_LIMIT_DEFAULT_RPM: '120',
      RATE_LIMIT_IP_RPM: '10',
      TRUST_PROXY: 'true',
      SANDBOX_IDENTITY_QUOTA: '2',
      SANDBOX_CREDIT_GRANT: '123456789012345678901',
      MAX_API_KEYS_PER_ORG: '7',
      TRUST_PROXY_HOPS: '2',
      SIGNUP_MAX_PER_HOUR: '25',
    });
    expect(c.platform).toEqual({
      defaultRpm: 120,
      ipRpm: 10,
      trustProxy: true,
      trustProxyHops: 2,
      maxKeysPerOrg: 7,
      sandbox: { identityQuota: 2, creditGrant: 123456789012345678901n },
      signupMaxPerHour: 25,
    });
    expect(
      configProblems({ RATE_LIMIT_DEFAULT_RPM: '0', SANDBOX_CREDIT_GRANT: '-1', TRUST_PROXY: 'yes' })
        .map((p) => p.variable)
        .sort(),
    ).toEqual(['RATE_LIMIT_DEFAULT_RPM', 'SANDBOX_CREDIT_GRANT', 'TRUST_PROXY']);
  });

  it('reads the hourly self-service sign-up cap (0 turns sign-up off)', () => {
    expect(loadConfig({ SIGNUP_MAX_PER_HOUR: '0' }).platform.signupMaxPerHour).toBe(0);
    expect(loadConfig({ SIGNUP_MAX_PER_HOUR: '1000000' }).platform.signupMaxPerHour).toBe(1_000_000);
    for (const bad of ['-1', '2.5', 'many', '1000001']) {
      expect(configProblems({ SIGNUP_MAX_PER_HOUR: bad }).map((p) => p.variable)).toEqual(['SIGNUP_MAX_PER_HOUR']);
    }
  });

  it('reads the shutdown grace period (API requests and worker activities in flight on SIGTERM)', () => {
    expect(loadConfig({}).shutdownGraceMs).toBe(10_000);
    expect(loadConfig({ SHUTDOWN_GRACE_MS: '45000' }).shutdownGraceMs).toBe(45_000);
    expect(loadConfig({ SHUTDOWN_GRACE_MS: '0' }).shutdownGraceMs).toBe(0);
    for (const bad of ['-1', '1.5', 'soon', String(16 * 60_000)]) {
      expect(configProblems({ SHUTDOWN_GRACE_MS: bad }).map((p) => p.variable)).toEqual(['SHUTDOWN_GRACE_MS']);
    }
  });

  it("reads the API's heap growth bound (0 leaves V8's heuristics)", () => {
    expect(loadConfig({ API_HEAP_GROWING_PERCENT: '0' }).api.heapGrowingPercent).toBe(0);
    expect(loadConfig({ API_HEAP_GROWING_PERCENT: '100' }).api.heapGrowingPercent).toBe(100);
    for (const bad of ['-1', '2.5', 'some', '401']) {
      expect(configProblems({ API_HEAP_GROWING_PERCENT: bad }).map((p) => p.variable)).toEqual(['API_HEAP_GROWING_PERCENT']);
    }
  });

  it("reads how many webhook attempts a worker runs at once (its webhook task queue's slots)", () => {
    expect(loadConfig({}).webhooks.maxConcurrentAttempts).toBe(20);
    expect(loadConfig({ WEBHOOK_MAX_CONCURRENT_ATTEMPTS: '1' }).webhooks.maxConcurrentAttempts).toBe(1);
    expect(loadConfig({ WEBHOOK_MAX_CONCURRENT_ATTEMPTS: '1000' }).webhooks.maxConcurrentAttempts).toBe(1000);
    for (const bad of ['0', '-2', '2.5', 'lots', '1001']) {
      expect(configProblems({ WEBHOOK_MAX_CONCURRENT_ATTEMPTS: bad }).map((p) => p.variable)).toEqual(['WEBHOOK_MAX_CONCURRENT_ATTEMPTS']);
    }
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', API_PORT: '' }).api.port).toBe(8080);
  });

  it('names every bad variable', () => {
    const problems = configProblems({
      API_PORT: 'eighty',
      DATABASE_URL: 'mysql://x',
      TEMPORAL_ADDRESS: 'no-port',
      LOG_LEVEL: 'loud',
      VALIDATOR_URLS: 'http://ok:1,not a url',
    });
    expect(problems.map((p) => p.variable).sort()).toEqual(['API_PORT', 'DATABASE_URL', 'LOG_LEVEL', 'TEMPORAL_ADDRESS', 'VALIDATOR_URLS'].sort());
    expect(problems.find((p) => p.variable === 'DATABASE_URL')!.message).toMatch(/postgres/);
  });

  it('rejects a malformed chain registry with the field named', () => {
    expect(configProblems({ CHAINS: 'not json' })[0]).toMatchObject({ variable: 'CHAINS', message: expect.stringMatching(/JSON array/) });
    const p = configProblems({ CHAINS: JSON.stringify([{ name: 'x', chainId: -1, rpcUrl: 'http://a' }]) });
    expect(p[0].variable).toBe('CHAINS');
    expect(p[0].message).toMatch(/^0\.chainId/);
    const dup = configProblems({
      CHAINS: JSON.stringify([
        { name: 'a', chainId: 1, rpcUrl: 'http://a' },
        { name: 'a', chainId: 2, rpcUrl: 'http://b' },
      ]),
    });
    expect(dup[0].message).toMatch(/unique/);
  });

  it('the message of the error names the variable', () => {
    expect(() => loadConfig({ API_PORT: '70000' })).toThrow(/API_PORT/);
  });

  it('is the only module that reads configuration from process.env', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith('.ts') && path !== join('src', 'config.ts')) {
          // PATH and HOME (binary lookups, a child's environment) are the operating system's business, not
          // configuration; a quoted 'process.env.X' is a bundler's define key, not a read.
          const uses = readFileSync(path, 'utf8').match(/(?<!['"])process\.env(?!\.(PATH|HOME)\b)(\.\w+|\[)/g);
          if (uses) offenders.push(`${path}: ${uses.join(', ')}`);
        }
      }
    };
    walk('src');
    expect(offenders).toEqual([]);
  });
});
