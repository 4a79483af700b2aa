/**
 * The proof cycle under faults, on a devnet made here:
 * - a worker process is killed (SIGKILL) right after each step's effect and before Temporal hears of it (9 points:
 *   signature submission, ledger follow, attestation, createAnchor, executeComprehensiveProof, execution,
 *   observation, result record, finalization; the short steps are local activities, whose results reach Temporal
 *   only with the workflow task that ran them); the next worker process finishes the step and the intent, and
 *   every on-chain effect happened exactly once. Needs PostgreSQL (the processes share the database); skipped
 *   without it;
 * - an executor that changes the target, the value or one calldata byte gets a revert from the account, nothing
 *   runs, and the intent reports it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { proofAnchorAbi, testTargetAbi } from '../../src/chain/abi/index.js';
import { accountAbiWithAnchorErrors } from '../../src/chain/account.js';
import type { SendExecution } from '../../src/activities/intent.js';
import { parseProofResult } from '../../src/protocol/result-record.js';
import { AMOY, api, arg, prepare, recordLeg, SEPOLIA, sign, startCycleBench, startCycleWorker, transferLeg, waitIntent, type CycleBench } from './support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const hasPostgres = !!inject('postgresUrl');
let b: CycleBench;
const children: ChildProcess[] = [];

beforeAll(async () => {
  b = await startCycleBench();
}, 240_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await b?.stop();
});

const POINTS = [
  'submitIntentSignature',
  'followIntentTransaction',
  'attestChain',
  'createChainAnchor',
  'proveChainAnchor',
  'executeChainLeg',
  'observeChainLeg',
  'recordChainLegResult',
  'finalizeIntent',
] as const;

/**
 * A worker process (test/support/crash-worker.ts) on the bench's task queue and database that kills itself after
 * `point`'s effect. Resolves once it died that way; rejects if it exits otherwise or does not get there in 90 s.
 */
async function crashAt(point: (typeof POINTS)[number]): Promise<void> {
  const c = b.app.config;
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/crash-worker.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...b.dn.env,
      DATABASE_URL: b.app.database.url!,
      TEMPORAL_ADDRESS: c.temporal.address,
      TEMPORAL_NAMESPACE: c.temporal.namespace,
      TEMPORAL_TASK_QUEUE: c.temporal.taskQueue,
      LOG_LEVEL: 'error',
      CRASH_AFTER: point,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<NodeJS.Signals | number | null>((r) => child.once('exit', (code, signal) => r(signal ?? code)));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 90_000)));
  const how = await Promise.race([exit, timeout]).finally(() => clearTimeout(timer));
  if (how === 'timeout') {
    child.kill('SIGKILL');
    throw new Error(`never reached ${point}:\n${out.slice(-3000)}`);
  }
  if (how !== 'SIGKILL') throw new Error(`the worker exited (${how}) before ${point}:\n${out.slice(-3000)}`);
}

const calls = (chain: string) => b.wallets[chain]!.public.readContract({ address: b.targets[chain]!, abi: testTargetAbi, functionName: 'calls' });

