/**
 * The customer console (/console) in headless Chromium on the proof-cycle devnet, at 375 px width, with every
 * request off the test server's origin aborted and recorded (none may happen): sign in with a key; an identity
 * created through the API becomes active on the page without a reload; an intent's stages advance to completed on
 * its page; its proof verifies in the browser (every check passes) and a tampered bundle fails; a 2-of-2 pending
 * action is co-signed from the console with a key generated in the browser's WebCrypto and executes; webhook
 * deliveries are listed and one is redelivered. Screenshots of each page: test-artifacts/console/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/net/server.js';
import { CONSOLE_JS_GZIP_BUDGET } from '../../src/console/bundle.js';
import { makePanel } from '../governance/panel.js';
import { newClientKey, uniqueName } from '../identity/devnet.js';
import { startReceiver } from '../support/receiver.js';
import { api, arg, prepare, recordLeg, SEPOLIA, startCycleBench, startCycleWorker, submit, waitIntent, type CycleBench } from '../transaction/support.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const skip = !existsSync(CHROMIUM) && !process.env.CI;
if (skip) console.warn(`[console test] ${CHROMIUM} not found: skipped (apt-get install chromium)`);
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'console');

describe.skipIf(skip)('the console in headless Chromium on the devnet', () => {
  let b: CycleBench;
  let server: RunningServer;
  let browser: BrowserContext;
  let profile: string;
  let page: Page;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const foreign: string[] = [];
  const problems: string[] = [];
  let completedIntent: { intent_id: string; proof_id: string };

  beforeAll(async () => {
    b = await startCycleBench();
    receiver = await startReceiver();
    const ep = await api(b, 'POST', '/v1/webhooks/endpoints', { url: receiver.url('/hooks'), skip_verification: true });
    expect(ep.status, JSON.stringify(ep.body)).toBe(201);
    server = await listen(b.app.app, '127.0.0.1', 0);
    mkdirSync(ARTIFACTS, { recursive: true });
    profile = mkdtempSync(join(tmpdir(), 'gw-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 375, height: 812 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const origin = new URL(server.url).origin;
    await browser.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) return route.continue();
      foreign.push(url);
      return route.abort('internetdisconnected');
    });
    page = await browser.newPage();
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
    await b?.stop();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** a screenshot of the page as it is now, and the page fits 375 px (no sideways scrolling) */
  const shoot = async (name: string) => {
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width, `${name} is wider than the 375 px viewport`).toBeLessThanOrEqual(375);
  };
  /** every form control has a label */
  const labelled = async () => {
    const bare = await page.evaluate(() =>
      Array.from(document.querySelectorAll('input, select, textarea, progress'))
        .filter((el) => !(el.id && document.querySelector(`label[for="${el.id}"]`)) && !el.getAttribute('aria-label'))
        .map((el) => el.outerHTML),
    );
    expect(bare).toEqual([]);
  };

  it('serves the page and its assets from this origin under a self-only policy; the script is under 200 KB gzipped', async () => {
    const res = await fetch(`${server.url}/console`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:|\*|unsafe/);
    const html = await res.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets).toHaveLength(2);
    let gz = 0;
    for (const a of assets) {
      expect(a).toMatch(/^\/console\/assets\/console-[0-9a-f]{12}\.(js|css)$/);
      const r = await fetch(`${server.url}${a}`);
      expect(r.status).toBe(200);
      const body = new Uint8Array(await r.arrayBuffer());
      if (a.endsWith('.js')) gz = gzipSync(body, { level: 9 }).length;
    }
    console.log(`[console] JavaScript: ${gz} bytes gzipped (budget ${CONSOLE_JS_GZIP_BUDGET})`);
    expect(gz).toBeGreaterThan(0);
    expect(gz).toBeLessThan(CONSOLE_JS_GZIP_BUDGET);
    expect((await fetch(`${server.url}/console/assets/nope.js`)).status).toBe(404);
  });

  it('signs in with an API key, kept in session storage', async () => {
    await page.goto(`${server.url}/console`);
    await page.waitForSelector('#signin');
    await labelled();
    await shoot('sign-in');
    await page.fill('#api-key', 'ck_live_wrong');
    await page.click('#signin-submit');
    await page.waitForSelector('#signin-error:has-text("refused")');
    await page.fill('#api-key', b.app.key.key);
    await page.press('#api-key', 'Enter'); // the keyboard submits the form
    await page.waitForSelector('h1:has-text("Identities")');
    expect(await page.evaluate(() => JSON.stringify({ ...sessionStorage }))).toContain(b.app.key.key);
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }) + document.cookie)).not.toContain(b.app.key.key);
  });

  it('an identity created through the API becomes active on the page without a reload', async () => {
    await page.evaluate(() => Object.assign(window, { __noReload: true }));
    // the devnet provisions an identity within a poll or two: with the worker held back, the page shows it creating
    await b.worker?.stop();
    const key = newClientKey();
    const res = await api(b, 'POST', '/v1/identity', { name: uniqueName('con'), public_key: key.publicKey, chains: [SEPOLIA.name], credits: 100 });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const card = `[data-identity="${res.body.identity.id}"]`;
    // every status the page shows for the new identity, in order, as the page redraws
    await page.evaluate((sel) => {
      const seen: string[] = [];
      Object.assign(window, { __seen: seen });
      const note = () => {
        const s = document.querySelector(`${sel} [data-status]`)?.getAttribute('data-status');
        if (s && seen[seen.length - 1] !== s) seen.push(s);
      };
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true });
      note();
    }, card);
    await page.waitForSelector(`${card} [data-status="creating"]`, { timeout: 20_000 });
    b.worker = await startCycleWorker(b.app);
    await page.waitForSelector(`${card} [data-status="active"]`, { timeout: 120_000 });
    const seen = await page.evaluate(() => (window as unknown as { __seen: string[] }).__seen);
    expect(seen).toEqual(['creating', 'active']);
    await page.waitForSelector(`${card} [data-chain="${SEPOLIA.name}"] button.copy`);
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    // the bench's identity is there too, with its account address
    expect(await page.textContent(`[data-identity="${b.identity.id}"]`)).toContain(b.identity.account);
    await shoot('identities');
  }, 180_000);

  it("an intent's stages advance to completed on its page, as they happen", async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`console-${randomUUID()}`))]);
    await page.goto(`${server.url}/console#/intents`);
    await page.waitForSelector(`[data-intent="${p.intent_id}"]`);
    await shoot('intents');
    // the page's reads of the intent: after the first, each names the answer it holds and asks the API to wait
    const reads: { ifNoneMatch?: string; prefer?: string }[] = [];
    const onRequest = (r: import('playwright-core').Request) => {
      if (r.method() === 'GET' && r.url().endsWith(`/v1/transaction/${p.intent_id}`))
        reads.push({ ifNoneMatch: r.headers()['if-none-match'], prefer: r.headers().prefer });
    };
    page.on('request', onRequest);
    await page.click(`[data-intent="${p.intent_id}"] a`);
    await page.waitForSelector('#intent-status [data-status="signing_required"]');
    // every status the page shows, in order
    await page.evaluate(() => {
      const seen: string[] = [];
      Object.assign(window, { __noReload: true, __statuses: seen });
      const note = () => {
        const s = document.querySelector('#intent-status [data-status]')?.getAttribute('data-status');
        if (s && seen[seen.length - 1] !== s) seen.push(s);
      };
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true });
      note();
    });
    await submit(b, p);
    await page.waitForSelector('#intent-status [data-status="completed"]', { timeout: 150_000 });
    page.off('request', onRequest);
    // the page answered the submission at once (a 4 s poll would most often have missed the second or so in between)
    expect(await page.evaluate(() => (window as unknown as { __statuses: string[] }).__statuses)).toEqual(['signing_required', 'submitted', 'completed']);
    expect(reads[0]).toEqual({ ifNoneMatch: undefined, prefer: undefined });
    expect(reads.length).toBeGreaterThan(1);
    for (const r of reads.slice(1)) expect(r.ifNoneMatch && r.prefer).toMatch(/^wait=\d+$/);
    const stages = `[data-chain="${SEPOLIA.name}"] .timeline li`;
    await page.waitForFunction((sel) => Array.from(document.querySelectorAll(sel)).every((li) => li.querySelector('time')), stages);
    const timeline = await page.$$eval(stages, (lis) => lis.map((li) => [li.getAttribute('data-stage'), li.getAttribute('data-done')]));
    expect(timeline).toEqual(['attested', 'anchored', 'executed', 'observed', 'recorded'].map((s) => [s, 'true']));
    const leg = await page.textContent('[data-leg]');
    const done = await waitIntent(b, p.intent_id);
    for (const tx of Object.values(done.legs[0].transactions) as string[]) expect(leg).toContain(tx);
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    completedIntent = { intent_id: p.intent_id, proof_id: done.proof_id };
    await shoot('intent');
  }, 200_000);

  it('verifies the proof in the browser: every check passes; a tampered bundle fails', async () => {
    await page.goto(`${server.url}/console#/proofs`);
    await page.waitForSelector(`[data-proof="${completedIntent.proof_id}"]`);
    await shoot('proofs');
    await page.click(`[data-proof="${completedIntent.proof_id}"] a`);
    await page.waitForSelector('.custody li[data-event="created"]');
    await page.click('#verify');
    await page.waitForSelector('#verdict', { timeout: 120_000 });
    expect(await page.getAttribute('#verdict', 'data-verdict'), (await page.textContent('#verify-result')) ?? '').toBe('pass');
    const checks = await page.$$eval('.checks li', (lis) => lis.map((li) => [li.getAttribute('data-check'), li.getAttribute('data-ok')]));
    expect(checks.length).toBeGreaterThan(10);
    expect(checks.filter(([, ok]) => ok !== 'true')).toEqual([]);
    await shoot('proof-verified');

    // the same bundle with one hex digit of the operation id changed
    const text = (await (
      await fetch(`${server.url}/v1/proof/${completedIntent.proof_id}/bundle`, { headers: { 'X-API-Key': b.app.key.key } })
    ).text()) as string;
    const op = (JSON.parse(text) as { intent: { operation_id: string } }).intent.operation_id;
    const flipped = op.slice(0, -1) + (op.endsWith('0') ? '1' : '0');
    await page.setInputFiles('#bundle-file', { name: 'tampered.json', mimeType: 'application/json', buffer: Buffer.from(text.split(op).join(flipped)) });
    await page.waitForSelector('#verdict[data-verdict="fail"]', { timeout: 120_000 });
    expect(await page.$$eval('.checks li[data-ok="false"]', (lis) => lis.length)).toBeGreaterThan(0);
    await shoot('proof-tampered');
  }, 300_000);

  it('co-signs a 2-of-2 pending action with a key generated in the browser; the action executes', async () => {
    await page.goto(`${server.url}/console#/pending`);
    await page.click('#generate-key');
    await page.waitForSelector('#signer-public-key');
    const publicKey = ((await page.textContent('#signer-public-key')) ?? '').trim();
    expect(publicKey).toMatch(/^[0-9a-f]{64}$/);
    // the private key is not extractable: the page's script cannot read it back
    const exportable = await page.evaluate(
      () =>
        new Promise<boolean>((resolve) => {
          const open = indexedDB.open('pgw-console', 1);
          open.onsuccess = () => {
            const req = open.result.transaction('keys').objectStore('keys').get('signer');
            req.onsuccess = () => resolve((req.result as CryptoKeyPair).privateKey.extractable);
          };
        }),
    );
    expect(exportable).toBe(false);
    await makePanel(b, [{ publicKey, secretKey: new Uint8Array() }], 2);

    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`console-cosign-${randomUUID()}`))]);
    const s = await submit(b, p);
    const action = `[data-action="${s.tx_hash}"]`;
    await page.waitForSelector(action, { timeout: 30_000 });
    expect(await page.textContent(action)).toContain('Signatures: 1 of 2');
    await labelled();
    await shoot('pending');
    await page.click(`${action} button.approve`);
    await page.waitForSelector(`#vote-${s.tx_hash}:has-text("approve: ")`, { timeout: 30_000 });
    expect(await page.textContent(`#vote-${s.tx_hash}`)).not.toMatch(/failed/);
    const done = await waitIntent(b, p.intent_id);
    expect(done.error_message).toBeNull();
    expect(done.status).toBe('completed');
    const detail = await api(b, 'GET', `/v1/transaction/${p.intent_id}`);
    expect(detail.body.signing_progress?.signers?.map((x: { public_key: string }) => x.public_key)).toContain(publicKey);
    await page.waitForSelector(action, { state: 'detached', timeout: 30_000 });
  }, 300_000);

  it('imports a signing key from its seed: the same public key, stored non-extractable, the seed not kept', async () => {
    const key = newClientKey();
    await page.goto(`${server.url}/console#/pending`);
    await page.fill('#seed', Buffer.from(key.secretKey).toString('hex'));
    await page.click('#import-key');
    await page.waitForSelector(`#signer-public-key:has-text("${key.publicKey}")`);
    expect(await page.inputValue('#seed')).toBe('');
    const extractable = await page.evaluate(
      () =>
        new Promise<boolean>((resolve) => {
          const open = indexedDB.open('pgw-console', 1);
          open.onsuccess = () => {
            const req = open.result.transaction('keys').objectStore('keys').get('signer');
            req.onsuccess = () => resolve((req.result as CryptoKeyPair).privateKey.extractable);
          };
        }),
    );
    expect(extractable).toBe(false);
  });

  it('lists webhook deliveries with their attempts and redelivers one', async () => {
    await page.goto(`${server.url}/console#/webhooks`);
    await page.waitForSelector('[data-delivery]', { timeout: 60_000 });
    const id = await page.getAttribute('[data-delivery]', 'data-delivery');
    // its attempts, read when the reader opens them (by keyboard here)
    await page.focus(`[data-delivery="${id}"] summary`);
    await page.keyboard.press('Enter');
    await page.waitForSelector(`[data-delivery="${id}"] [data-attempt="1"]`, { timeout: 30_000 });
    await page.click(`[data-delivery="${id}"] button.redeliver`);
    await page.waitForSelector(`#redeliver-${id}:has-text("Redelivery pending")`);
    await shoot('webhooks');
  }, 120_000);

  it('loaded nothing from another host and broke no policy', () => {
    expect(foreign).toEqual([]);
    expect(problems.filter((p) => /Content Security Policy|Refused to|pageerror/i.test(p))).toEqual([]);
  });
});
