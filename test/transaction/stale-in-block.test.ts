/**
 * Two signatures of one key in the same ledger block, the later-prepared one first: the ledger checks each signature
 * when it is submitted (both pass: the key's last timestamp is older than either) and again when the block executes
 * it, where the second one's timestamp is no longer the newest and it is refused (badTimestamp). Its transaction
 * then waits on the ledger without it until it expires. The signature POST waits for that execution: it answers
 * 409 SIGNING_DATA_STALE and the intent stays open for fresh signing data, instead of 200 for an intent that would
 * sit "submitted" for an hour (the cluster test found it: two lanes signing intents of one identity at once).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, arg, prepare, recordLeg, SEPOLIA, signIntent, startCycleBench, waitIntent, type CycleBench, type Json } from './support.js';

let b: CycleBench;

beforeAll(async () => {
  b = await startCycleBench();
}, 240_000);

afterAll(async () => {
  await b?.stop();
});

/** The simulator's block clock held: submissions queue, nothing executes until `resume`. */
function holdBlocks() {
  const sim = b.dn.sim.ledger as unknown as { step: () => unknown; queue: { txHash: string; signature?: unknown }[] };
  const step = sim.step;
  sim.step = () => undefined;
  return {
    queued: (txHash: string) => sim.queue.some((q) => q.txHash === txHash && q.signature),
    resume: () => void (sim.step = step),
  };
}

async function until(what: string, ok: () => boolean, ms = 30_000) {
  for (const deadline = Date.now() + ms; !ok(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('signatures of one key executed out of order in one block', () => {
  it('the one refused at execution answers 409 SIGNING_DATA_STALE, not 200; fresh signing data completes it', async () => {
    const a = await prepare(b, [recordLeg(b, SEPOLIA, arg(`blk-a-${randomUUID()}`))]);
    const later = await prepare(b, [recordLeg(b, SEPOLIA, arg(`blk-b-${randomUUID()}`))]);
    const blocks = holdBlocks();
    let answers: [Json, Json];
    try {
      const second = signIntent(b, later);
      await until('the later-prepared signature in the queue', () => blocks.queued(later.signing_data.transaction_hash));
      const first = signIntent(b, a);
      await until('the earlier-prepared signature in the queue', () => blocks.queued(a.signing_data.transaction_hash));
      blocks.resume();
      answers = await Promise.all([first, second]);
    } finally {
      blocks.resume();
    }
    const [stale, ok] = answers;
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // before: 200 and the intent stayed submitted, its ledger transaction pending without the signature
    expect(stale.status, JSON.stringify(stale.body)).toBe(409);
    expect(stale.body).toMatchObject({ code: 'SIGNING_DATA_STALE', details: { cause: 'timestamp' } });
    expect((await api(b, 'GET', `/v1/transaction/${a.intent_id}`)).body.status).toBe('signing_required');

    const fresh = await api(b, 'POST', `/v1/transaction/${a.intent_id}/signing-data`);
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    const again = await signIntent(b, a, fresh.body.signing_data.hash_to_sign);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const done = await waitIntent(b, a.intent_id);
    expect(done.error_message).toBeNull();
    expect(done.status).toBe('completed');
  }, 240_000);
});
