/**
 * Proof bundle on the validator devnet (ledger-sim + two anvils + 7 validators): a proof cycle run by hand
 * (intent write, attestation quorum, createAnchor, executeComprehensiveProof, execution, observation quorum,
 * proof_result write-back), a CycleRecord filled from the quorum results, assembleBundle, then verifyBundle:
 * valid, valid after a JSON round trip, invalid after any single changed byte, and invalid (for the named reason)
 * after targeted changes re-sealed with a fresh bundle_hash. The CLI exits 0 / non-zero on good / tampered files.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, parseEther, stringToHex, type Hex } from 'viem';
import { createAccount, executeGovernanceProofDirect, proofForLeg } from '../../src/chain/account.js';
import { createAnchor, executeComprehensiveProof, readValidatorSet } from '../../src/chain/anchor.js';
import type { ChainWriter } from '../../src/chain/clients.js';
import { anchorMessage } from '../../src/chain/formulas.js';
import type { TxStatus } from '../../src/ledger/index.js';
import { assembleBundle } from '../../src/proof/assemble.js';
import { bundleHash, bundleSchemaProblems, sealBundle, serializeBundle, type ProofBundle } from '../../src/proof/bundle.js';
import { quorumRecord, type ChainCycleRecord, type CycleRecord } from '../../src/protocol/cycle-record.js';
import { planIntentAnchor, type CanonicalIntent } from '../../src/protocol/intent/index.js';
import { verifyBundle, type BundleVerification } from '../../src/proof/verify.js';
import { attestRequestFor, observeRequestFor } from '../../src/protocol/validator-wire.js';
import { held } from '../ledger-conformance/harness.js';
import { CHAIN, CHAIN_B, createIdentity, intentFor, recordLeg, startTestDevnet, writeIntent, type Identity, type TestDevnet } from '../validator/devnet.js';

let d: TestDevnet;
let id: Identity;
let dir: string;

beforeAll(async () => {
  d = await startTestDevnet();
  id = await createIdentity(d);
  // the same account on CHAIN_B, funded for native legs there
  await createAccount(d.wB, d.vn.contracts.accountFactory, id.url);
  await d.wB.public.waitForTransactionReceipt({ hash: await d.wB.wallet.sendTransaction({ to: id.account, value: parseEther('1') }) });
  dir = mkdtempSync(join(tmpdir(), 'pgw-bundle-'));
}, 180_000);

afterAll(async () => {
  await d?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const arg = (s: string) => keccak256(stringToHex(s));

const chains = () => [
  { ...CHAIN, w: d.w },
  { ...CHAIN_B, w: d.wB },
];
const writerOf = (name: string): ChainWriter => {
  const c = chains().find((x) => x.name === name);
  if (!c) throw new Error(`no chain ${name}`);
  return c.w;
};

/**
 * Runs the whole cycle of `intent` by hand on every chain it has legs on; returns the filled CycleRecord. `who` is
 * the identity (default `id`), `write` puts the intent on the ledger (default: writeIntent, signed by its key).
 */
async function runCycle(
  intent: CanonicalIntent,
  who: Identity = id,
  write: () => Promise<TxStatus> = () => writeIntent(d, who, intent.parts),
): Promise<CycleRecord> {
  const st = await write();
  expect(st.delivered).toBe(true);
  const proofAnchor = d.vn.contracts.proofAnchor;
  const out: ChainCycleRecord[] = [];
  for (const ch of chains()) {
    const chainId = BigInt(ch.chainId);
    if (!intent.legs.some((l) => l.chainId === chainId)) continue;
    const plan = planIntentAnchor(intent, { chainId, proofAnchor, ledgerTxHash: st.txHash });
    const setRoot = (await readValidatorSet(ch.w, proofAnchor)).root;
    const message = anchorMessage({ chainId, anchor: proofAnchor, anchorId: plan.anchorId, validatorSetRoot: setRoot });
    const pre = await d.quorum.attest(attestRequestFor(st.txId, ch.name, plan), { message });
    const ca = await createAnchor(ch.w, proofAnchor, {
      commitmentRoot: plan.commitmentRoot,
      operationId: plan.operationId,
      ledgerTxHash: plan.ledgerTxHash,
      leafCount: plan.leafCount,
    });
    const pr = await executeComprehensiveProof(ch.w, proofAnchor, {
      anchorId: plan.anchorId,
      signerBitmap: pre.signerBitmap,
      signature: pre.aggregateSignature,
    });
    const rec: ChainCycleRecord = {
      chain: ch.name,
      chainId: String(ch.chainId),
      proofAnchor,
      anchorId: plan.anchorId,
      commitmentRoot: plan.commitmentRoot,
      leafCount: plan.leafCount.toString(),
      validatorSetRoot: setRoot,
      attestation: { ...quorumRecord(pre), authority: pre.responses.get(pre.signers[0]!)!.authority },
      createAnchorTx: ca.tx!.txHash,
      proveTx: pr.tx!.txHash,
      legs: [],
    };
    for (let i = 0; i < plan.legs.length; i++) {
      const l = plan.legs[i]!;
      const exec = await executeGovernanceProofDirect(ch.w, who.account, { target: l.target, value: l.value, data: l.data, proof: proofForLeg(plan, i) });
      expect(exec.status).toBe('success');
      const oreq = observeRequestFor(st.txId, ch.name, plan.anchorId, i, exec.txHash);
      const post = await d.quorum.observe(oreq, { chainId, proofAnchor, validatorSetRoot: setRoot });
      const written = await d.quorum.writeResult(oreq, post);
      const o = post.responses.get(post.signers[0]!)!;
      rec.legs.push({
        legId: l.legId,
        leafIndex: i,
        executionTx: exec.txHash,
        observation: { ...quorumRecord(post), resultHash: post.resultHash, confirmations: o.confirmations, checks: o.checks },
        result: { resultId: written.resultId, resultsAccount: written.resultsAccount, txId: written.txId, writtenBy: written.writtenBy },
      });
    }
    out.push(rec);
  }
  return { intentId: intent.intentId, adiUrl: who.url, dataAccountUrl: who.data, ledgerTxId: st.txId, ledgerTxHash: st.txHash, chains: out };
}

const deps = () => ({ ledger: d.ledger, chain: writerOf });
const failed = (v: BundleVerification) => v.checks.filter((c) => !c.ok).map((c) => c.name);
const clone = (b: ProofBundle): ProofBundle => JSON.parse(JSON.stringify(b)) as ProofBundle;

