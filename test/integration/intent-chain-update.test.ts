/**
 * updateIntentChain writes a chain's cycle row only if it is still the version it read (two round trips, no
 * transaction): concurrent changes of one row are all kept (none lost, each applied to the row as another left it),
 * a stage change moves the intent's stage to the least advanced of its live chains, a `known` read that has gone
 * stale is read again instead of overwriting what changed since, and a `known` read is kept current by each update.
 */
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureIntentChain, getIntentChains, getIntentWithChains, getVersionedIntentChains, updateIntentChain } from '../../src/db/intents.js';
import { intents } from '../../src/db/schema.js';
import type { ChainCycleRecord } from '../../src/protocol/cycle-record.js';
import { dbKinds, openTestDatabase } from '../support/env.js';
import { createTestOrgAndKey, insertTestIntent } from '../support/platform.js';

const record = (chain: string): ChainCycleRecord =>
  ({
    chain,
    chainId: '1',
    proofAnchor: `0x${'aa'.repeat(20)}`,
    anchorId: '0x01',
    commitmentRoot: '0x02',
    leafCount: '1',
    legs: [],
  }) as unknown as ChainCycleRecord;

describe.each(dbKinds())('updateIntentChain (%s)', (kind) => {
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let intentId: string;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
    const db = database.db;
    const org = await createTestOrgAndKey(db, {});
    ({ intentId } = await insertTestIntent(db, org.orgId, { status: 'submitted', chains: ['ethereum-sepolia', 'arbitrum-sepolia'] }));
    for (const chain of ['ethereum-sepolia', 'arbitrum-sepolia']) await ensureIntentChain(db, intentId, chain, record(chain));
  }, 60_000);
  afterAll(async () => database?.cleanup());

  it('keeps every one of 20 concurrent changes of one row', async () => {
    const db = database.db;
    await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        updateIntentChain(db, intentId, 'ethereum-sepolia', {
          step: `s${n}`,
          record: (r) => void r.legs.push({ legId: `leg-${n}`, leafIndex: n }),
        }),
      ),
    );
    const [row] = (await getIntentChains(db, intentId)).filter((c) => c.chain === 'ethereum-sepolia');
    expect(row!.record.legs.map((l) => l.legId).sort()).toEqual(Array.from({ length: 20 }, (_, n) => `leg-${n}`).sort());
    expect(Object.keys(row!.stepTimes).sort()).toEqual(Array.from({ length: 20 }, (_, n) => `s${n}`).sort());
  });

  it("moves the intent's stage to the least advanced live chain, and reads again when `known` is stale", async () => {
    const db = database.db;
    const stageOfIntent = async () => (await db.select({ stage: intents.stage }).from(intents).where(eq(intents.id, intentId)))[0]!.stage;
    const known = await getVersionedIntentChains(db, intentId);
    await updateIntentChain(db, intentId, 'ethereum-sepolia', { stage: 'anchoring' }, known);
    // the other chain is still pending: the intent stays where it was
    expect(await stageOfIntent()).not.toBe('anchoring');
    await updateIntentChain(db, intentId, 'arbitrum-sepolia', { stage: 'observing' });
    expect(await stageOfIntent()).toBe('anchoring');
    // `known` predates both changes: its version of ethereum-sepolia is stale, so the row is read again and the
    // change lands on the row as it is now (the legs written above stay, the stage is the new one)
    const rec = await updateIntentChain(db, intentId, 'ethereum-sepolia', { stage: 'recording', record: (r) => void (r.proveTx = '0xab') }, known);
    expect(rec.legs).toHaveLength(20);
    const rows = await getIntentChains(db, intentId);
    expect(rows.find((c) => c.chain === 'ethereum-sepolia')).toMatchObject({ stage: 'recording', record: { proveTx: '0xab' } });
    expect(await stageOfIntent()).toBe('observing');
    // a failed chain does not hold the intent back
    await updateIntentChain(db, intentId, 'arbitrum-sepolia', { stage: 'failed' });
    expect(await stageOfIntent()).toBe('recording');
  });

  it('keeps `known` current, as getIntentWithChains and getVersionedIntentChains read it', async () => {
    const db = database.db;
    const found = await getIntentWithChains(db, intentId);
    expect(found!.row.id).toBe(intentId);
    const fresh = await getVersionedIntentChains(db, intentId);
    expect(found!.chains).toEqual(fresh);
    const known = found!.chains;
    await updateIntentChain(db, intentId, 'ethereum-sepolia', { step: 'first', record: (r) => void (r.createAnchorTx = '0x01') }, known);
    // the entry took the row as written and its new version: the next update with it needs no read
    expect(known).toEqual(await getVersionedIntentChains(db, intentId));
    await updateIntentChain(db, intentId, 'ethereum-sepolia', { step: 'second', record: (r) => void (r.proveTx = '0x02') }, known);
    const [row] = (await getVersionedIntentChains(db, intentId)).filter((c) => c.chain === 'ethereum-sepolia');
    expect(row).toMatchObject({ record: { createAnchorTx: '0x01', proveTx: '0x02' } });
    expect(Object.keys(row!.stepTimes)).toEqual(expect.arrayContaining(['first', 'second']));
    expect(await getIntentWithChains(db, randomUUID())).toBeUndefined();
  });
});
