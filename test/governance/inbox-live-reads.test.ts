/**
 * The live read behind GET /v1/pending (src/services/inbox-live.ts) against a scripted ledger, on both databases:
 *   - each listed action shows the ledger's state at the request, and a changed state is stored (so the stats and
 *     the status filter agree with the page);
 *   - a transaction the ledger reports executed has its actions closed and leaves the page and the stats;
 *   - ledger reads are shared between requests for CACHE_MS and read again once it passed or after invalidateInbox;
 *   - a ledger that does not answer costs at most LIVE_READ_MS: the stored state, live.complete false.
 */
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingActions } from '../../src/db/schema.js';
import type { KeyPageInfo, LedgerClient, TxStatus } from '../../src/ledger/index.js';
import { CACHE_MS, invalidateInbox, LIVE_READ_MS, listPending } from '../../src/services/inbox-live.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, insertTestIdentity, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

const KEY_A = 'a1'.repeat(32);
const KEY_B = 'b2'.repeat(32);
const silent = { debug() {}, info() {}, warn() {}, error() {}, child() {} } as any;

/** A ledger whose transactions the test scripts: `state` per TxID; counts the transaction reads. */
function scriptedLedger(book: string, page: string) {
  const state = new Map<string, 'one' | 'two' | 'executed' | 'silent'>();
  const reads = { tx: 0 };
  const tx = (txId: string, s: 'one' | 'two' | 'executed'): TxStatus => {
    const hash = txId.slice(6, 70);
    const signature = (pk: string) => ({
      type: 'ed25519',
      signer: page,
      publicKey: pk,
      signerVersion: 1,
      timestamp: 1,
      vote: 'accept' as const,
      delegators: [],
      raw: {},
    });
    return {
      txId,
      txHash: hash,
      principal: `${book.slice(0, book.lastIndexOf('/'))}/data`,
      type: 'writeData',
      status: s === 'executed' ? 'delivered' : 'pending',
      produced: [],
      delivered: s === 'executed',
      pending: s !== 'executed',
      failed: false,
      transaction: { header: {}, body: { type: 'writeData' } },
      signatures: s === 'one' ? [signature(KEY_A)] : [signature(KEY_A), signature(KEY_B)],
      // the page's threshold met: its book's vote is recorded
      authorityVotes: s === 'one' ? [] : [{ authority: book, vote: 'accept' as const }],
    };
  };
  const keyPage: KeyPageInfo = { url: page, version: 1, acceptThreshold: 2, rejectThreshold: 0, responseThreshold: 0, creditBalance: 0, keys: [] };
  const ledger = {
    url: 'http://scripted.invalid',
    endpoint: 'http://scripted.invalid/v3',
    async getTransaction(txId: string) {
      reads.tx++;
      const s = state.get(txId);
      if (s === 'silent') return new Promise<never>(() => undefined);
      return tx(txId, s ?? 'one');
    },
    async tryQueryAccount(url: string) {
      if (url.endsWith('/data')) return { url, type: 'dataAccount', authorities: [{ url: book, disabled: false }], raw: {}, pending: [] };
      return { url, type: 'keyBook', authorities: [], raw: { pageCount: 1 }, pending: [] };
    },
    async queryKeyPage() {
      return keyPage;
    },
  } as unknown as LedgerClient;
  return { ledger, state, reads };
}

describe.each(dbKinds())('the live pending inbox (%s)', (kind) => {
  let t: TestApp;
  let k: TestKey;
  let identity: Awaited<ReturnType<typeof insertTestIdentity>>;
  let script: ReturnType<typeof scriptedLedger>;
  const txIds: string[] = [];

  beforeAll(async () => {
    t = await startTestApp(kind);
    k = await createTestOrgAndKey(t.db, { rateLimitRpm: 1_000_000 });
    identity = await insertTestIdentity(t.db, k.orgId, 'live', 'acme');
    script = scriptedLedger(identity.bookUrl.toLowerCase(), identity.keyPageUrl.toLowerCase());
    for (let i = 0; i < 3; i++) {
      const txHash = randomUUID().replaceAll('-', '').padEnd(64, '0');
      const txId = `acc://${txHash}@${identity.adiUrl.slice(6)}/data`;
      txIds.push(txId);
      await t.db.insert(pendingActions).values({
        orgId: k.orgId,
        identityId: identity.id,
        txHash,
        txId,
        principal: `${identity.adiUrl}/data`,
        category: 'transactions',
        type: 'writeData',
        status: 'eligible',
        collectedSignatures: 0,
        threshold: 2,
        userHasSigned: false,
        awaitingAuthorities: [],
        isReady: false,
        discoveredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
      });
    }
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  const list = (q: { status?: string } = {}) => listPending({ ...t.deps, ledger: script.ledger }, { orgId: k.orgId, log: silent }, q, { limit: 10, offset: 0 });

  it("shows the ledger's state and stores it; reads are shared for CACHE_MS, then read again", async () => {
    const before = script.reads.tx;
    const first = await list();
    expect(first.live.complete).toBe(true);
    expect(first.rows.map((r) => r.action.txId)).toEqual(txIds);
    for (const r of first.rows) {
      expect(r.action).toMatchObject({ collectedSignatures: 1, threshold: 2, isReady: false, awaitingAuthorities: [identity.bookUrl.toLowerCase()] });
    }
    expect(script.reads.tx - before).toBe(3);
    // the stored rows now hold what the ledger said
    const stored = await t.db.select().from(pendingActions).where(eq(pendingActions.txId, txIds[0]!));
    expect(stored[0]).toMatchObject({ collectedSignatures: 1 });

    const cached = script.reads.tx;
    await list();
    expect(script.reads.tx).toBe(cached);
    invalidateInbox(script.ledger);
    await list();
    expect(script.reads.tx).toBe(cached + 3);
    await new Promise((r) => setTimeout(r, CACHE_MS + 50));
    script.state.set(txIds[1]!, 'two');
    const later = await list();
    expect(later.rows.find((r) => r.action.txId === txIds[1])!.action).toMatchObject({ collectedSignatures: 2, isReady: true });
  });

  it('a transaction the ledger executed is closed and leaves the page and the stats', async () => {
    invalidateInbox(script.ledger);
    script.state.set(txIds[0]!, 'executed');
    const r = await list();
    expect(r.rows.map((x) => x.action.txId)).toEqual(txIds.slice(1));
    expect(r.stats.total).toBe(2);
    expect(r.total).toBe(2);
    const [row] = await t.db.select().from(pendingActions).where(eq(pendingActions.txId, txIds[0]!));
    expect(row).toMatchObject({ status: 'executed', isReady: true });
    expect(row!.resolvedAt).not.toBeNull();
  });

  it('a ledger that does not answer: within LIVE_READ_MS, the stored state, live.complete false', async () => {
    invalidateInbox(script.ledger);
    script.state.set(txIds[2]!, 'silent');
    const t0 = Date.now();
    const r = await list();
    expect(Date.now() - t0).toBeLessThan(LIVE_READ_MS + 1000);
    expect(r.live.complete).toBe(false);
    expect(r.rows.find((x) => x.action.txId === txIds[2])!.action).toMatchObject({ collectedSignatures: 1, isReady: false });
    script.state.delete(txIds[2]!);
  });
});
