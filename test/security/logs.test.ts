/**
 * No secret in the logs: the whole devnet in-process (Temporal, chains, ledger, validators, worker, API) logging at
 * debug level into memory, a realistic flow through the API (keys created and rotated, a webhook endpoint with its
 * own secret and a rotated one, an identity provisioned on both chains, a transaction prepared), then every log line
 * of the api and worker and every file under the data directory's logs/ is searched for the raw API keys, the
 * webhook secrets and the sponsor and relayer private keys.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../src/devnet/index.js';
import { freePortDevnet } from '../support/devnet-config.js';
import { createLogger } from '../../src/log.js';
import { newClientKey, uniqueName } from '../identity/devnet.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

function filesUnder(dir: string): string[] {
  let out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    out = statSync(p).isDirectory() ? out.concat(filesUnder(p)) : out.concat(p);
  }
  return out;
}

describe('security: no secret in the logs', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-seclogs-'));
  const lines: string[] = [];
  let devnet: Devnet | undefined;
  afterAll(async () => {
    await devnet?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a full flow at debug level logs none of the keys and secrets it handles', { timeout: 420_000 }, async () => {
    const { config, temporalProfile } = await freePortDevnet(dataDir, {
      LOG_LEVEL: 'debug',
      RATE_LIMIT_DEFAULT_RPM: '10000', // the bootstrap key's limit, which bounds the keys it creates
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true', // the receiver is on loopback
      TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH,
    });
    const logger = createLogger('debug', { process: 'devnet' }, (line) => lines.push(line));
    devnet = await startDevnet(config, logger, { temporalProfile: { ...temporalProfile, dbFilename: join(dataDir, 'temporal.sqlite') } });
    const { apiUrl, adminKey } = devnet.summary;
    expect(adminKey).toMatch(/^ck_live_/);
    const call = async (key: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${apiUrl}${path}`, {
        method,
        headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
    };
    const secrets: Record<string, string> = { 'bootstrap admin key': adminKey! };

    // keys: created, used, rotated (the new one used), one used with a wrong scope and one mistyped
    const created = await call(adminKey!, 'POST', '/v1/admin/api-keys', { name: 'ops', permissions: ['read', 'write', 'admin'], rate_limit_rpm: 10_000 });
    expect(created.status).toBe(201);
    secrets['created key'] = created.body.api_key.key;
    const rotated = await call(adminKey!, 'POST', `/v1/admin/api-keys/${created.body.api_key.id}/rotate`);
    expect(rotated.status).toBe(200);
    const key = rotated.body.new_key.key as string;
    secrets['rotated key'] = key;
    expect((await call(secrets['created key'], 'GET', '/v1/identities')).status).toBe(403); // the old one, refused
    secrets['mistyped key'] = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    expect((await call(secrets['mistyped key'], 'GET', '/v1/identities')).status).toBe(401);

    // a webhook endpoint with a secret of our own, then a rotated one
    const given = `whsec_${randomBytes(32).toString('base64')}`;
    secrets['webhook secret (given)'] = given;
    const ep = await call(key, 'POST', '/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', secret: given, skip_verification: true });
    expect(ep.status).toBe(201);
    const rot = await call(key, 'POST', `/v1/webhooks/endpoints/${ep.body.id}/rotate-secret`);
    expect(rot.status).toBe(200);
    const newSecret = JSON.stringify(rot.body).match(/whsec_[A-Za-z0-9+/=]+/)?.[0];
    expect(newSecret).toBeDefined();
    secrets['webhook secret (rotated)'] = newSecret!;

    // an identity on both chains, provisioned by the worker, then a transaction prepared for it
    const client = newClientKey();
    const idRes = await call(key, 'POST', '/v1/identity', {
      name: uniqueName('sec'),
      public_key: client.publicKey,
      chains: ['ethereum-sepolia', 'polygon-amoy'],
      credits: 100,
    });
    expect(idRes.status, JSON.stringify(idRes.body)).toBe(202);
    let identity: Json;
    for (const deadline = Date.now() + 180_000; ; ) {
      identity = (await call(key, 'GET', `/v1/identity/${idRes.body.identity.id}`)).body;
      if (identity.status !== 'creating' || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(identity.status, JSON.stringify(identity)).toBe('active');
    const account = identity.chain_accounts[0].address;
    const prep = await call(key, 'POST', '/v1/transaction', {
      identity_id: identity.id,
      intent: {
        adiUrl: identity.adi_url,
        legs: [{ legId: 'pay-1', chain: 'ethereum-sepolia', chainId: 11155111, fromAddress: account, toAddress: `0x${'22'.repeat(20)}`, amount: '1' }],
      },
    });
    expect(prep.status, JSON.stringify(prep.body)).toBe(201);

    const cfg = devnet.config;
    expect(cfg.sponsorKey).toBeTruthy();
    expect(cfg.relayerPrivateKey).toBeTruthy();
    secrets.SPONSOR_KEY = cfg.sponsorKey!.replace(/^0x/, '');
    secrets.RELAYER_PRIVATE_KEY = cfg.relayerPrivateKey!.replace(/^0x/, '');

    // the logs really are there: requests of the flow, with their request ids, and the worker's provisioning
    expect(lines.length).toBeGreaterThan(20);
    const all = lines.join('\n');
    expect(all).toContain('/v1/webhooks/endpoints');
    expect(all).toContain(identity.id);
    const files = filesUnder(join(dataDir, 'logs'));
    expect(files.length).toBeGreaterThan(0);
    // anvil prints the private keys of its ten well-known dev accounts at start (the devnet relayer is the first):
    // that banner list is anvil's, not ours, and is the only part of its log left out
    const banner = /^\(\d+\) 0x[0-9a-fA-F]{64}\s*$/gm;
    const corpus = [
      { where: 'api and worker log', text: all },
      ...files.map((f) => ({ where: f, text: readFileSync(f, 'utf8').replace(/anvil-[^/]*\.log$/.test(f) ? banner : /$^/, '') })),
    ];
    for (const [what, secret] of Object.entries(secrets)) {
      const needles = [secret, secret.toLowerCase()];
      if (secret.startsWith('whsec_')) needles.push(secret.slice('whsec_'.length));
      for (const { where, text } of corpus) {
        for (const n of needles) expect(text.includes(n), `${what} appears in ${where}`).toBe(false);
      }
    }
  });
});
