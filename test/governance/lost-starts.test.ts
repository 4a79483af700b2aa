/**
 * Workflow starts whose answer is lost (devnet made here: ledger simulator, two anvils, worker, app). The row of a
 * governance operation is written before its workflow starts; when the start call throws, the row is undone only if
 * Temporal does not know the workflow:
 *   - the workflow started but the answer was lost: 201, the row stays and its workflow runs
 *   - the workflow did not start: 503 SERVICE_UNAVAILABLE, the row is gone (the request can simply be retried)
 * An intent's prepare starts no workflow at all (its signature does), so it answers 201 whatever Temporal does.
 * (The identity's case is in test/identity/failures.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ed25519 } from '@noble/curves/ed25519.js';
import { eq } from 'drizzle-orm';
import { getGovernanceOp } from '../../src/db/governance.js';
import { getIntent } from '../../src/db/intents.js';
import { governanceOps } from '../../src/db/schema.js';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import { dbKinds } from '../support/env.js';
import { newClientKey, pollIdentity, startIdentityApp, startIdentityDevnet, startWorker, uniqueName, type IdentityDevnet } from '../identity/devnet.js';

let dn: IdentityDevnet;
let app: Awaited<ReturnType<typeof startIdentityApp>>;
let worker: Awaited<ReturnType<typeof startWorker>>;
let identity: { id: string; adi_url: string; account: string };
const identityKey = newClientKey();
const started: string[] = [];

beforeAll(async () => {
  dn = await startIdentityDevnet();
  app = await startIdentityApp(dn, dbKinds().includes('postgres') ? 'postgres' : 'pglite');
  worker = await startWorker(app.config, app.db);
  const res = await call('POST', '/v1/identity', {
    name: uniqueName('lost-start'),
    public_key: identityKey.publicKey,
    chains: ['ethereum-sepolia'],
    credits: 1000,
  });
  expect(res.status).toBe(202);
  const done = await pollIdentity(app, (await res.json()).identity.id, (b) => b.status !== 'creating', 90_000);
  expect(done.status).toBe('active');
  identity = { id: done.id, adi_url: done.adi_url, account: done.chain_accounts[0].address };
}, 180_000);

afterAll(async () => {
  for (const id of started)
    await app?.deps.temporal.workflow
      .getHandle(id)
      .terminate('test done')
      .catch(() => undefined);
  await worker?.stop();
  await app?.close();
  await dn?.stop();
});

const call = async (method: string, path: string, body?: unknown) =>
  app.call(path, { method, key: app.key.key, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

/**
 * Run `fn` with the app's Temporal client answering every workflow start with an error: after starting the workflow
 * (`lost`: the answer was lost) or without starting it (`refused`).
 */
async function withFailingStarts<T>(how: 'lost' | 'refused', fn: () => Promise<T>): Promise<T> {
  const client: Client['workflow'] = app.deps.temporal.workflow;
  const realStart = client.start.bind(client);
  client.start = (async (...a: Parameters<typeof realStart>) => {
    if (how === 'lost') await realStart(...a);
    throw new Error(how === 'lost' ? 'deadline exceeded (answer lost)' : 'connection refused');
  }) as typeof client.start;
  try {
    return await fn();
  } finally {
    client.start = realStart;
  }
}

const prepareIntent = () =>
  call('POST', '/v1/transaction', {
    identity_id: identity.id,
    intent: {
      adiUrl: identity.adi_url,
      legs: [
        {
          legId: 'pay',
          chain: 'ethereum-sepolia',
          chainId: 11155111,
          fromAddress: identity.account,
          toAddress: '0x000000000000000000000000000000000000bEEF',
          amount: '1',
        },
      ],
    },
  });

const prepareGovernance = () =>
  call('POST', '/v1/governance', {
    identity: identity.adi_url,
    operations: [{ type: 'add_key', public_key_hash: publicKeyHashHex(newClientKey().publicKey) }],
  });

describe('intent: prepare starts no workflow', () => {
  it('201 while Temporal refuses every start; the row waits unsigned without intent-<id>; the signature starts it', async () => {
    const res = await withFailingStarts('refused', prepareIntent);
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect((await getIntent(app.db, body.intent_id))?.status).toBe('signing_required');
    const handle = app.deps.temporal.workflow.getHandle(`intent-${body.intent_id}`);
    await expect(handle.describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

    started.push(`intent-${body.intent_id}`);
    const signature = Buffer.from(ed25519.sign(Buffer.from(body.signing_data.hash_to_sign, 'hex'), identityKey.secretKey)).toString('hex');
    const signed = await call('POST', `/v1/transaction/${body.intent_id}/signature`, { signature, public_key: identityKey.publicKey });
    expect(signed.status, await signed.clone().text()).toBe(200);
    expect((await handle.describe()).type).toBe('intentWorkflow');
    expect((await getIntent(app.db, body.intent_id))?.status).not.toBe('signing_required');
  });
});

describe('governance: a start whose answer is lost', () => {
  it('the workflow started: 201, the row stays and governance-<id> runs', async () => {
    const res = await withFailingStarts('lost', prepareGovernance);
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(201);
    started.push(`governance-${body.governance_op_id}`);
    expect((await getGovernanceOp(app.db, body.governance_op_id))?.status).toBe('signing_required');
    expect((await call('GET', `/v1/governance/${body.governance_op_id}`)).status).toBe(200);
    const desc = await app.deps.temporal.workflow.getHandle(`governance-${body.governance_op_id}`).describe();
    expect(desc.status.name).toBe('RUNNING');
  });

  it('the workflow did not start: 503, and no row is left', async () => {
    const count = async () => (await app.db.select().from(governanceOps).where(eq(governanceOps.orgId, app.key.orgId))).length;
    const before = await count();
    const res = await withFailingStarts('refused', prepareGovernance);
    expect(res.status).toBe(503);
    expect((await res.json()).code).toBe('SERVICE_UNAVAILABLE');
    expect(await count()).toBe(before);
  });
});
