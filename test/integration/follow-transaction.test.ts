/**
 * followIntentTransaction looks at the ledger transaction every 50 ms while its submission is young (a single
 * signer's transaction executes within a few blocks), then ever more gently, up to every 500 ms: a transaction
 * waiting for co-signers (until they sign or the intent expires) is not asked about twenty times a second, and its
 * execution is still noticed within half a second.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CycleContext } from '../../src/activities/cycle/context.js';
import { followPauseMs, signatureSteps } from '../../src/activities/cycle/signature.js';
import { intents } from '../../src/db/schema.js';
import { openTestDatabase } from '../support/env.js';
import { createTestOrgAndKey, insertTestIntent } from '../support/platform.js';

type Db = Awaited<ReturnType<typeof openTestDatabase>>;
let database: Db;
let orgId: string;

beforeAll(async () => {
  database = await openTestDatabase('pglite');
  ({ orgId } = await createTestOrgAndKey(database.db, {}));
}, 60_000);
afterAll(async () => database?.cleanup());

/** A submitted intent whose transaction went to the ledger `agoMs` ago, and a ledger that counts the looks at it. */
async function followed(agoMs: number) {
  const { intentId } = await insertTestIntent(database.db, orgId, { status: 'submitted', chains: ['ethereum-sepolia'] });
  await database.db
    .update(intents)
    .set({ ledgerTxId: 'acc://a.acme/book/1@tx', submittedAt: new Date(Date.now() - agoMs) })
    .where(eq(intents.id, intentId));
  const ledger = { looks: 0, delivered: false };
  const getTransaction = async () => {
    ledger.looks++;
    return { status: ledger.delivered ? 'delivered' : 'pending', delivered: ledger.delivered, failed: false, signatures: [{}] };
  };
  const follow = (waitMs: number) =>
    signatureSteps({ db: database.db, ledger: { getTransaction } } as unknown as CycleContext).followIntentTransaction({ intentId, waitMs });
  return { ledger, follow };
}

describe('following a ledger transaction', () => {
  it('pauses 50 ms for 2 s after the submission, then 1.5 × longer each time up to 500 ms', () => {
    expect(followPauseMs(0, 50)).toBe(50);
    expect(followPauseMs(1_999, 500)).toBe(50);
    const pauses: number[] = [];
    for (let p = 50, n = 0; n < 8; n++) pauses.push((p = followPauseMs(2_000, p)));
    expect(pauses).toEqual([75, 113, 170, 255, 383, 500, 500, 500]);
  });

  it('a young submission is looked at every 50 ms', async () => {
    const { ledger, follow } = await followed(0);
    expect((await follow(1_000)).state).toBe('pending');
    expect(ledger.looks).toBeGreaterThanOrEqual(12);
  });

  it('a transaction waiting for co-signers is looked at a few times a second, and its execution seen within 0.5 s', async () => {
    const { ledger, follow } = await followed(60_000);
    expect((await follow(3_000)).state).toBe('pending');
    // 50 ms pauses would have looked 60 times
    expect(ledger.looks).toBeLessThanOrEqual(12);
    const t0 = Date.now();
    const result = follow(10_000);
    setTimeout(() => void (ledger.delivered = true), 2_000);
    expect((await result).state).toBe('delivered');
    expect(Date.now() - t0).toBeLessThan(2_000 + 700);
  });
});
