/**
 * Records one real history of every workflow type into test/replay/histories/<workflowType>-<version>.json
 * (version from package.json), for test/replay/replay.test.ts. Runs the devnet in-process (bench/lib/devnet.ts,
 * with the 7 validators) and drives, through the API and the Temporal client:
 *   identityWorkflow (POST /v1/identity), linkChainWorkflow (an identity made on the first chain, then linked to
 *   the second with PATCH /v1/identity/{id} link_chains), intentWorkflow (a record(bytes32) call with
 *   expectedEvents + expectedState, signed and submitted), intentChainWorkflow (a record call on each chain: a
 *   child per chain), batcherWorkflow + batchWorkflow (the same call of the
 *   batched class; the batcher recorded while it gathers), webhookDispatcherWorkflow (started as at worker start-up;
 *   recorded while it runs, after it has dispatched the run's events), webhookDeliveryWorkflow (an event delivered to
 *   a local receiver), maintenanceWorkflow (started as the hourly schedule does), governanceWorkflow (an add_key
 *   and a threshold of 2 signed and executed), intentWorkflow again (an intent of that 2-of-2 page, co-signed through
 *   POST /v1/sign after it has waited a while: intentWorkflow-<version>-cosigned.json), pendingDiscoveryWorkflow +
 *   pendingScanWorkflow (started as the schedule does),
 *   creditsWorkflow (POST /v1/identity/{id}/credits for the first identity), intentExpiryWorkflow (started as at
 *   worker start-up; recorded once it has expired an intent prepared with a 2 s time to live and never signed),
 *   providerSignWorkflow (a provider-signing identity's record call inside its policy, signed by the gateway) and
 *   providerKeySwitchWorkflow (that identity switched to an external key).
 * Files of other versions are left as they are; this version's files are overwritten. Workflow types named as
 * arguments limit the files written to theirs (the scenario still runs whole): a new version records the workflows
 * it changed.
 *
 *   npm run record:histories [-- intentWorkflow intentChainWorkflow]
 */
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ed25519 } from '@noble/curves/ed25519.js';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { createApiKey } from '../src/db/api-keys.js';
import { newKekEntry } from '../src/identity/provider-keys.js';
import { publicKeyHashHex } from '../src/identity/keys.js';
import { creditsWorkflowId } from '../src/temporal/credits.js';
import { linkChainWorkflowId } from '../src/temporal/identities.js';
import { ensureWebhookDispatcher } from '../src/temporal/webhooks.js';
import { dispatcherWorkflowId } from '../src/workflows/webhook-dispatcher.js';
import { intentExpiryWorkflowId } from '../src/workflows/intent-expiry.js';
import {
  arg,
  benchWallets,
  CHAINS,
  createBenchIdentity,
  deployTestTargets,
  fundAccount,
  prepareIntent,
  recordLeg,
  sleep,
  startBenchDevnet,
  submitIntent,
  waitCompleted,
  type BenchDevnet,
  type Json,
} from '../bench/lib/devnet.js';

const HISTORIES_DIR = fileURLToPath(new URL('../test/replay/histories/', import.meta.url));
const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const ONLY = new Set(process.argv.slice(2));

/** Writes `<workflowType>-<version>.json`, or `<workflowType>-<version>-<variant>.json` for a second path of one type. */
async function save(dn: BenchDevnet, workflowType: string, workflowId: string, variant?: string) {
  if (ONLY.size && !ONLY.has(workflowType)) return;
  const handle = dn.client.workflow.getHandle(workflowId);
  const desc = await handle.describe();
  if (desc.type !== workflowType) throw new Error(`${workflowId} is a ${desc.type}, not a ${workflowType}`);
  const history = JSON.parse(historyToJSON(await handle.fetchHistory()));
  const file = `${HISTORIES_DIR}${workflowType}-${VERSION}${variant ? `-${variant}` : ''}.json`;
  writeFileSync(file, `${JSON.stringify({ workflowType, workflowId, appVersion: VERSION, variant, status: desc.status.name, history }, null, 1)}\n`);
  console.log(`${workflowType}: ${workflowId} (${desc.status.name}, ${history.events.length} events) → ${file}`);
}

