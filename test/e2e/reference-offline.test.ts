/**
 * /reference and /portal in headless Chromium with no network: every request that is not to the test server is
 * aborted and recorded, so a page that needs a CDN (or any other host) renders blank here and the test names the host.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/net/server.js';
import { startTestApp, type TestApp } from '../support/platform.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const skip = !existsSync(CHROMIUM) && !process.env.CI;
if (skip) console.warn(`[reference test] ${CHROMIUM} not found: skipped (apt-get install chromium)`);

describe.skipIf(skip)('the API reference and the portal offline, in headless Chromium', () => {
  let t: TestApp;
  let server: RunningServer;
  let browser: BrowserContext;
  let profile: string;
  const foreign: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    t = await startTestApp('pglite');
    server = await listen(t.app, '127.0.0.1', 0);
    profile = mkdtempSync(join(tmpdir(), 'gw-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
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
    // no network: only the test server's origin answers; anything else is recorded and aborted
    const origin = new URL(server.url).origin;
    await browser.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) return route.continue();
      foreign.push(url);
      return route.abort('internetdisconnected');
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await t?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const open = async (path: string): Promise<Page> => {
    foreign.length = 0;
    problems.length = 0;
    const page = await browser.newPage();
    // script errors and Content-Security-Policy refusals show up here
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
    });
    await page.goto(`${server.url}${path}`);
    return page;
  };
  // waits for the rendered reference to show an operation path; on a timeout, says what the page saw
  const rendered = async (page: Page, text: string) => {
    try {
      await page.waitForFunction((t) => (document.body.textContent ?? '').includes(t), text, { timeout: 20_000 });
    } catch (err) {
      const body = await page.evaluate(() => (document.body.textContent ?? '').slice(0, 300));
      throw new Error(
        `${text} not rendered: ${(err as Error).message}\nforeign requests: ${foreign.join(', ')}\nerrors: ${problems.join(' | ')}\nbody: ${body}`,
      );
    }
  };

  it('/reference renders the operations of /docs/json with no request off this origin, under a self-only CSP', async () => {
    // operations named in /docs/json appear in the rendered page
    const doc = (await (await fetch(`${server.url}/docs/json`)).json()) as {
      info: { title: string };
      paths: Record<string, Record<string, { summary: string }>>;
    };
    const summaries = ['/v1/health', '/v1/health/ready'].map((p) => doc.paths[p].get?.summary ?? doc.paths[p].post.summary);
    const page = await open('/reference');
    await rendered(page, summaries[0]);
    await rendered(page, doc.info.title);
    const text = await page.evaluate(() => document.body.textContent ?? '');
    for (const s of summaries) expect(text).toContain(s);
    expect(foreign).toEqual([]);
    expect(problems.filter((p) => /Content Security Policy|Refused to/i.test(p))).toEqual([]);

    // and the page says so: a policy that allows scripts from this origin only
    const res = await fetch(`${server.url}/reference`);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:|\*|unsafe-eval/);
    const html = await res.text();
    // every script and stylesheet the page names is a same-origin path
    for (const [, url] of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(url, url).toMatch(/^\/(?!\/)/);

    await page.close();
  });

  it('/docs for a browser is the same offline reference', async () => {
    const page = await open('/docs');
    await rendered(page, 'Health of the gateway and its dependencies');
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('the bundle is served from this origin with a long cache and a JavaScript content type; unknown assets are 404', async () => {
    const html = await (await fetch(`${server.url}/reference`)).text();
    const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts.length).toBe(2);
    for (const src of scripts) {
      expect(src).toMatch(/^\/reference\/assets\//);
      const res = await fetch(`${server.url}${src}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(res.headers.get('cache-control')).toMatch(/max-age=31536000/);
      await res.arrayBuffer();
    }
    const missing = await fetch(`${server.url}/reference/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('/portal works offline: its page loads nothing from another host', async () => {
    const page = await open('/portal');
    expect(await page.title()).toMatch(/sign up/i);
    await page.waitForLoadState('networkidle');
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
