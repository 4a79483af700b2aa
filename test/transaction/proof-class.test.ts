/**
 * proof_class at prepare: the class (an alias stored as the class it names) is written into the canonical intent
 * that the validators attest, answered by prepare and shown by GET and the list; an intent without it is standard.
 * A batched intent runs the cycle to its proof (in a batch anchor: test/proof/batched.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getIntent } from '../../src/db/intents.js';
import { api, arg, prepare, recordLeg, SEPOLIA, startCycleBench, submit, waitIntent, type CycleBench } from './support.js';

let b: CycleBench;

beforeAll(async () => {
  b = await startCycleBench();
}, 240_000);

afterAll(async () => {
  await b?.stop();
});

const intentData = async (id: string) => JSON.parse(((await getIntent(b.app.db, id))!.intent as { parts: string[] }).parts[0]!) as { proof_class: string };

describe('proof_class', () => {
  it('an alias is stored and shown as the class it names; none is standard', async () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'standard'],
      ['standard', 'standard'],
      ['batched', 'batched'],
      ['on_demand', 'batched'],
      ['on_cadence', 'batched'],
    ];
    for (const [given, stored] of cases) {
      const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`pc-${given}`))], given === undefined ? {} : { proof_class: given });
      expect(p.proof_class, String(given)).toBe(stored);
      expect((await intentData(p.intent_id)).proof_class).toBe(stored);
      const got = await api(b, 'GET', `/v1/transaction/${p.intent_id}`);
      expect(got.body.proof_class).toBe(stored);
    }
    const list = await api(b, 'GET', '/v1/transactions?limit=5');
    expect(new Set(list.body.transactions.map((t: { proof_class: string }) => t.proof_class))).toEqual(new Set(['standard', 'batched']));
  });

  it('a batched intent completes with its proof', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg('pc-run'))], { proof_class: 'on_demand' });
    await submit(b, p);
    const done = await waitIntent(b, p.intent_id);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.proof_class).toBe('batched');
    expect(done.proof_id).toBeTruthy();
  });
});