describe.skipIf(!hasPostgres)('worker killed at every step', () => {
  it('every step survives a worker death; each leg executed once, one anchor, one result per leg', { timeout: 900_000 }, async () => {
    await b.worker!.stop();
    b.worker = undefined;
    const before = { s: await calls(SEPOLIA.name), a: await calls(AMOY.name) };
    const payee = '0x000000000000000000000000000000000000C0DE' as Address;
    const p = await prepare(b, [recordLeg(b, SEPOLIA, arg('crash-s')), transferLeg(b, SEPOLIA, payee, '4242'), recordLeg(b, AMOY, arg('crash-a'))]);
    const submission = api(b, 'POST', `/v1/transaction/${p.intent_id}/signature`, {
      signature: sign(p.signing_data.hash_to_sign, b.identity.key.secretKey),
      public_key: b.identity.key.publicKey,
    });
    // each worker process dies at its point; the next one takes over the step where Temporal times it out
    for (const point of POINTS) await crashAt(point);
    b.worker = await startCycleWorker(b.app);
    const s = await submission;
    expect(s.status).toBe(200);
    const done = await waitIntent(b, p.intent_id);
    expect(done.error_message).toBeNull();
    expect(done.status).toBe('completed');

    // exactly once, read from the chains and the ledger
    expect(await calls(SEPOLIA.name)).toBe(before.s + 1n);
    expect(await calls(AMOY.name)).toBe(before.a + 1n);
    for (const chain of [SEPOLIA.name, AMOY.name]) {
      const w = b.wallets[chain]!;
      const legs = done.legs.filter((l: any) => l.chain === chain);
      const anchorId = legs[0].anchor_id as Hex;
      const executed = await w.public.getContractEvents({
        address: b.identity.account,
        abi: accountAbiWithAnchorErrors,
        eventName: 'Executed',
        args: { anchorId },
        fromBlock: 0n,
      });
      expect(executed.map((e) => Number(e.args.leafIndex)).sort()).toEqual(legs.map((l: any) => l.leaf_index).sort());
      const proofAnchor = b.dn.validators!.contracts.proofAnchor;
      for (const eventName of ['AnchorCreated', 'AnchorProven'] as const) {
        const logs = await w.public.getContractEvents({ address: proofAnchor, abi: proofAnchorAbi, eventName, args: { anchorId }, fromBlock: 0n });
        expect(logs.length, `${eventName} on ${chain}`).toBe(1);
      }
    }
    const resultsAccount = b.dn.validators!.protocol.resultsAccount;
    const records = (await b.dn.ledger.readDataEntries(resultsAccount)).map((e) => parseProofResult(e.data, true)).filter((r) => r?.intent_id === p.intent_id);
    expect(records.length).toBe(3);
    expect(new Set(records.map((r) => r!.result_id)).size).toBe(3);
  });
});

describe('tampering executor', () => {
  it('a changed target, value or calldata byte reverts from the account; nothing runs; the intent reports it', async () => {
    let kind: 'target' | 'value' | 'calldata' = 'target';
    const tamper: SendExecution = (w, account, call) => {
      const c = { ...call };
      if (kind === 'target') c.target = '0x000000000000000000000000000000000000dEaD';
      if (kind === 'value') c.value = call.value + 1n;
      if (kind === 'calldata') c.data = `${call.data.slice(0, -2)}${call.data.endsWith('00') ? '01' : '00'}` as Hex;
      // a fixed gas limit skips estimation, so the tampered call lands on chain and reverts there
      return w.wallet.writeContract({
        address: account,
        abi: accountAbiWithAnchorErrors,
        functionName: 'executeGovernanceProofDirect',
        args: [c.target, c.value, c.data, { ...c.proof, merkleProof: [...c.proof.merkleProof] }],
        gas: 400_000n,
      });
    };
    await b.worker!.stop();
    b.worker = await startCycleWorker(b.app, { sendExecution: tamper });
    try {
      for (const k of ['target', 'value', 'calldata'] as const) {
        kind = k;
        const before = await calls(SEPOLIA.name);
        const p = await prepare(b, [recordLeg(b, SEPOLIA, arg(`tamper-${k}`), {}, k === 'value' ? '5' : '0')]);
        const s = await api(b, 'POST', `/v1/transaction/${p.intent_id}/signature`, {
          signature: sign(p.signing_data.hash_to_sign, b.identity.key.secretKey),
          public_key: b.identity.key.publicKey,
        });
        expect(s.status).toBe(200);
        const done = await waitIntent(b, p.intent_id);
        expect(done.status, k).toBe('failed');
        expect(done.legs[0].status).toBe('failed');
        expect(done.error_message).toMatch(
          /reverted on chain \(InvalidMerkleProof: the runtime \(chain id, target, value, calldata\) does not match the anchored execution commitment\)/,
        );
        // the committed call never ran, and its proven leaf stays usable until the intent's expires_at: said so
        expect(done.error_message).toMatch(/proof stays valid until \d{4}-\d\d-\d\dT[\d:.]+Z \(the intent's expires_at\): anyone may still run the leg/);
        const tx = /transaction (0x[0-9a-f]{64})/.exec(done.error_message)![1] as Hex;
        expect((await b.wallets[SEPOLIA.name]!.public.getTransactionReceipt({ hash: tx })).status).toBe('reverted');
        expect(await calls(SEPOLIA.name)).toBe(before);
        expect(done.legs[0].transactions.execute_comprehensive_proof).toMatch(/^0x/);
        expect(done.proof_id).toBeNull();
      }
    } finally {
      await b.worker.stop();
      b.worker = await startCycleWorker(b.app);
    }
  });
});
