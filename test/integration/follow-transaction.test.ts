/**
 * followIntentTransaction looks at the ledger transaction every 50 ms while its submission is young (a single
 * signer's transaction executes within a few blocks), then with the pacing of any ledger wait, up to every 500 ms:
 * a transaction waiting for co-signers (until they sign or the intent expires) is not asked about twenty times a
 * second, and its execution is still noticed within about half a second. On the ledger simulator, 2.5 s blocks.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CycleContext } from '../../src/activities/cycle/context.js';
import { signatureSteps } from '../../src/activities/cycle/signature.js';
import { intents } from '../../src/db/schema.js';
import { createLedgerClient, ledgerPollDelay, tx, type LedgerClient } from '../../src/ledger/index.js';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import { fundedLite, held } from '../ledger-conformance/harness.js';
import { openTestDatabase } from '../support/env.js';
import { createTestOrgAndKey, insertTestIntent } from '../support/platform.js';

/** a transaction the ledger has not seen (yet): the follow finds it pending, as one waiting for co-signers */
const UNSEEN_TX = `acc://${'ab'.repeat(32)}@a.acme/book/1`;
let database: Awaited<ReturnType<typeof openTestDatabase>>;
let sim: LedgerSimHandle;
let ledger: LedgerClient;
let orgId: string;

beforeAll(async () => {
  database = await openTestDatabase('pglite');
  ({ orgId } = await createTestOrgAndKey(database.db, {}));
  sim = await startLedgerSim({ port: 0, blockIntervalMs: 2_500 });
  ledger = createLedgerClient({ url: sim.url });
}, 60_000);
afterAll(async () => {
  await sim?.stop();
  await database?.cleanup();
});

/** The follow of an intent whose transaction `txId` went to the ledger `agoMs` ago, counting its looks at the ledger. */
async function followed(txId: string, agoMs: number) {
  const { intentId } = await insertTestIntent(database.db, orgId, { status: 'submitted', chains: ['ethereum-sepolia'] });
  await database.db
    .update(intents)
    .set({ ledgerTxId: txId, submittedAt: new Date(Date.now() - agoMs) })
    .where(eq(intents.id, intentId));
  const counted = { looks: 0 };
  const getTransaction: LedgerClient['getTransaction'] = (id) => {
    counted.looks++;
    return ledger.getTransaction(id);
  };
  const ctx = { db: database.db, ledger: { ...ledger, getTransaction } } as unknown as CycleContext;
  const follow = (waitMs: number) => signatureSteps(ctx).followIntentTransaction({ intentId, waitMs });
  return { counted, follow };
}

describe('following a ledger transaction', () => {
  it('after 2 s, the pauses of any ledger wait: a few more at 50 ms, then 1.5 × longer each time up to 500 ms', () => {
    expect(Array.from({ length: 10 }, (_, n) => Math.round(ledgerPollDelay(50, n)))).toEqual([50, 50, 50, 50, 75, 113, 169, 253, 380, 500]);
  });

  it('a young submission is looked at every 50 ms', async () => {
    const { counted, follow } = await followed(UNSEEN_TX, 0);
    expect((await follow(1_000)).state).toBe('pending');
    expect(counted.looks).toBeGreaterThanOrEqual(12);
  });

  it('a transaction waiting for co-signers is looked at a few times a second, and its execution seen within ~0.5 s', { timeout: 60_000 }, async () => {
    const waiting = await followed(UNSEEN_TX, 60_000);
    expect((await waiting.follow(3_000)).state).toBe('pending');
    // 50 ms pauses would have looked 60 times
    expect(waiting.counted.looks).toBeLessThanOrEqual(15);

    // a real transaction that executes at the next block (up to 2.5 s from now), followed as an old submission
    const sponsor = await fundedLite(ledger);
    const { amount, oracle } = await ledger.acmeForCredits(1_000);
    const { txId } = await ledger.signAndSubmit(sponsor.lta, tx.addCredits({ recipient: sponsor.lite, amount, oracle }), held(sponsor.key, sponsor.lite));
    const executing = await followed(txId, 60_000);
    const result = executing.follow(10_000);
    let seenAt = 0;
    while (!seenAt) {
      if ((await ledger.getTransaction(txId).catch(() => undefined))?.delivered) seenAt = Date.now();
      else await new Promise((r) => setTimeout(r, 20));
    }
    expect((await result).state).toBe('delivered');
    // at most a 500 ms pause and one look later (with room for a loaded machine)
    expect(Date.now() - seenAt).toBeLessThan(1_000);
  });
});
