/** The sign-up portal in headless Chromium (Debian chromium + playwright-core): sign up, see the key once, use it. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/net/server.js';
import { apiKeys, organizations } from '../../src/db/schema.js';
import { startTestApp, type TestApp } from '../support/platform.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// CI installs chromium (.ci/run); elsewhere the test is skipped, loudly, when it is missing
const skip = !existsSync(CHROMIUM) && !process.env.CI;
if (skip) console.warn(`[portal test] ${CHROMIUM} not found: skipped (apt-get install chromium)`);

describe.skipIf(skip)('portal sign-up in headless Chromium', () => {
  let t: TestApp;
  let server: RunningServer;
  let browser: BrowserContext;
  let profile: string;
  beforeAll(async () => {
    t = await startTestApp('pglite', { env: { SANDBOX_IDENTITY_QUOTA: '3', SANDBOX_CREDIT_GRANT: '2500' } });
    server = await listen(t.app, '127.0.0.1', 0);
    profile = mkdtempSync(join(tmpdir(), 'gw-chromium-'));
    // a fresh profile directory (--user-data-dir) per run, through playwright's persistent-context API
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
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await t?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('creates an organization with the configured sandbox grant, shows the key once, and the key works', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/portal`);
    expect(await page.title()).toMatch(/sign up/i);
    expect(await page.textContent('#grant')).toBe('3 identities and 2500 ledger credits');

    // an empty name is refused on the page
    await page.click('#create');
    expect(await page.isVisible('#error')).toBe(true);

    await page.fill('#org-name', 'Acme Robotics');
    await page.click('#create');
    await page.waitForSelector('#result:not([hidden])');
    const key = (await page.textContent('[data-testid=api-key]'))!.trim();
    expect(key).toMatch(/^ck_live_[0-9A-Za-z]{43}$/);
    expect(await page.textContent('#warning')).toMatch(/only once/);
    const orgId = (await page.textContent('#org-id'))!.trim();

    // the organization got the sandbox grant; only the hash of the key is stored
    const [org] = await t.db.select().from(organizations).where(eq(organizations.id, orgId));
    expect(org).toMatchObject({ name: 'Acme Robotics', identityQuota: 3, creditGrant: 2500n });
    const rows = await t.db.select().from(apiKeys).where(eq(apiKeys.orgId, orgId));
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(key);

    // "Try it" from the page calls the API with the key
    await page.click('#try');
    await page.waitForSelector('#try-output:not([hidden])');
    const out = (await page.textContent('#try-output'))!;
    expect(out).toMatch(/^GET \/v1\/admin\/api-keys → 200/);
    expect(out).toContain(rows[0].keyPrefix);
    expect(out).not.toContain(key);

    // and from outside the browser
    const res = await fetch(`${server.url}/v1/admin/api-keys`, { headers: { 'X-API-Key': key } });
    expect(res.status).toBe(200);
    expect((await res.json()).api_keys[0]).toMatchObject({ org_id: orgId, permissions: ['read', 'write', 'proof:read', 'admin', 'provider:manage'] });

    // hiding it, or coming back, never shows the key again
    await page.click('#done');
    expect(await page.textContent('[data-testid=api-key]')).not.toContain(key);
    await page.reload();
    expect(await page.isVisible('#result')).toBe(false);
    expect(await page.content()).not.toContain(key);
    const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie);
    expect(storage).not.toContain(key);
    await page.close();
  });

  it('the sign-up endpoint validates its input', async () => {
    const res = await fetch(`${server.url}/portal/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"organization_name":""}',
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^organization_name: /);
  });
});
