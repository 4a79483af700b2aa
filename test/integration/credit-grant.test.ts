/**
 * Credits bought after creation are charged to the organization's grant atomically, and given back once when the
 * purchase fails before the ledger took it (on both database drivers; the purchase's workflow runs on a test worker
 * whose buyCredits fails as the ledger activity would).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { eq } from 'drizzle-orm';
import { createCreditActivities, purchaseStep, type CreditPurchaseInput } from '../../src/activities/credits.js';
import { chargeCreditGrant, refundFailedPurchase } from '../../src/db/credits.js';
import { putLedgerTxRecord } from '../../src/db/identities.js';
import { organizations } from '../../src/db/schema.js';
import { creditsResult, startCreditsWorkflow } from '../../src/temporal/credits.js';
import { dbKinds, openTestDatabase, startTestWorker, testConfig, testTemporalClient } from '../support/env.js';
import { insertTestIdentity } from '../support/platform.js';

describe.each(dbKinds())('the credit grant of purchases after creation (%s)', (kind) => {
  const config = testConfig();
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let client: Client;
  /** purchases whose buyCredits records its AddCredits (the ledger took it) before failing */
  const recordedFirst = new Set<string>();

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    // the refund is the real activity; buying fails for good, as when the sponsor cannot pay
    const real = createCreditActivities({ db: database.db, ledger: {} as never, sponsor: {} as never });
    worker = await startTestWorker(
      config,
      database,
      {},
      {
        wrap: (a) => ({
          ...a,
          refundCreditPurchase: real.refundCreditPurchase,
          buyCredits: async (i: CreditPurchaseInput) => {
            if (recordedFirst.has(i.purchaseId)) {
              await putLedgerTxRecord(database.db, i.identityId, purchaseStep(i.purchaseId), { txId: 'acc://x@y', envelope: {}, submittedAt: '' });
            }
            throw ApplicationFailure.nonRetryable('the sponsor cannot pay', 'SponsorOutOfFunds');
          },
        }),
      },
    );
    client = await testTemporalClient(config);
  });
  afterAll(async () => {
    await client?.connection.close();
    await worker?.stop();
    await database?.cleanup();
  });

  async function org(grant: bigint) {
    const [o] = await database.db
      .insert(organizations)
      .values({ name: `grant-${randomUUID()}`, creditGrant: grant })
      .returning();
    return o!.id;
  }
  const remaining = async (orgId: string) => {
    const [o] = await database.db.select().from(organizations).where(eq(organizations.id, orgId));
    return o!.creditGrant - o!.creditsUsed;
  };

  it('concurrent charges never spend more than the grant; a refused one names what remains', async () => {
    const orgId = await org(100n);
    const results = await Promise.all(Array.from({ length: 10 }, () => chargeCreditGrant(database.db, orgId, 30n)));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(await remaining(orgId)).toBe(10n);
    expect(await chargeCreditGrant(database.db, orgId, 11n)).toEqual({ ok: false, remaining: 10n });
    expect(await chargeCreditGrant(database.db, orgId, 10n)).toEqual({ ok: true, remaining: 0n });
  });

  it('a failed purchase is refunded once, and only when its AddCredits was never recorded', async () => {
    const orgId = await org(100n);
    const identity = await insertTestIdentity(database.db, orgId, 'grant', 'acme');
    await chargeCreditGrant(database.db, orgId, 40n);
    const step = purchaseStep(randomUUID());
    const p = { orgId, identityId: identity.id, step, credits: 40n };
    expect(await refundFailedPurchase(database.db, p)).toBe(true);
    expect(await refundFailedPurchase(database.db, p)).toBe(false);
    expect(await remaining(orgId)).toBe(100n);

    await chargeCreditGrant(database.db, orgId, 40n);
    const taken = purchaseStep(randomUUID());
    await putLedgerTxRecord(database.db, identity.id, taken, { txId: 'acc://x@y', envelope: {}, submittedAt: '' });
    expect(await refundFailedPurchase(database.db, { ...p, step: taken })).toBe(false);
    expect(await remaining(orgId)).toBe(60n);
  });

  it('creditsWorkflow: a purchase that fails for good gives the grant back and fails with the reason', async () => {
    const orgId = await org(100n);
    const identity = await insertTestIdentity(database.db, orgId, 'wf', 'acme');
    const input = (purchaseId: string): CreditPurchaseInput => ({
      purchaseId,
      orgId,
      identityId: identity.id,
      identityKeyPageUrl: identity.keyPageUrl,
      keyPageUrl: identity.keyPageUrl,
      credits: '25',
    });
    const refuse = async () => {
      throw new Error('not expected to be compensated');
    };

    await chargeCreditGrant(database.db, orgId, 25n);
    const failed = randomUUID();
    await startCreditsWorkflow(client, config.temporal.taskQueue, input(failed), refuse);
    const err = await creditsResult(client, failed, 30_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(((err as WorkflowFailedError).cause as ApplicationFailure).type).toBe('SponsorOutOfFunds');
    expect(await remaining(orgId)).toBe(100n);

    // the ledger took the AddCredits (recorded) before the failure: the credits are not given back
    await chargeCreditGrant(database.db, orgId, 25n);
    const taken = randomUUID();
    recordedFirst.add(taken);
    await startCreditsWorkflow(client, config.temporal.taskQueue, input(taken), refuse);
    await expect(creditsResult(client, taken, 30_000)).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(await remaining(orgId)).toBe(75n);
  });
});
