/** Standard Webhooks signing, checked against the reference `standardwebhooks` library both ways; URL rules. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { envelopeOf, EVENT_SCHEMAS, EVENT_TYPES } from '../../src/webhooks/catalogue.js';
import { chainAccountPayload, currentEventData } from '../../src/webhooks/stored-forms.js';
import { runWebhookCli } from '../../src/webhooks/cli.js';
import { generateSecret, isValidSecret, sign, signedHeaders, SignatureError, verify } from '../../src/webhooks/signing.js';
import { checkWebhookUrl, isPrivateAddress, UrlRejected } from '../../src/webhooks/url.js';
import { sendWebhook } from '../../src/webhooks/sender.js';
import { startReceiver } from '../support/receiver.js';

const body = JSON.stringify({ id: 'e1', type: 'identity.active', data: { a: 1 } });

describe('signing', () => {
  it('generates whsec_ secrets of 32 bytes that the library accepts', () => {
    const s = generateSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(isValidSecret(s)).toBe(true);
    expect(isValidSecret(`whsec_${Buffer.alloc(8).toString('base64')}`)).toBe(false);
    expect(isValidSecret('not-a-secret-at-all')).toBe(false);
    expect(() => new Webhook(s)).not.toThrow();
  });

  it("our signature verifies with the standardwebhooks library, and the library's with ours", () => {
    const secret = generateSecret();
    const ts = Math.floor(Date.now() / 1000);
    const headers = signedHeaders([secret], 'msg_1', ts, body);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    const theirs = new Webhook(secret).sign('msg_1', new Date(ts * 1000), body);
    expect(theirs).toBe(sign(secret, 'msg_1', ts, body));
    expect(() => verify(secret, { ...headers }, body)).not.toThrow();
  });

  it('rejects a changed body, a wrong secret and a stale timestamp', () => {
    const secret = generateSecret();
    const ts = Math.floor(Date.now() / 1000);
    const headers = { ...signedHeaders([secret], 'msg_1', ts, body) };
    expect(() => new Webhook(secret).verify(body.replace('1', '2'), headers)).toThrow();
    expect(() => verify(secret, headers, body.replace('1', '2'))).toThrow(SignatureError);
    expect(() => verify(generateSecret(), headers, body)).toThrow('no v1 signature matches');
    const old = { ...signedHeaders([secret], 'msg_1', ts - 3600, body) };
    expect(() => new Webhook(secret).verify(body, old)).toThrow();
    expect(() => verify(secret, old, body)).toThrow(/away from now/);
  });

  it('during a rotation both secrets verify one message', () => {
    const [oldS, newS] = [generateSecret(), generateSecret()];
    const headers = { ...signedHeaders([newS, oldS], 'msg_2', Math.floor(Date.now() / 1000), body) };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(newS).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(oldS).verify(body, headers)).not.toThrow();
  });
});

describe('cli webhook', () => {
  const run = (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = runWebhookCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('sign then verify round-trips; a changed body is invalid (exit 1); bad usage exits 2', () => {
    const secret = generateSecret();
    const signed = run(['sign', '--secret', secret, '--id', 'evt_9', '--body', body]);
    expect(signed.code).toBe(0);
    const ok = run(['verify', '--secret', secret, '--headers', signed.out, '--body', body]);
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.out).toContain('valid: webhook-id evt_9 identity.active');
    const h = JSON.parse(signed.out) as Record<string, string>;
    const bad = run(['verify', '--secret', secret, ...Object.entries(h).flatMap(([k, v]) => ['--header', `${k}=${v}`]), '--body', `${body} `]);
    expect(bad.code).toBe(1);
    expect(run(['verify', '--body', body]).code).toBe(2);
  });

  it('--tolerance accepts an old message from the delivery log', () => {
    const secret = generateSecret();
    const headers = JSON.stringify(signedHeaders([secret], 'evt_1', Math.floor(Date.now() / 1000) - 86400, body));
    expect(run(['verify', '--secret', secret, '--headers', headers, '--body', body]).code).toBe(1);
    expect(run(['verify', '--secret', secret, '--headers', headers, '--body', body, '--tolerance', '100000']).code).toBe(0);
  });
});

describe('event catalogue', () => {
  it('names the required types and the endpoint-disabled event', () => {
    expect(EVENT_TYPES).toEqual(
      expect.arrayContaining([
        'identity.active',
        'identity.failed',
        'transaction.submitted',
        'transaction.completed',
        'transaction.failed',
        'governance.executed',
        'governance.rejected',
        'inbox.action_pending',
        'webhook_endpoint.disabled',
      ]),
    );
  });
  it('rejects payloads missing required fields or carrying fields it does not list', () => {
    expect(EVENT_SCHEMAS['transaction.failed'].safeParse({ intent_id: 'x' }).success).toBe(false);
    const failed = { identity_id: '3f1c2a9e-0d4b-4c57-9a0e-2b8f5d7c6e11', name: 'acme', stage: 'credits', error: 'boom' };
    expect(EVENT_SCHEMAS['identity.failed'].parse(failed)).toEqual(failed);
    expect(EVENT_SCHEMAS['identity.failed'].safeParse({ ...failed, extra: 1 }).success).toBe(false);
  });
  it('holds hashes, numbers and chains in the forms of the API conventions', () => {
    const id = '3f1c2a9e-0d4b-4c57-9a0e-2b8f5d7c6e11';
    const submitted = { intent_id: id, identity_id: id, operation_id: 'op', tx_hash: 'ab'.repeat(32) };
    expect(EVENT_SCHEMAS['transaction.submitted'].safeParse(submitted).success).toBe(true);
    expect(EVENT_SCHEMAS['transaction.submitted'].safeParse({ ...submitted, tx_hash: `0x${'ab'.repeat(32)}` }).success).toBe(false);
    const exec = { leg_id: 'l', chain: 'polygon-amoy', evm_chain_id: 80002, tx_hash: `0x${'ab'.repeat(32)}` };
    const completed = { intent_id: id, identity_id: id, operation_id: 'op', proof_id: id, executions: [exec] };
    expect(EVENT_SCHEMAS['transaction.completed'].safeParse(completed).success).toBe(true);
    for (const bad of [{ evm_chain_id: '80002' }, { tx_hash: 'ab'.repeat(32) }, { chain_id: '80002' }]) {
      expect(EVENT_SCHEMAS['transaction.completed'].safeParse({ ...completed, executions: [{ ...exec, ...bad }] }).success, JSON.stringify(bad)).toBe(false);
    }
  });
  it('serves data already in the current forms unchanged', () => {
    const id = '3f1c2a9e-0d4b-4c57-9a0e-2b8f5d7c6e11';
    const active = {
      identity_id: id,
      name: 'acme',
      adi_url: 'acc://acme.acme',
      book_url: 'acc://acme.acme/book',
      key_page_url: 'acc://acme.acme/book/1',
      data_account_url: 'acc://acme.acme/data',
      public_key_hash: 'ab'.repeat(32),
      credit_balance: 7,
      chain_accounts: [chainAccountPayload({ chain: 'polygon-amoy', evmChainId: 80002n, address: `0x${'ab'.repeat(20)}`, deploymentTx: null })],
    };
    expect(EVENT_SCHEMAS['identity.active'].parse(active)).toEqual(active);
    const env = envelopeOf({ id, type: 'identity.active', createdAt: new Date(0), resourceId: id, sequence: 1, data: active });
    expect(JSON.stringify(env.data)).toBe(JSON.stringify(active));
    const pending = {
      pending_action_id: id,
      identity_id: id,
      category: 'transactions',
      tx_hash: 'ab'.repeat(32),
      required_signatures: 2,
      collected_signatures: 1,
      remaining_needed: 1,
      expires_at: null,
    };
    expect(EVENT_SCHEMAS['inbox.action_pending'].parse(pending)).toEqual(pending);
    expect(currentEventData('inbox.action_pending', pending)).toEqual(pending);
  });
});

describe('webhook URL rules', () => {
  it('classifies addresses', () => {
    for (const ip of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
    ]) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '172.32.0.1']) expect(isPrivateAddress(ip), ip).toBe(false);
  });

  it('outside the devnet: loopback, private and names resolving to them are refused', async () => {
    const opts = { allowPrivate: false, resolve: async (h: string) => (h === 'evil.example' ? ['10.0.0.5'] : ['93.184.215.14']) };
    for (const url of [
      'http://127.0.0.1:9000/h',
      'http://localhost/h',
      'https://[::1]/h',
      'http://10.0.0.1/h',
      'http://169.254.169.254/latest',
      'https://evil.example/h',
      // the same addresses spelled otherwise (decimal, hex, octal, short, IPv4-mapped IPv6, unspecified), and
      // loopback names with a trailing dot (the resolver here would answer a public address for them)
      'http://2130706433/h',
      'http://0x7f.1/h',
      'http://017700000001/h',
      'http://127.1/h',
      'http://[::ffff:127.0.0.1]/h',
      'http://[::ffff:a9fe:a9fe]/',
      'http://0.0.0.0/h',
      'http://[::]/h',
      'http://localhost./h',
      'http://api.localhost./h',
    ]) {
      await expect(checkWebhookUrl(url, opts), url).rejects.toThrow(UrlRejected);
    }
    await expect(checkWebhookUrl('https://hooks.example.com/in', opts)).resolves.toBeInstanceOf(URL);
  });

  it('always: http(s) only, no credentials', async () => {
    for (const allowPrivate of [true, false]) {
      await expect(checkWebhookUrl('ftp://example.com/x', { allowPrivate })).rejects.toThrow('http or https');
      await expect(checkWebhookUrl('https://u:p@example.com/x', { allowPrivate })).rejects.toThrow('credentials');
      await expect(checkWebhookUrl('not a url', { allowPrivate })).rejects.toThrow('valid absolute URL');
    }
    await expect(checkWebhookUrl('http://127.0.0.1:9000/h', { allowPrivate: true })).resolves.toBeInstanceOf(URL);
  });
});

describe('webhook sender: the address is checked on the connection itself', () => {
  const secrets = [`whsec_${Buffer.alloc(32, 7).toString('base64')}`];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver?.close());
  const port = () => new URL(receiver.base).port;

  it('IPv4-compatible, IPv4-translated, 6to4 and NAT64 addresses are private', () => {
    for (const ip of ['::7f00:1', '::a00:1', '::ffff:0:7f00:1', '::ffff:0:a00:1', '2002:7f00:1::', '2002:a00:1::1', '64:ff9b::7f00:1', '64:ff9b::a00:1']) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(ip), ip).toBe(false);
  });

  it('a name resolving to loopback is refused at connect time: nothing reaches the receiver', async () => {
    const before = receiver.received.length;
    const res = await sendWebhook({ url: `http://localhost:${port()}/x`, msgId: 'm1', body: '{}', secrets, timeoutMs: 2000, allowPrivate: false });
    expect(res).toMatchObject({ ok: false, statusCode: null, responseBody: null });
    expect(res.error).toMatch(/not sent: .*loopback or private/);
    expect(receiver.received.length).toBe(before);
  });

  it('DNS rebinding: a name that resolved public at the check and loopback at the connection is refused', async () => {
    let n = 0;
    const rebinding = async () => (n++ % 2 === 0 ? ['93.184.215.14'] : ['127.0.0.1']);
    const url = `http://rebind.example:${port()}/secret`;
    await expect(checkWebhookUrl(url, { allowPrivate: false, resolve: rebinding })).resolves.toBeInstanceOf(URL);
    const before = receiver.received.length;
    const res = await sendWebhook({ url, msgId: 'm2', body: '{}', secrets, timeoutMs: 2000, allowPrivate: false, resolve: rebinding });
    expect(res.ok).toBe(false);
    expect(res.error).toMatch(/loopback or private/);
    expect(res.responseBody).toBeNull();
    expect(receiver.received.length).toBe(before);
  });

  it('connects to the address the check saw; a slow resolver times out', async () => {
    // allowed (the opt-in): the name is resolved once, by our lookup, and the socket goes there
    const res = await sendWebhook({
      url: `http://hooks.example:${port()}/ok`,
      msgId: 'm3',
      body: '{"a":1}',
      secrets,
      timeoutMs: 2000,
      allowPrivate: true,
      resolve: async () => ['127.0.0.1'],
    });
    expect(res).toMatchObject({ ok: true, statusCode: 200, responseBody: 'ok' });
    expect(receiver.received.at(-1)).toMatchObject({ path: '/ok', body: '{"a":1}' });
    const slow = await sendWebhook({
      url: `http://slow.example:${port()}/ok`,
      msgId: 'm4',
      body: '{}',
      secrets,
      timeoutMs: 5000,
      allowPrivate: false,
      dnsTimeoutMs: 100,
      resolve: () => new Promise<string[]>((r) => setTimeout(() => r(['93.184.215.14']), 2000)),
    });
    expect(slow.error).toMatch(/did not resolve within 100 ms/);
    expect(slow.durationMs).toBeLessThan(1500);
  });

  it('private IP literals are refused without a lookup', async () => {
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::7f00:1]']) {
      const res = await sendWebhook({ url: `http://${host}:${port()}/x`, msgId: 'm5', body: '{}', secrets, timeoutMs: 2000, allowPrivate: false });
      expect(res.error, host).toMatch(/not sent: .*loopback or private/);
    }
  });
});