/** `base` changed by `mutate`, re-sealed with a fresh bundle_hash, and verified. */
async function resealed(base: ProofBundle, mutate: (b: ProofBundle) => void): Promise<BundleVerification> {
  const b = clone(base);
  mutate(b);
  return verifyBundle(serializeBundle(sealBundle(b)));
}

/** Invalid for its form alone: encoding.schema fails with `detail`, the seal holds. */
function expectRefusedBySchema(v: BundleVerification, what: string, detail: string) {
  expect(v.valid, what).toBe(false);
  expect(failed(v), what).toContain('encoding.schema');
  expect(v.checks.find((x) => x.name === 'encoding.schema')!.detail, what).toContain(detail);
  expect(failed(v), what).not.toContain('bundle.hash');
}

/** Flips the byte at `pos` (xor 0x01) of the serialized bundle. */
function flip(bytes: Uint8Array, pos: number): Uint8Array {
  const out = Uint8Array.from(bytes);
  out[pos] = out[pos]! ^ 0x01;
  return out;
}

/** Position of the n-th hex digit inside the first occurrence of `needle` in `text`. */
function posIn(text: string, needle: string, n: number): number {
  const at = text.indexOf(needle);
  if (at < 0) throw new Error(`not in the bundle: ${needle.slice(0, 40)}`);
  return Buffer.byteLength(text.slice(0, at + n));
}

function flipHex(h: Hex, nibble: number): Hex {
  const i = 2 + nibble;
  const c = h[i]!;
  return `${h.slice(0, i)}${c === '0' ? '1' : '0'}${h.slice(i + 1)}` as Hex;
}

/** The CLI as a user runs it (async, so the in-process devnet keeps serving). */
function runCli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile('npx', ['tsx', 'src/bin/cli.ts', 'verify-bundle', ...args], { cwd: process.cwd(), encoding: 'utf8', timeout: 60_000 }, (e, out, err) =>
      resolve({ code: e ? ((e as { code?: number }).code ?? null) : 0, out, err }),
    );
  });
}

