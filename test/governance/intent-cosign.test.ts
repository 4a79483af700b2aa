/**
 * Co-signing completes a pending intent on the proof-cycle devnet: the identity's page becomes
 * 2-of-3 through governance; an intent signed by its initiator waits on the ledger until a second seat approves
 * through POST /v1/sign (found in /v1/pending), then the proof cycle runs to completed; reject votes defeat
 * another intent, whose workflow ends failed with the ledger's reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { INTENT_MEMO } from '../../src/protocol/intent/model.js';
import { newClientKey } from '../identity/devnet.js';
import { api, arg, prepare, recordLeg, SEPOLIA, startCycleBench, submit, submitToLedgerOnly, waitIntent, type CycleBench } from '../transaction/support.js';
import { cosign as cosignWith, makePanel } from './panel.js';

let b: CycleBench;
const seat2 = newClientKey();
const seat3 = newClientKey();

beforeAll(async () => {
  b = await startCycleBench();
}, 240_000);

afterAll(async () => {
  await b?.stop();
});

const cosign = (txHash: string, k: ReturnType<typeof newClientKey>, vote: string) => cosignWith(b, txHash, k, vote);

describe('co-signing a pending intent', () => {
  it('the identity page becomes 2-of-3 through governance', async () => {
    await makePanel(b, [seat2, seat3], 2);
    const page = await b.dn.ledger.queryKeyPage(`${b.identity.adiUrl}/book/1`);
    expect(page).toMatchObject({ acceptThreshold: 2 });
    expect(page.keys).toHaveLength(3);
  });

  it('the initiator signs, the intent waits; the second seat approves through /v1/sign and the proof cycle completes', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`cosign-${randomUUID()}`))]);
    const s = await submit(b, p);
    expect(s.status).toBe('submitted');
    await new Promise((r) => setTimeout(r, 1000));
    const waiting = await api(b, 'GET', `/v1/transaction/${p.intent_id}`);
    expect(waiting.body.stage).toBe('submitted');
    expect((await b.dn.ledger.getTransaction(`acc://${s.tx_hash}@${b.identity.adiUrl.slice('acc://'.length)}/data`)).pending).toBe(true);

    // the second seat finds it in the inbox
    await b.app.deps.temporal.workflow.execute('pendingScanWorkflow', {
      workflowId: `pending-scan-test-${randomUUID()}`,
      taskQueue: b.app.config.temporal.taskQueue,
      args: [{ orgId: b.app.key.orgId }],
    });
    const inbox = await api(b, 'GET', `/v1/pending?identity=${encodeURIComponent(b.identity.adiUrl)}&category=transactions`);
    expect(inbox.body.actions.find((x: any) => x.tx_hash === s.tx_hash)).toMatchObject({
      type: 'writeData',
      memo: INTENT_MEMO, // the intent's ledger transaction header's
      collected_signatures: 1,
      required_signatures: 2,
      is_ready: false,
    });

    const r = await cosign(s.tx_hash, seat2, 'approve');
    expect(r.status).toBe('submitted');
    const done = await waitIntent(b, p.intent_id);
    expect(done.error_message).toBeNull();
    expect(done).toMatchObject({ status: 'completed', stage: 'completed' });
  }, 150_000);

  it('a signature the ledger already holds (the first answer lost) is accepted when sent again; the intent waits for the co-signer', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`lost-answer-${randomUUID()}`))]);
    // a first attempt's submission reaches the ledger (which holds it for the second seat); its answer is lost
    const held = await submitToLedgerOnly(b, p);
    const s = await submit(b, p); // the ledger refuses the same signature again: its timestamp is used
    expect(s).toMatchObject({ status: 'submitted' });
    expect(s.tx_hash.replace(/^0x/, '')).toBe(held.txHash.replace(/^0x/, ''));
    await cosign(s.tx_hash, seat3, 'approve');
    const done = await waitIntent(b, p.intent_id);
    expect(done.error_message).toBeNull();
    expect(done.status).toBe('completed');
  }, 150_000);

  it('reject votes defeat an intent: its workflow ends failed with the reason', async () => {
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`reject-${randomUUID()}`))]);
    const s = await submit(b, p);
    await cosign(s.tx_hash, seat2, 'reject');
    await cosign(s.tx_hash, seat3, 'reject');
    const done = await waitIntent(b, p.intent_id);
    expect(done.status).toBe('failed');
    expect(done.error_message).toMatch(/reject/);
  }, 150_000);
});
