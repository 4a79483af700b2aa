/**
 * Following an intent without polling: GET /v1/transaction/{id} answers with an ETag; If-None-Match naming it is a
 * 304; with `Prefer: wait=<s>` the request is held until the intent or one of its chain cycles changes (200 with the
 * new state, well before the wait ends) or the wait ends (304, Preference-Applied). On PostgreSQL the change is made
 * through another connection pool (another process's writes), so only the notification can end the wait early.
 */
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { etagOf, noneMatchHits, preferredWait } from '../../src/api/conditional-read.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { intentChangesFor } from '../../src/db/intent-changes.js';
import { ensureIntentChain, updateIntentChain } from '../../src/db/intents.js';
import { intents } from '../../src/db/schema.js';
import type { ChainCycleRecord } from '../../src/protocol/cycle-record.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, insertTestIntent, startTestApp, type TestApp } from '../support/platform.js';

describe('conditional-read headers', () => {
  it('reads Prefer: wait and If-None-Match as the RFCs write them', () => {
    expect(preferredWait(undefined)).toBe(0);
    expect(preferredWait('wait=5')).toBe(5);
    expect(preferredWait('respond-async, wait=100')).toBe(60);
    expect(preferredWait('Wait = "7"')).toBe(7);
    expect(preferredWait('wait=soon')).toBe(0);
    expect(preferredWait('return=minimal')).toBe(0);
    const tag = etagOf('{"a":1}');
    expect(tag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    expect(etagOf('{"a":1}')).toBe(tag);
    expect(etagOf('{"a":2}')).not.toBe(tag);
    expect(noneMatchHits(tag, tag)).toBe(true);
    expect(noneMatchHits(tag.slice(2), tag)).toBe(true);
    expect(noneMatchHits(`"x", ${tag}`, tag)).toBe(true);
    expect(noneMatchHits('*', tag)).toBe(true);
    expect(noneMatchHits('"x"', tag)).toBe(false);
    expect(noneMatchHits(undefined, tag)).toBe(false);
  });
});

describe.each(dbKinds())('GET /v1/transaction/{id} waits for the intent to change (%s)', (kind) => {
  let app: TestApp;
  let other: Database | undefined;
  let writer: Database['db'];
  let key: string;
  let intentId: string;

  beforeAll(async () => {
    app = await startTestApp(kind);
    if (kind === 'postgres') other = await openDatabase({ databaseUrl: (app.database as { url?: string }).url! });
    writer = other?.db ?? app.db;
    const org = await createTestOrgAndKey(app.db, {});
    key = org.key;
    ({ intentId } = await insertTestIntent(app.db, org.orgId, {
      status: 'signing_required',
      chains: ['ethereum-sepolia'],
      document: { parts: [], legs: [{ leg_id: 'leg-1', chain: 'ethereum-sepolia', chain_id: '11155111' }] },
    }));
    await vi.waitFor(() => expect(intentChangesFor(app.database).listening).toBe(true), { timeout: 10_000 });
  }, 60_000);
  afterAll(async () => {
    await other?.close();
    await app?.close();
  });

  const get = (headers: Record<string, string> = {}) => app.call(`/v1/transaction/${intentId}`, { key, headers });

  it('answers with an ETag, and 304 to If-None-Match naming it', async () => {
    const r = await get();
    expect(r.status).toBe(200);
    const tag = r.headers.get('etag')!;
    expect(tag).toBe(etagOf(await r.text()));
    const again = await get({ 'If-None-Match': tag });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(tag);
    expect(again.headers.get('preference-applied')).toBeNull();
    expect(await again.text()).toBe('');
  });

  it('holds a request until the intent changes, then answers 200 with the new state', async () => {
    const before = await get();
    const tag = before.headers.get('etag')!;
    const started = performance.now();
    const waiting = get({ 'If-None-Match': tag, Prefer: 'wait=20' });
    await new Promise((r) => setTimeout(r, 300));
    await writer.update(intents).set({ status: 'submitted', stage: 'submitted', submittedAt: new Date() }).where(eq(intents.id, intentId));
    const r = await waiting;
    const ms = performance.now() - started;
    expect(r.status).toBe(200);
    expect(r.headers.get('preference-applied')).toBe('wait=20');
    expect(r.headers.get('etag')).not.toBe(tag);
    expect((await r.json()).status).toBe('submitted');
    expect(ms).toBeGreaterThanOrEqual(300);
    expect(ms).toBeLessThan(10_000); // the notification, not the wait's end (20 s)
  });

  it('a chain cycle created or moved ends the wait too', async () => {
    const tag = (await get()).headers.get('etag')!;
    const waiting = get({ 'If-None-Match': tag, Prefer: 'wait=20' });
    await new Promise((r) => setTimeout(r, 200));
    const record = { chain: 'ethereum-sepolia', chainId: '11155111', anchorId: '0x01', legs: [] } as unknown as ChainCycleRecord;
    await ensureIntentChain(writer, intentId, 'ethereum-sepolia', record);
    const r = await waiting;
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).not.toBe(tag);
    expect((await r.json()).legs[0]).toMatchObject({ leg_id: 'leg-1', status: 'executing', anchor_id: '0x01' });
  });

  it('a write within a stage is not announced: the wait sees it when it ends', async () => {
    const tag = (await get()).headers.get('etag')!;
    const started = performance.now();
    const waiting = get({ 'If-None-Match': tag, Prefer: 'wait=2' });
    await new Promise((r) => setTimeout(r, 200));
    await updateIntentChain(writer, intentId, 'ethereum-sepolia', { record: (r) => void (r.createAnchorTx = `0x${'ab'.repeat(32)}`) });
    const r = await waiting;
    expect(r.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1900);
    expect((await r.json()).legs[0].transactions.create_anchor).toBe(`0x${'ab'.repeat(32)}`);
  });

  it('answers 304 when the wait ends with nothing changed', async () => {
    const tag = (await get()).headers.get('etag')!;
    const started = performance.now();
    const r = await get({ 'If-None-Match': tag, Prefer: 'wait=1' });
    expect(r.status).toBe(304);
    expect(r.headers.get('preference-applied')).toBe('wait=1');
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('an unknown intent is a 404 at once, whatever the wait', async () => {
    const r = await app.call(`/v1/transaction/${randomUUID()}`, { key, headers: { 'If-None-Match': '*', Prefer: 'wait=30' } });
    expect(r.status).toBe(404);
  });
});