describe('proof bundle', () => {
  let single: ProofBundle;
  let singleRecord: CycleRecord;

  it('contract-call leg with expectedEvents and expectedState: bundle assembled from the ledger and the chain verifies offline', async () => {
    const intent = intentFor(id, [recordLeg(d, id, arg('bundle-single'))]);
    const record = await runCycle(intent);
    singleRecord = record;
    const t0 = performance.now();
    single = await assembleBundle(deps(), record);
    const assembleMs = performance.now() - t0;
    expect(single.version).toBe('pgw-proof-bundle/2');
    expect(single.bundle_hash).toBe(bundleHash(single));
    expect(single.intent.operation_id).toBe(intent.operationId);
    expect(single.intent.parts).toEqual(intent.parts);
    expect(single.ledger.signatures.length).toBe(1);
    expect(single.ledger.key_page).toMatchObject({ url: id.page, version: 1, accept_threshold: 1 });
    expect((single.ledger.signatures[0] as { signature?: string }).signature).toMatch(/^[0-9a-f]{128}$/);
    expect(single.chains).toHaveLength(1);
    const c = single.chains[0]!;
    expect(c.validator_set.public_keys).toHaveLength(7);
    expect(c.attestation.signers).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(c.legs[0]!.observation.checks).toEqual({ call_binding: 'calldata', expected_events: 1, expected_state: 1 });
    expect(c.legs[0]!.result.parts[0]).toBe('entry_type=pgw:proof_result:v2');
    expect(c.legs[0]!.effects.state).toHaveLength(1);
    expect(c.legs[0]!.effects.state[0]!.slots[0]!.value).toBe(arg('bundle-single'));
    // version 2's forms: counts, indexes, block numbers and gas as numbers, integers that may exceed 2^53 as decimal
    // strings, ledger hashes bare hex, EVM hashes 0x-hex, a chain as chain + evm_chain_id
    expect(c.legs[0]!.execution.block.number).toBeGreaterThan(0);
    expect(typeof c.legs[0]!.execution.block.gasUsed).toBe('number');
    expect(c.legs[0]!.execution.block.baseFeePerGas).toMatch(/^[0-9]+$/);
    expect(c.anchor.leaf_count).toBe(1);
    expect(c.legs[0]!.leaf_index).toBe(0);
    expect(c.validator_set.powers.every((p) => /^[1-9][0-9]*$/.test(p))).toBe(true);
    expect(c.attestation.signer_bitmap).toBe('127');
    expect(single.ledger.authority).toMatchObject({ key_page_version: 1, threshold: 1, signatures: 1, delegated: 0 });
    expect(single.ledger.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(single.ledger.key_page.key_hashes[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(single.ledger.receipt.start).toBe(single.ledger.tx_hash);
    expect(c.legs[0]!.result.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(c.legs[0]!.execution.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(c).toMatchObject({ chain: CHAIN.name, evm_chain_id: CHAIN.chainId });
    expect(c).not.toHaveProperty('chain_id');
    expect(c.anchor.tx_hash).toBe(single.ledger.tx_hash);
    expect(c.anchor).not.toHaveProperty('ledger_tx_hash');

    const t1 = performance.now();
    const v = await verifyBundle(single);
    const verifyMs = performance.now() - t1;
    console.log(
      `single-leg bundle: ${serializeBundle(single).length} bytes; assemble ${assembleMs.toFixed(0)} ms; verify ${verifyMs.toFixed(0)} ms; ${v.checks.length} checks`,
    );
    expect(failed(v)).toEqual([]);
    expect(v.valid).toBe(true);
    // the builder's real output is of the schema the verifier holds it to
    expect(bundleSchemaProblems(single)).toEqual([]);
    expect(v.checks.map((x) => x.name)).toEqual(
      expect.arrayContaining([
        'encoding.canonical_json',
        'encoding.schema',
        'bundle.hash',
        'intent.parts',
        'ledger.transaction',
        'ledger.signatures',
        'ledger.authority',
        'ledger.key_page',
        'ledger.receipt',
        `chain[${CHAIN.name}].anchor`,
        `chain[${CHAIN.name}].validator_set`,
        `chain[${CHAIN.name}].attestation`,
        `chain[${CHAIN.name}].create_anchor`,
        `chain[${CHAIN.name}].prove`,
        `chain[${CHAIN.name}].leg[${intent.legs[0]!.legId}].execution_inclusion`,
        `chain[${CHAIN.name}].leg[${intent.legs[0]!.legId}].execution_call`,
        `chain[${CHAIN.name}].leg[${intent.legs[0]!.legId}].effects`,
        `chain[${CHAIN.name}].leg[${intent.legs[0]!.legId}].expected_state`,
        `chain[${CHAIN.name}].leg[${intent.legs[0]!.legId}].proof_result`,
        `chain[${CHAIN.name}].leg[${intent.legs[0]!.legId}].result_signature`,
        `chain[${CHAIN.name}].leg[${intent.legs[0]!.legId}].result_ledger_entry`,
      ]),
    );
  });

  it('assembly refuses an incomplete or inconsistent cycle record, naming what is wrong', async () => {
    const r = JSON.parse(JSON.stringify(singleRecord)) as CycleRecord;
    await expect(assembleBundle(deps(), { ...r, ledgerTxId: undefined })).rejects.toThrow(/ledgerTxId is missing/);
    await expect(assembleBundle(deps(), { ...r, intentId: 'another' })).rejects.toThrow(/holds intent .* not another/);
    await expect(assembleBundle(deps(), { ...r, chains: [{ ...r.chains[0]!, createAnchorTx: undefined }] })).rejects.toThrow(/createAnchorTx is missing/);
    await expect(assembleBundle(deps(), { ...r, chains: [{ ...r.chains[0]!, legs: [{ ...r.chains[0]!.legs[0]!, executionTx: undefined }] }] })).rejects.toThrow(
      /executionTx is missing/,
    );
    await expect(assembleBundle(deps(), { ...r, chains: [{ ...r.chains[0]!, legs: [{ ...r.chains[0]!.legs[0]!, leafIndex: 1 }] }] })).rejects.toThrow(
      /leaf 1 of the anchor is absent/,
    );
    await expect(assembleBundle(deps(), { ...r, chains: [{ ...r.chains[0]!, anchorId: `0x${'ab'.repeat(32)}` }] })).rejects.toThrow(/not the intent's anchor/);
    await expect(assembleBundle(deps(), { ...r, chains: [{ ...r.chains[0]!, chain: CHAIN_B.name }] })).rejects.toThrow(
      /chain id 80002, the record says 11155111/,
    );
  });

  it('two-leg intent on one chain (call + native transfer) plus a leg on the second chain: one bundle, valid; byte flips invalid', async () => {
    const bob = '0x000000000000000000000000000000000000b0b0';
    const intent = intentFor(id, [
      recordLeg(d, id, arg('bundle-multi')),
      {
        legId: 'pay',
        chain: CHAIN.name,
        chainId: CHAIN.chainId,
        fromAddress: id.account,
        toAddress: '0x000000000000000000000000000000000000bEEF',
        amount: '12345',
      },
      { legId: 'amoy-pay', chain: CHAIN_B.name, chainId: CHAIN_B.chainId, fromAddress: id.account, toAddress: bob, amount: '777' },
    ]);
    const record = await runCycle(intent);
    expect(record.chains.map((c) => [c.chain, c.legs.length])).toEqual([
      [CHAIN.name, 2],
      [CHAIN_B.name, 1],
    ]);
    const b = await assembleBundle(deps(), record);
    expect(b.chains.map((c) => c.anchor.leaf_count)).toEqual([2, 1]);
    const v = await verifyBundle(serializeBundle(b));
    expect(failed(v)).toEqual([]);
    expect(v.valid).toBe(true);
    expect(v.checks.filter((c) => c.name.endsWith('.execution_call'))).toHaveLength(3);
    const rpc = await verifyBundle(serializeBundle(b), { rpc: { [CHAIN.name]: d.anvil.rpcUrl, [CHAIN_B.name]: d.anvilB.rpcUrl } });
    expect(failed(rpc)).toEqual([]);
    // a leg presented under the other chain's anchor fails, even re-sealed
    const swapped = clone(b);
    swapped.chains[1]!.legs[0] = { ...b.chains[0]!.legs[1]!, leaf_index: 0 };
    const sv = await verifyBundle(serializeBundle(sealBundle(swapped)));
    expect(sv.valid).toBe(false);
    expect(failed(sv)).toEqual(expect.arrayContaining(['chains', `chain[${CHAIN_B.name}].anchor`]));
    // and dropping the duplicate (the leg moved, not copied) still fails the anchor of chain B
    const moved = clone(b);
    moved.chains[1]!.legs[0] = { ...b.chains[0]!.legs[1]!, leaf_index: 0 };
    moved.chains[0]!.legs.pop();
    const mv = await verifyBundle(serializeBundle(sealBundle(moved)));
    expect(mv.valid).toBe(false);
    expect(failed(mv)).toContain(`chain[${CHAIN_B.name}].anchor`);
    expect(failed(mv)).toContain('chains'); // amoy-pay is gone
    expect(v.complete).toBe(true);
    // a leg left out (a whole chain here) is not a proof of the intent, even re-sealed
    const dropped = clone(b);
    dropped.chains.pop();
    const dv = await verifyBundle(serializeBundle(sealBundle(dropped)));
    expect(failed(dv)).toEqual(['chains']);
    expect(dv.checks.find((c) => c.name === 'chains')!.detail).toContain('leg amoy-pay of the intent is neither proven nor listed as failed');
    // named as failed, it is a partial proof of the other legs: valid, not complete, and it says so
    dropped.failed_legs = [{ leg_id: 'amoy-pay', chain: CHAIN_B.name, reason: 'leg amoy-pay: the account holds 0 wei' }];
    const pv = await verifyBundle(serializeBundle(sealBundle(dropped)));
    expect(failed(pv)).toEqual([]);
    expect(pv).toMatchObject({ valid: true, complete: false });
    expect(pv.checks.find((c) => c.name === 'chains')!.detail).toContain('2 of 3 leg(s) proven (');
    expect(pv.checks.find((c) => c.name === 'chains')!.detail).toContain('PARTIAL: 1 failed (amoy-pay: leg amoy-pay: the account holds 0 wei)');
    // a failed leg named on the wrong chain, or also proven, fails
    const wrongChain = clone(dropped);
    wrongChain.failed_legs[0]!.chain = CHAIN.name;
    expect(failed(await verifyBundle(serializeBundle(sealBundle(wrongChain))))).toEqual(['chains']);
    const both = clone(b);
    both.failed_legs = [{ leg_id: 'pay', chain: CHAIN.name, reason: 'x' }];
    expect(failed(await verifyBundle(serializeBundle(sealBundle(both))))).toEqual(['chains']);
    // ... or on its chain in another case (chain names are exact, as the intent states them)
    const otherCase = clone(dropped);
    otherCase.failed_legs[0]!.chain = CHAIN_B.name.toUpperCase();
    expect(failed(await verifyBundle(serializeBundle(sealBundle(otherCase))))).toEqual(['chains']);
    // one order: the builder writes the chains by name, a chain's legs by leaf index, failed legs by leg_id, whatever
    // the record's order; any other order of the same content, re-sealed, is refused by encoding.schema
    expect(bundleSchemaProblems(b)).toEqual([]);
    expect(b.chains.map((c) => c.chain)).toEqual([CHAIN.name, CHAIN_B.name].sort());
    expect(b.chains[0]!.legs.map((l) => l.leaf_index)).toEqual([0, 1]);
    const reordered = await assembleBundle(deps(), { ...record, chains: [...record.chains].reverse().map((c) => ({ ...c, legs: [...c.legs].reverse() })) });
    // (assembled later, its ledger receipts anchor to a later block: the rest is the same bundle)
    expect(reordered.chains.map((c) => [c.chain, c.legs.map((l) => l.leaf_index)])).toEqual(b.chains.map((c) => [c.chain, c.legs.map((l) => l.leaf_index)]));
    reordered.ledger.receipt = b.ledger.receipt;
    reordered.chains.forEach((c, i) => {
      c.legs.forEach((l, j) => {
        l.result.receipt = b.chains[i]!.legs[j]!.result.receipt;
      });
    });
    expect(sealBundle(reordered).bundle_hash).toBe(b.bundle_hash);
    const twoFailed = clone(b);
    twoFailed.chains.pop();
    twoFailed.chains[0]!.legs.pop();
    twoFailed.failed_legs = [
      { leg_id: 'amoy-pay', chain: CHAIN_B.name, reason: 'leg amoy-pay: the account holds 0 wei' },
      { leg_id: 'pay', chain: CHAIN.name, reason: 'leg pay: reverted' },
    ];
    const tf = await verifyBundle(serializeBundle(sealBundle(twoFailed)));
    expect(failed(tf)).toEqual([]);
    expect(tf).toMatchObject({ valid: true, complete: false });
    const order: [string, () => ProofBundle, string][] = [
      [
        'the two chains swapped',
        () => {
          const x = clone(b);
          x.chains.reverse();
          return x;
        },
        `chains[1]: is not in the builder's order (ascending chain names)`,
      ],
      [
        'the two legs of a chain swapped',
        () => {
          const x = clone(b);
          x.chains[0]!.legs.reverse();
          return x;
        },
        `chains[0].legs[1]: is not in the builder's order (ascending leaf_index, each once)`,
      ],
      [
        'the failed legs swapped',
        () => {
          const x = clone(twoFailed);
          x.failed_legs.reverse();
          return x;
        },
        `failed_legs[1]: is not in the builder's order (ascending leg_id)`,
      ],
    ];
    for (const [what, make, detail] of order) {
      const sealed = sealBundle(make());
      const ov = await verifyBundle(serializeBundle(sealed));
      expect(ov.valid, what).toBe(false);
      expect(failed(ov), what).toContain('encoding.schema');
      expect(ov.checks.find((x) => x.name === 'encoding.schema')!.detail, what).toContain(detail);
      expect(failed(ov), what).not.toContain('bundle.hash');
    }
    // byte flips over the whole file
    const bytes = new TextEncoder().encode(serializeBundle(b));
    let rejected = 0;
    for (let i = 0; i < 100; i++) {
      const p = Math.floor((i * (bytes.length - 1)) / 99);
      if (!(await verifyBundle(flip(bytes, p))).valid) rejected++;
      await new Promise((r) => setImmediate(r)); // let the in-process devnet breathe
    }
    expect(rejected).toBe(100);
  });

  it('JSON round trip (bytes and object) stays valid; with --rpc the public chain data agrees', async () => {
    const text = serializeBundle(single);
    const bytes = new TextEncoder().encode(text);
    expect((await verifyBundle(bytes)).valid).toBe(true);
    expect((await verifyBundle(text)).valid).toBe(true);
    expect((await verifyBundle(JSON.parse(text) as ProofBundle)).valid).toBe(true);
    const withRpc = await verifyBundle(bytes, { rpc: { [CHAIN.name]: d.anvil.rpcUrl } });
    expect(failed(withRpc)).toEqual([]);
    expect(withRpc.checks.map((c) => c.name)).toEqual(expect.arrayContaining([`rpc[${CHAIN.name}].blocks`, `rpc[${CHAIN.name}].anchor`]));
    // a validator that saw more blocks than the chain requires reports them: the record's required depth still holds
    const deeper = clone(single);
    const obs = deeper.chains[0]!.legs[0]!.observation;
    obs.confirmations += 3;
    expect(failed(await verifyBundle(serializeBundle(sealBundle(deeper))))).toEqual([]);
    // pretty-printed JSON is the same content but not the canonical bytes
    const pretty = await verifyBundle(JSON.stringify(JSON.parse(text), null, 2));
    expect(pretty.valid).toBe(false);
    expect(failed(pretty)).toEqual(['encoding.canonical_json']);
    // the wrong chain on the RPC: the block hashes are not there
    const wrong = await verifyBundle(bytes, { rpc: { [CHAIN.name]: d.anvilB.rpcUrl } });
    expect(wrong.valid).toBe(false);
    expect(failed(wrong)).toContain(`rpc[${CHAIN.name}].chain_id`);
    // with the ledger's API the ledger transactions are found delivered there; on another ledger they are not
    const leg0 = single.chains[0]!.legs[0]!.leg_id;
    const withLedger = await verifyBundle(bytes, { ledger: d.sim.url });
    expect(failed(withLedger)).toEqual([]);
    expect(withLedger.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['ledger_rpc.intent', `ledger_rpc.result[${CHAIN.name}.${leg0}]`]));
    const { startLedgerSim } = await import('../../src/ledger-sim/index.js');
    const other = await startLedgerSim({ port: 0, blockIntervalMs: 20 });
    try {
      const elsewhere = await verifyBundle(bytes, { ledger: other.url });
      expect(failed(elsewhere)).toEqual(['ledger_rpc.intent', `ledger_rpc.result[${CHAIN.name}.${leg0}]`]);
    } finally {
      await other.stop();
    }
  });

  it('any single changed byte makes the bundle invalid (320 positions spread over the file + targeted ones)', async () => {
    const text = serializeBundle(single);
    const bytes = new TextEncoder().encode(text);
    const n = bytes.length;
    const positions = new Set<number>();
    for (let i = 0; i < 320; i++) positions.add(Math.floor((i * (n - 1)) / 319));
    const c = single.chains[0]!;
    const leg = c.legs[0]!;
    const targeted = {
      calldata: posIn(text, leg.execution.raw, leg.execution.raw.length - 10),
      ledgerSignature: posIn(text, (single.ledger.signatures[0] as { signature: string }).signature, 17),
      receiptProofNode: posIn(text, leg.execution.receipt_proof[0]!, 40),
      recordField: posIn(text, leg.result.parts.find((p) => p.startsWith('gas_used='))!, 'gas_used='.length),
      aggregateSignature: posIn(text, c.attestation.aggregate_signature, 100),
      storageProofNode: posIn(text, leg.effects.state[0]!.slots[0]!.proof[0]!, 50),
      intentPart: posIn(text, 'intent_id', 3),
      bundleHash: posIn(text, single.bundle_hash, 30),
    };
    for (const p of Object.values(targeted)) positions.add(p);
    const t0 = performance.now();
    const notRejected: number[] = [];
    for (const p of [...positions].sort((a, b) => a - b)) {
      const v = await verifyBundle(flip(bytes, p));
      await new Promise((r) => setImmediate(r)); // let the in-process devnet breathe
      if (v.valid) notRejected.push(p);
      else expect(failed(v).some((f) => f === 'bundle.hash' || f === 'encoding.canonical_json')).toBe(true);
    }
    console.log(`byte flips: ${positions.size} positions of ${n} bytes checked in ${(performance.now() - t0).toFixed(0)} ms`);
    expect(positions.size).toBeGreaterThanOrEqual(300);
    expect(notRejected).toEqual([]);
  });

  it('targeted changes re-sealed with a fresh bundle_hash fail the check that covers them', async () => {
    const setPart = (b: ProofBundle, k: string, v: string) => {
      const parts = b.chains[0]!.legs[0]!.result.parts;
      parts[parts.findIndex((p) => p.startsWith(`${k}=`))] = `${k}=${v}`;
    };
    const c0 = single.chains[0]!;
    const L = `chain[${CHAIN.name}].leg[${c0.legs[0]!.leg_id}]`;
    const cases: [string, (b: ProofBundle) => void, string][] = [
      [
        'calldata byte of the execution tx',
        (b) => (b.chains[0]!.legs[0]!.execution.raw = flipHex(b.chains[0]!.legs[0]!.execution.raw, b.chains[0]!.legs[0]!.execution.raw.length - 12)),
        `${L}.execution_inclusion`,
      ],
      [
        'ledger signature byte',
        (b) => {
          const s = b.ledger.signatures[0] as { signature: string };
          s.signature = flipHex(`0x${s.signature}`, 5).slice(2);
        },
        'ledger.signatures',
      ],
      [
        'receipt proof node byte',
        (b) => (b.chains[0]!.legs[0]!.execution.receipt_proof[0] = flipHex(b.chains[0]!.legs[0]!.execution.receipt_proof[0]!, 80)),
        `${L}.execution_inclusion`,
      ],
      [
        'proof_result record field',
        (b) => {
          const parts = b.chains[0]!.legs[0]!.result.parts;
          const i = parts.findIndex((p) => p.startsWith('gas_used='));
          parts[i] = `gas_used=${BigInt(parts[i]!.slice(9)) + 1n}`;
        },
        `${L}.proof_result`,
      ],
      ['attestation signers reordered', (b) => b.chains[0]!.attestation.signers.reverse(), `chain[${CHAIN.name}].attestation`],
      ['a ledger signature listed twice', (b) => b.ledger.signatures.push(structuredClone(b.ledger.signatures[0])), 'ledger.signatures'],
      ['proof_result threshold_met=false', (b) => setPart(b, 'threshold_met', 'false'), `${L}.proof_result`],
      ['proof_result confirmation_blocks deeper than observed', (b) => setPart(b, 'confirmation_blocks', '1000'), `${L}.proof_result`],
      ['proof_result extra line', (b) => b.chains[0]!.legs[0]!.result.parts.push('note=forged'), `${L}.proof_result`],
      ['proof_result a line repeated', (b) => b.chains[0]!.legs[0]!.result.parts.push(b.chains[0]!.legs[0]!.result.parts[3]!), `${L}.proof_result`],
      [
        'attestation aggregate byte',
        (b) => (b.chains[0]!.attestation.aggregate_signature = flipHex(b.chains[0]!.attestation.aggregate_signature, 200)),
        `chain[${CHAIN.name}].attestation`,
      ],
      [
        'observation aggregate byte',
        (b) => (b.chains[0]!.legs[0]!.observation.aggregate_signature = flipHex(b.chains[0]!.legs[0]!.observation.aggregate_signature, 200)),
        `${L}.result_signature`,
      ],
      [
        'signer dropped from the bitmap',
        (b) => {
          b.chains[0]!.attestation.signer_bitmap = '63';
          b.chains[0]!.attestation.signers = [0, 1, 2, 3, 4, 5];
        },
        `chain[${CHAIN.name}].attestation`,
      ],
      ['validator key', (b) => (b.chains[0]!.validator_set.public_keys[3] = b.chains[0]!.validator_set.public_keys[4]!), `chain[${CHAIN.name}].validator_set`],
      ['threshold raised above the signatures', (b) => (b.ledger.authority.threshold = 2), 'ledger.authority'],
      ['stated signatures above what the bundle holds', (b) => (b.ledger.authority.signatures = 2), 'ledger.authority'],
      ['a delegated vote stated with no delegate signature', (b) => (b.ledger.authority.delegated = 1), 'ledger.authority'],
      ['observation checks: expected events miscounted', (b) => (b.chains[0]!.legs[0]!.observation.checks.expected_events = 7), `${L}.observation_checks`],
      ['observation checks: binding claimed by event', (b) => (b.chains[0]!.legs[0]!.observation.checks.call_binding = 'event'), `${L}.observation_checks`],
      ["key page read before the signatures' version", (b) => (b.ledger.key_page.version = b.ledger.authority.key_page_version - 1), 'ledger.key_page'],
      ['signer key not on the page', (b) => (b.ledger.key_page.key_hashes = ['aa'.repeat(32)]), 'ledger.key_page'],
      ['page threshold differs', (b) => (b.ledger.key_page.accept_threshold = 3), 'ledger.key_page'],
      [
        'receipt entry of the intent tx',
        (b) =>
          b.ledger.receipt.entries[0]
            ? (b.ledger.receipt.entries[0].hash = flipHex(`0x${b.ledger.receipt.entries[0].hash}`, 3).slice(2))
            : (b.ledger.receipt.anchor = flipHex(`0x${b.ledger.receipt.anchor}`, 3).slice(2)),
        'ledger.receipt',
      ],
      ['intent part', (b) => (b.intent.parts[3] = b.intent.parts[3]!.replace('"nonce":"', '"nonce":"x')), 'intent.parts'],
      ['merkle proof of the leg', (b) => b.chains[0]!.legs[0]!.merkle_proof.push(`0x${'00'.repeat(32)}`), `chain[${CHAIN.name}].anchor`],
      ['block header field', (b) => (b.chains[0]!.legs[0]!.execution.block.gasUsed += 1), `${L}.execution_inclusion`],
      ['record result parts vs its ledger tx', (b) => b.chains[0]!.legs[0]!.result.parts.push('extra=1'), `${L}.result_ledger_entry`],
      ['proven state value', (b) => (b.chains[0]!.legs[0]!.effects.state[0]!.slots[0]!.value = arg('something-else')), `${L}.expected_state`],
      [
        'state proof node byte',
        (b) => (b.chains[0]!.legs[0]!.effects.state[0]!.account_proof[0] = flipHex(b.chains[0]!.legs[0]!.effects.state[0]!.account_proof[0]!, 90)),
        `${L}.expected_state`,
      ],
      ['state proof dropped', (b) => (b.chains[0]!.legs[0]!.effects.state = []), `${L}.expected_state`],
      ['createAnchor tx swapped for the prove tx', (b) => (b.chains[0]!.create_anchor = b.chains[0]!.prove), `chain[${CHAIN.name}].create_anchor`],
    ];
    for (const [what, mutate, check] of cases) {
      const v = await resealed(single, mutate);
      expect(v.valid, what).toBe(false);
      expect(failed(v), what).toContain(check);
      expect(failed(v), what).not.toContain('bundle.hash');
    }
  });

  it('content that proves nothing, re-sealed, is refused by encoding.schema naming its path: added keys, other hex forms', async () => {
    const c0 = single.chains[0]!;
    const L = `chain[${CHAIN.name}].leg[${c0.legs[0]!.leg_id}]`;
    const upper = (h: string) => `0x${h.slice(2).toUpperCase()}` as Hex;
    const add = (o: unknown) => ((o as Record<string, unknown>).note = 'unverified');
    const cases: [string, (b: ProofBundle) => void, string][] = [
      ['top level', (b) => add(b), 'bundle: unknown key "note"'],
      ['intent', (b) => add(b.intent), 'intent: unknown key "note"'],
      ['a chain', (b) => add(b.chains[0]), 'chains[0]: unknown key "note"'],
      ['a leg', (b) => add(b.chains[0]!.legs[0]), 'chains[0].legs[0]: unknown key "note"'],
      ['a block header', (b) => add(b.chains[0]!.legs[0]!.execution.block), 'chains[0].legs[0].execution.block: unknown key "note"'],
      ['a state proof slot', (b) => add(b.chains[0]!.legs[0]!.effects.state[0]!.slots[0]), 'chains[0].legs[0].effects.state[0].slots[0]: unknown key "note"'],
      ['observation checks', (b) => add(b.chains[0]!.legs[0]!.observation.checks), 'chains[0].legs[0].observation.checks: unknown key "note"'],
      ['a ledger signature (accumulate.js drops the key, it is not signed)', (b) => add(b.ledger.signatures[0]), 'ledger.signatures[0]: unknown key "note"'],
      [
        'the ledger transaction header (not hashed)',
        (b) => add((b.ledger.transaction as { header: unknown }).header),
        'ledger.transaction.header: unknown key "note"',
      ],
      ['the result transaction', (b) => add(b.chains[0]!.legs[0]!.result.transaction), 'chains[0].legs[0].result.transaction: unknown key "note"'],
      ['the ledger receipt', (b) => add(b.ledger.receipt), 'ledger.receipt: unknown key "note"'],
      ['the result receipt', (b) => add(b.chains[0]!.legs[0]!.result.receipt), 'chains[0].legs[0].result.receipt: unknown key "note"'],
      ['the validator set', (b) => add(b.chains[0]!.validator_set), 'chains[0].validator_set: unknown key "note"'],
      ['the key page', (b) => add(b.ledger.key_page), 'ledger.key_page: unknown key "note"'],
      [
        'uppercase execution tx hash',
        (b) => (b.chains[0]!.legs[0]!.execution.tx_hash = upper(b.chains[0]!.legs[0]!.execution.tx_hash)),
        'chains[0].legs[0].execution.tx_hash: must be a 32-byte hash (0x + lowercase hex)',
      ],
      [
        'uppercase receipt proof node',
        (b) => (b.chains[0]!.legs[0]!.execution.receipt_proof[0] = upper(b.chains[0]!.legs[0]!.execution.receipt_proof[0]!)),
        'chains[0].legs[0].execution.receipt_proof[0]: must be non-empty bytes (0x + lowercase hex)',
      ],
      ['uppercase intent operation id', (b) => (b.intent.operation_id = upper(b.intent.operation_id)), 'intent.operation_id: must be a 32-byte hash'],
      [
        'uppercase attestation signature',
        (b) => (b.chains[0]!.attestation.aggregate_signature = upper(b.chains[0]!.attestation.aggregate_signature)),
        'chains[0].attestation.aggregate_signature: must be a 128-byte G1 signature',
      ],
      [
        '0X prefix on a validator key',
        (b) => (b.chains[0]!.validator_set.public_keys[0] = `0X${b.chains[0]!.validator_set.public_keys[0]!.slice(2)}` as Hex),
        'chains[0].validator_set.public_keys[0]: must be a 256-byte G2 public key',
      ],
      [
        'uppercase ledger signature bytes',
        (b) => {
          const s = b.ledger.signatures[0] as { signature: string };
          s.signature = s.signature.toUpperCase();
        },
        'ledger.signatures[0].signature: is "',
      ],
      [
        'ProofAnchor address not in its checksum form',
        (b) => (b.chains[0]!.proof_anchor = b.chains[0]!.proof_anchor.toLowerCase() as Hex),
        'chains[0].proof_anchor: must be written as its EIP-55 checksum',
      ],
      // version 1's forms in a version 2 bundle
      [
        'a decimal string where version 2 writes a number',
        (b) => ((b.chains[0]!.anchor as Record<string, unknown>).leaf_count = '1'),
        'chains[0].anchor.leaf_count: must be a number, got "1"',
      ],
      [
        'a signer index as a decimal string',
        (b) => ((b.chains[0]!.attestation.signers as unknown[])[0] = '0'),
        'chains[0].attestation.signers[0]: must be a number, got "0"',
      ],
      [
        'a block number as a decimal string',
        (b) => ((b.chains[0]!.legs[0]!.execution.block as Record<string, unknown>).number = String(b.chains[0]!.legs[0]!.execution.block.number)),
        'chains[0].legs[0].execution.block.number: must be a number, got "',
      ],
      [
        'a uint256 value (validator power) as a number',
        (b) => ((b.chains[0]!.validator_set.powers as unknown[])[0] = 100),
        'chains[0].validator_set.powers[0]: must be a string, got 100',
      ],
      [
        'the ledger tx hash with 0x',
        (b) => (b.ledger.tx_hash = `0x${b.ledger.tx_hash}`),
        'ledger.tx_hash: must be a ledger hash (64 lowercase hex characters, no 0x)',
      ],
      [
        'the anchor tx_hash with 0x',
        (b) => (b.chains[0]!.anchor.tx_hash = `0x${b.chains[0]!.anchor.tx_hash}`),
        'chains[0].anchor.tx_hash: must be a ledger hash',
      ],
      [
        'a key hash with 0x',
        (b) => (b.ledger.key_page.key_hashes[0] = `0x${b.ledger.key_page.key_hashes[0]}`),
        'ledger.key_page.key_hashes[0]: must be a ledger hash',
      ],
      ['a receipt hash with 0x', (b) => (b.ledger.receipt.start = `0x${b.ledger.receipt.start}`), 'ledger.receipt.start: must be a ledger hash'],
      ['the ledger tx hash upper-cased', (b) => (b.ledger.tx_hash = b.ledger.tx_hash.toUpperCase()), 'ledger.tx_hash: must be a ledger hash'],
      [
        "version 1's chain_id beside evm_chain_id",
        (b) => ((b.chains[0] as Record<string, unknown>).chain_id = String(b.chains[0]!.evm_chain_id)),
        'chains[0]: unknown key "chain_id"',
      ],
      [
        "version 1's chain_id instead of evm_chain_id",
        (b) => {
          const c = b.chains[0] as Record<string, unknown>;
          c.chain_id = String(c.evm_chain_id);
          delete c.evm_chain_id;
        },
        'chains[0].evm_chain_id: missing',
      ],
      [
        "version 1's ledger_tx_hash in the anchor",
        (b) => {
          const a = b.chains[0]!.anchor as Record<string, unknown>;
          a.ledger_tx_hash = `0x${a.tx_hash}`;
          delete a.tx_hash;
        },
        'chains[0].anchor: unknown key "ledger_tx_hash"',
      ],
      // Accumulate URLs are case-insensitive: the bundle's own ones are written lowercase, one form
      [
        'upper-cased data account',
        (b) => (b.intent.data_account = b.intent.data_account.toUpperCase().replace('ACC://', 'acc://')),
        'intent.data_account: must be written in lowercase',
      ],
      [
        'upper-cased intent tx id',
        (b) => (b.ledger.tx_id = b.ledger.tx_id.replace(/@.*/, (x) => x.toUpperCase())),
        'ledger.tx_id: must be written in lowercase',
      ],
      [
        'upper-cased intent receipt account',
        (b) => (b.ledger.receipt.account = b.ledger.receipt.account.replace('/data', '/DATA')),
        'ledger.receipt.account: must be written in lowercase',
      ],
      [
        'upper-cased key book',
        (b) => (b.ledger.authority.key_book = b.ledger.authority.key_book.replace('/book', '/Book')),
        'ledger.authority.key_book: must be written in lowercase',
      ],
      [
        'upper-cased key page',
        (b) => (b.ledger.authority.key_page = b.ledger.authority.key_page.replace('/book', '/Book')),
        'ledger.authority.key_page: must be written in lowercase',
      ],
      [
        'upper-cased key page url',
        (b) => (b.ledger.key_page.url = b.ledger.key_page.url.replace('/book', '/BOOK')),
        'ledger.key_page.url: must be written in lowercase',
      ],
      [
        'upper-cased results account',
        (b) => (b.chains[0]!.legs[0]!.result.results_account = b.chains[0]!.legs[0]!.result.results_account.toUpperCase().replace('ACC://', 'acc://')),
        'chains[0].legs[0].result.results_account: must be written in lowercase',
      ],
      [
        'upper-cased result tx id',
        (b) => (b.chains[0]!.legs[0]!.result.tx_id = b.chains[0]!.legs[0]!.result.tx_id.replace(/@.*/, (x) => x.toUpperCase())),
        'chains[0].legs[0].result.tx_id: must be written in lowercase',
      ],
      [
        'upper-cased result receipt account',
        (b) => (b.chains[0]!.legs[0]!.result.receipt.account = b.chains[0]!.legs[0]!.result.receipt.account.toUpperCase().replace('ACC://', 'acc://')),
        'chains[0].legs[0].result.receipt.account: must be written in lowercase',
      ],
      // the key page's lists: ascending, each once
      ['a key hash listed twice', (b) => b.ledger.key_page.key_hashes.push(b.ledger.key_page.key_hashes[0]!), 'ledger.key_page.key_hashes[1]: repeats item 0'],
      [
        "a key hash added before the page's",
        (b) => b.ledger.key_page.key_hashes.push('00'.repeat(32)),
        "ledger.key_page.key_hashes[1]: is not in the builder's order (ascending key hashes)",
      ],
      [
        'delegates out of order',
        (b) => (b.ledger.key_page.delegates = ['acc://b-delegate.acme/book', 'acc://a-delegate.acme/book']),
        "ledger.key_page.delegates[1]: is not in the builder's order (ascending delegate URLs)",
      ],
      [
        'a delegate listed twice',
        (b) => (b.ledger.key_page.delegates = ['acc://a-delegate.acme/book', 'acc://a-delegate.acme/book']),
        'ledger.key_page.delegates[1]: repeats item 0',
      ],
      [
        'an upper-cased delegate',
        (b) => (b.ledger.key_page.delegates = ['acc://A-delegate.acme/book']),
        'ledger.key_page.delegates[0]: must be written in lowercase',
      ],
    ];
    for (const [what, mutate, detail] of cases) {
      const b = clone(single);
      mutate(b);
      const sealed = sealBundle(b);
      expect(sealed.bundle_hash, what).not.toBe(single.bundle_hash);
      expectRefusedBySchema(await verifyBundle(serializeBundle(sealed)), what, detail);
    }
    // a number that is no safe integer has no canonical JSON: refused before any other check
    for (const n of [1.5, 2 ** 53]) {
      const b = clone(single);
      b.ledger.authority.threshold = n;
      expect(failed(await verifyBundle(b)), String(n)).toEqual(['encoding.canonical_json']);
    }
    // trie proofs are exactly their path: an extra or repeated node is refused by the check of that proof
    const node = c0.legs[0]!.execution.receipt_proof[0]!;
    const extra: [string, (b: ProofBundle) => void, string][] = [
      ['extra node after the transactions-trie path', (b) => b.chains[0]!.legs[0]!.execution.tx_proof.push(node), `${L}.execution_inclusion`],
      [
        'extra node before the receipts-trie path',
        (b) => b.chains[0]!.legs[0]!.execution.receipt_proof.unshift(b.chains[0]!.legs[0]!.execution.tx_proof[0]!),
        `${L}.execution_inclusion`,
      ],
      [
        'a receipts-trie node repeated',
        (b) => b.chains[0]!.legs[0]!.execution.receipt_proof.push(b.chains[0]!.legs[0]!.execution.receipt_proof[0]!),
        `${L}.execution_inclusion`,
      ],
      ['extra node in the createAnchor receipts proof', (b) => b.chains[0]!.create_anchor.receipt_proof.push(node), `chain[${CHAIN.name}].create_anchor`],
      ['extra node in an account proof', (b) => b.chains[0]!.legs[0]!.effects.state[0]!.account_proof.push(node), `${L}.expected_state`],
      ['extra node in a storage proof', (b) => b.chains[0]!.legs[0]!.effects.state[0]!.slots[0]!.proof.push(node), `${L}.expected_state`],
    ];
    for (const [what, mutate, check] of extra) {
      const v = await resealed(single, mutate);
      expect(v.valid, what).toBe(false);
      expect(failed(v), what).toContain(check);
      expect(failed(v), what).not.toContain('encoding.schema');
      expect(v.checks.find((x) => x.name === check)!.detail, what).toContain('proof is not exactly the path');
    }
    // and the state proofs are laid out one way: an account's proof listed twice proves nothing more
    const twice = clone(single);
    twice.chains[0]!.legs[0]!.effects.state.push(structuredClone(twice.chains[0]!.legs[0]!.effects.state[0]!));
    const tv = await verifyBundle(serializeBundle(sealBundle(twice)));
    expect(failed(tv)).toEqual([`${L}.expected_state`]);
    expect(tv.checks.find((x) => x.name === `${L}.expected_state`)!.detail).toContain(
      'effects.state is not the expected state laid out as the builder writes it',
    );
  });

  it("2-of-2 key page: both ledger signatures in the builder's order, valid; any other order of them or of the key hashes, re-sealed, is refused by encoding.schema", async () => {
    const ms = await createIdentity(d, { extraKeys: 1, threshold: 2 });
    const intent = intentFor(ms, [recordLeg(d, ms, arg('bundle-multisig'))]);
    const record = await runCycle(intent, ms, async () => {
      const st = await writeIntent(d, ms, intent.parts, { wait: 'recorded' });
      expect(st.pending).toBe(true);
      await d.ledger.signPending(st.txId, held(ms.extraKeys[0]!, ms.page));
      return d.ledger.waitForTransaction(st.txId, { timeoutMs: 30_000 });
    });
    const b = await assembleBundle(deps(), record);
    expect(b.ledger.signatures).toHaveLength(2);
    expect(b.ledger.authority).toMatchObject({ threshold: 2, signatures: 2 });
    expect(b.ledger.key_page.key_hashes).toHaveLength(2);
    expect(bundleSchemaProblems(b)).toEqual([]);
    const v = await verifyBundle(serializeBundle(b));
    expect(failed(v)).toEqual([]);
    expect(v.valid).toBe(true);
    const cases: [string, (x: ProofBundle) => void, string][] = [
      [
        'the two ledger signatures swapped',
        (x) => x.ledger.signatures.reverse(),
        "ledger.signatures[1]: is not in the builder's order (ascending canonical JSON of the signatures)",
      ],
      [
        'the two key hashes swapped',
        (x) => x.ledger.key_page.key_hashes.reverse(),
        "ledger.key_page.key_hashes[1]: is not in the builder's order (ascending key hashes)",
      ],
      [
        'a key hash listed twice',
        (x) => x.ledger.key_page.key_hashes.splice(1, 0, x.ledger.key_page.key_hashes[0]!),
        'ledger.key_page.key_hashes[1]: repeats item 0',
      ],
    ];
    for (const [what, mutate, detail] of cases) expectRefusedBySchema(await resealed(b, mutate), what, detail);
  });

  it('CLI: exit 0 on the bundle file, non-zero on a tampered one', async () => {
    const good = join(dir, 'good.json');
    const bad = join(dir, 'bad.json');
    const text = serializeBundle(single);
    writeFileSync(good, text);
    writeFileSync(bad, flip(new TextEncoder().encode(text), Math.floor(text.length / 2)));
    const [ok, ko] = await Promise.all([runCli([good, '--rpc', `${CHAIN.name}=${d.anvil.rpcUrl}`]), runCli([bad])]);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toMatch(/^ok {3}bundle\.hash: 0x[0-9a-f]{64}$/m);
    expect(ok.out).toMatch(/^ok {3}chain\[ethereum-sepolia\]\.leg\[.*\]\.execution_call: /m);
    expect(ok.out).toMatch(/^ok {3}rpc\[ethereum-sepolia\]\.anchor: /m);
    expect(ok.out).toMatch(/bundle valid \(/); // anchored through --rpc
    expect(ko.code).toBe(1);
    // offline: anchored only when the ProofAnchor (and the set) are given as trusted
    const c0 = single.chains[0]!;
    const [bare, pinned, wrong] = await Promise.all([
      runCli([good]),
      runCli([good, '--trust', `${CHAIN.name}=${c0.proof_anchor},${c0.validator_set.root}`]),
      runCli([good, '--trust', `${CHAIN.name}=0x${'11'.repeat(20)}`]),
    ]);
    expect(bare.code).toBe(0);
    expect(bare.out).toMatch(/bundle valid, UNANCHORED: /);
    expect(pinned.code).toBe(0);
    expect(pinned.out).toMatch(/^ok {3}trust\[ethereum-sepolia\]: /m);
    expect(pinned.out).toMatch(/bundle valid \(/);
    expect(wrong.code).toBe(1);
    expect(wrong.out).toMatch(/^FAIL trust\[ethereum-sepolia\]: ProofAnchor .* is not the trusted 0x1111/m);
    expect((await runCli([good, '--trust', 'sepolia=nope'])).code).toBe(2);
    expect(ko.out).toMatch(/^FAIL bundle\.hash: /m);
    expect(ko.out).toMatch(/bundle INVALID/);
  });
});