async function firstClosed(dn: BenchDevnet, workflowType: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for await (const w of dn.client.workflow.list({ query: `WorkflowType = '${workflowType}' AND ExecutionStatus = 'Completed'` })) return w.workflowId;
    if (Date.now() > deadline) throw new Error(`no ${workflowType} completed`);
    await sleep(200);
  }
}

async function main() {
  mkdirSync(HISTORIES_DIR, { recursive: true });
  // the gateway holds provider-signing identities' keys under this key-encryption key
  process.env.PROVIDER_KEKS ??= newKekEntry('record');
  // the webhook receiver below listens on loopback, which receivers may not by default
  process.env.WEBHOOK_ALLOW_PRIVATE_URLS = 'true';
  const received: string[] = [];
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(String(req.headers['webhook-id']));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as { port: number }).port;
  const dn = await startBenchDevnet({ name: 'record', validators: true });
  try {
    const taskQueue = dn.config.temporal.taskQueue;
    await ensureWebhookDispatcher(dn.client, taskQueue);
    const ep = await dn.call('POST', '/v1/webhooks/endpoints', { url: `http://127.0.0.1:${port}/hook`, skip_verification: true });
    if (ep.status !== 201) throw new Error(`webhook endpoint: ${ep.status} ${JSON.stringify(ep.body)}`);

    const who = await createBenchIdentity(dn);
    await dn.client.workflow.getHandle(`identity-${who.id}`).result();
    await save(dn, 'identityWorkflow', `identity-${who.id}`);

    // credits bought after creation for the identity's page 1
    const bought = await dn.call('POST', `/v1/identity/${who.id}/credits`, { credits: 10 });
    if (bought.status !== 200) throw new Error(`credits: ${bought.status} ${JSON.stringify(bought.body)}`);
    await save(dn, 'creditsWorkflow', creditsWorkflowId(bought.body.purchase_id));

    const single = await dn.call('POST', '/v1/identity', {
      name: `link-${randomBytes(6).toString('hex')}`,
      public_key: Buffer.from(ed25519.getPublicKey(Uint8Array.from(randomBytes(32)))).toString('hex'),
      chains: [CHAINS[0].name],
    });
    if (single.status !== 202) throw new Error(`identity on one chain: ${single.status} ${JSON.stringify(single.body)}`);
    await dn.client.workflow.getHandle(`identity-${single.body.identity.id}`).result();
    const link = await dn.call('PATCH', `/v1/identity/${single.body.identity.id}`, { link_chains: [CHAINS[1].name] });
    if (link.status !== 202) throw new Error(`link_chains: ${link.status} ${JSON.stringify(link.body)}`);
    await dn.client.workflow.getHandle(linkChainWorkflowId(single.body.identity.id, CHAINS[1].name)).result();
    await save(dn, 'linkChainWorkflow', linkChainWorkflowId(single.body.identity.id, CHAINS[1].name));

    const wallets = benchWallets(dn);
    const [target, otherTarget] = await deployTestTargets(wallets);
    await fundAccount(wallets, who.account);
    const p = await prepareIntent(dn, who, [recordLeg(CHAINS[0], who.account, target!, arg(`record-${randomBytes(4).toString('hex')}`))]);
    await submitIntent(dn, who, p);
    await waitCompleted(dn, p.intent_id);
    await dn.client.workflow.getHandle(`intent-${p.intent_id}`).result();
    await save(dn, 'intentWorkflow', `intent-${p.intent_id}`);
    // an intent over both chains runs its chain cycles in a child per chain
    const both = await prepareIntent(dn, who, [
      recordLeg(CHAINS[0], who.account, target!, arg(`record-a-${randomBytes(4).toString('hex')}`)),
      recordLeg(CHAINS[1], who.account, otherTarget!, arg(`record-b-${randomBytes(4).toString('hex')}`)),
    ]);
    await submitIntent(dn, who, both);
    await waitCompleted(dn, both.intent_id);
    await dn.client.workflow.getHandle(`intent-${both.intent_id}`).result();
    await save(dn, 'intentChainWorkflow', `intent-${both.intent_id}-${CHAINS[0].name}`);

    // an intent never signed: it has no workflow, the expiry sweep expires it
    const ttl = dn.config.intentTtlSeconds;
    dn.config.intentTtlSeconds = 2;
    const unsigned = await prepareIntent(dn, who, [recordLeg(CHAINS[0], who.account, target!, arg(`record-x-${randomBytes(4).toString('hex')}`))]);
    dn.config.intentTtlSeconds = ttl;
    for (let i = 0; (await dn.call('GET', `/v1/transaction/${unsigned.intent_id}`)).body.status !== 'expired'; i++) {
      if (i > 150) throw new Error('the unsigned intent did not expire');
      await sleep(100);
    }
    await save(dn, 'intentExpiryWorkflow', intentExpiryWorkflowId(taskQueue));

    // the batched class: the chain's batcher (still gathering: its history so far) and the batch it started
    const bp = await dn.call('POST', '/v1/transaction', {
      identity_id: who.id,
      intent: { adiUrl: who.adiUrl, legs: [recordLeg(CHAINS[0], who.account, target!, arg(`record-b-${randomBytes(4).toString('hex')}`))] },
      proof_class: 'batched',
    });
    if (bp.status !== 201) throw new Error(`prepare (batched): ${bp.status} ${JSON.stringify(bp.body)}`);
    await submitIntent(dn, who, bp.body);
    await waitCompleted(dn, bp.body.intent_id);
    await save(dn, 'batchWorkflow', await firstClosed(dn, 'batchWorkflow'));
    await save(dn, 'batcherWorkflow', `batcher-${taskQueue}-${CHAINS[0].name}`);

    await save(dn, 'webhookDeliveryWorkflow', await firstClosed(dn, 'webhookDeliveryWorkflow'));
    if (received.length === 0) throw new Error('the receiver got no delivery');

    // governance: a second key added to the identity's 1-of-1 page and the page made 2-of-2, signed by its key,
    // executed by the ledger
    const extraSecret = Uint8Array.from(randomBytes(32));
    const extra = Buffer.from(ed25519.getPublicKey(extraSecret)).toString('hex');
    const gov = await dn.call('POST', '/v1/governance', {
      identity: who.adiUrl,
      operations: [
        { type: 'add_key', public_key_hash: publicKeyHashHex(extra) },
        { type: 'set_threshold', threshold: 2 },
      ],
    });
    if (gov.status !== 201) throw new Error(`governance: ${gov.status} ${JSON.stringify(gov.body)}`);
    const govSig = Buffer.from(ed25519.sign(Buffer.from(gov.body.signing_data.hash_to_sign, 'hex'), who.secretKey)).toString('hex');
    const signed = await dn.call('POST', `/v1/governance/${gov.body.governance_op_id}/signature`, { signature: govSig, public_key: who.publicKey });
    if (signed.status !== 200) throw new Error(`governance signature: ${signed.status} ${JSON.stringify(signed.body)}`);
    await dn.client.workflow.getHandle(`governance-${gov.body.governance_op_id}`).result();
    await save(dn, 'governanceWorkflow', `governance-${gov.body.governance_op_id}`);

    // co-signing: an intent of the 2-of-2 page waits on the ledger (its first follow, then looks between timers)
    // until the second key approves through POST /v1/sign, whose Signal ends the pause
    const cp = await prepareIntent(dn, who, [recordLeg(CHAINS[0], who.account, target!, arg(`record-c-${randomBytes(4).toString('hex')}`))]);
    const cs = await submitIntent(dn, who, cp);
    await sleep(14_000);
    const req = await dn.call('POST', '/v1/sign', { type: 'pending_tx', target_id: cs.tx_hash, identity: who.adiUrl, public_key: extra });
    if (req.status !== 201) throw new Error(`sign request: ${req.status} ${JSON.stringify(req.body)}`);
    const coSig = Buffer.from(ed25519.sign(Buffer.from(req.body.signing_data.data_for_signature, 'hex'), extraSecret)).toString('hex');
    const co = await dn.call('POST', `/v1/sign/${req.body.sign_request_id}/signature`, { signature: coSig, public_key: extra });
    if (co.status !== 200) throw new Error(`co-signature: ${co.status} ${JSON.stringify(co.body)}`);
    await waitCompleted(dn, cp.intent_id);
    await dn.client.workflow.getHandle(`intent-${cp.intent_id}`).result();
    await save(dn, 'intentWorkflow', `intent-${cp.intent_id}`, 'cosigned');

    // provider signing: the gateway holds the identity's key (PROVIDER_KEKS set before the devnet started)
    const provider = await dn.call('POST', '/v1/identity', {
      name: `prv-${randomBytes(6).toString('hex')}`,
      signing_mode: 'provider',
      chains: [CHAINS[0].name],
      credits: 1000,
    });
    if (provider.status !== 202) throw new Error(`provider identity: ${provider.status} ${JSON.stringify(provider.body)}`);
    const providerId: string = provider.body.identity.id;
    await dn.client.workflow.getHandle(`identity-${providerId}`).result();
    const prov = (await dn.call('GET', `/v1/identity/${providerId}`)).body;
    await fundAccount(wallets, prov.chain_accounts[0].address);
    const me = (await dn.call('GET', '/v1/me')).body;
    const { rawKey: manageKey } = await createApiKey(dn.database.db, {
      orgId: me.org_id,
      name: 'record-manage',
      rateLimitRpm: 1_000_000,
      permissions: ['read', 'write', 'provider:manage'],
    });
    const manage = async (method: string, path: string, body: unknown) => {
      const res = await dn.app.request(path, { method, headers: { ...dn.headers, 'X-API-Key': manageKey }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const policy = { allowed_chains: [CHAINS[0].name], allowed_targets: [target!], max_value_per_leg: '1000', max_value_per_24h: '10000' };
    const set = await manage('PATCH', `/v1/identity/${providerId}`, { provider_policy: policy });
    if (set.status !== 200) throw new Error(`provider policy: ${set.status} ${JSON.stringify(set.body)}`);
    const pp = await dn.call('POST', '/v1/transaction', {
      identity_id: providerId,
      intent: {
        adiUrl: prov.adi_url,
        legs: [recordLeg(CHAINS[0], prov.chain_accounts[0].address, target!, arg(`record-p-${randomBytes(4).toString('hex')}`))],
      },
    });
    if (pp.status !== 201) throw new Error(`provider prepare: ${pp.status} ${JSON.stringify(pp.body)}`);
    await waitCompleted(dn, pp.body.intent_id);
    await save(dn, 'providerSignWorkflow', `provider-sign-intent-${pp.body.intent_id}`);
    const external = Buffer.from(ed25519.getPublicKey(Uint8Array.from(randomBytes(32)))).toString('hex');
    const sw = await manage('PATCH', `/v1/identity/${providerId}`, { public_key: external });
    if (sw.status !== 202) throw new Error(`key switch: ${sw.status} ${JSON.stringify(sw.body)}`);
    await dn.client.workflow.getHandle(`provider-key-switch-${providerId}`).result();
    await save(dn, 'providerKeySwitchWorkflow', `provider-key-switch-${providerId}`);

    const discoveryId = `pending-discovery-record-${randomBytes(4).toString('hex')}`;
    await dn.client.workflow.execute('pendingDiscoveryWorkflow', { taskQueue, workflowId: discoveryId, args: [] });
    await save(dn, 'pendingDiscoveryWorkflow', discoveryId);
    await save(dn, 'pendingScanWorkflow', await firstClosed(dn, 'pendingScanWorkflow'));

    const maintenanceId = `maintenance-record-${randomBytes(4).toString('hex')}`;
    await dn.client.workflow.execute('maintenanceWorkflow', { taskQueue, workflowId: maintenanceId, args: [{}] });
    await save(dn, 'maintenanceWorkflow', maintenanceId);

    await save(dn, 'webhookDispatcherWorkflow', dispatcherWorkflowId(taskQueue));
  } finally {
    await dn.stop();
    receiver.close();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
