/**
 * Validator network on a devnet made here: ledger-sim + anvil + system contracts + 7 validator nodes.
 * Pre-execution attestation, quorum under outages and garbage, refusals with reasons, post-execution
 * observation with receipt-trie and state proofs, and the proof_result write-back read from the ledger.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { keccak256, stringToHex, toHex, type Hex } from 'viem';
import { readAnchorState } from '../../src/chain/anchor.js';
import { blsAggregatePublicKeys, blsKeygen, blsSign, blsVerify } from '../../src/chain/bls.js';
import { INTENT_MEMO } from '../../src/protocol/intent/index.js';
import { tx } from '../../src/ledger/index.js';
import { parseProofResult, PROOF_RESULT_FIELDS, recomputeProofResult, type ProofResultRecord } from '../../src/protocol/result-record.js';
import { createQuorumClient, QuorumUnreachableError } from '../../src/validator/quorum.js';
import type { AttestResponse } from '../../src/protocol/validator-wire.js';
import { held } from '../ledger-conformance/harness.js';
import {
  CHAIN,
  CALLED_EVENT,
  CHAIN_B,
  anchorAndExecute,
  anchorMsg,
  attestRequest,
  createIdentity,
  intentFor,
  observeRequest,
  planOf,
  recordLeg,
  startTestDevnet,
  writeIntent,
  type Identity,
  type TestDevnet,
} from './devnet.js';

let d: TestDevnet;
let id: Identity;

beforeAll(async () => {
  d = await startTestDevnet();
  id = await createIdentity(d);
}, 180_000);

afterAll(async () => {
  await d?.stop();
});

const arg = (s: string) => keccak256(stringToHex(s));

async function unreachable(p: Promise<unknown>): Promise<QuorumUnreachableError> {
  const e = await p.then(
    () => undefined,
    (x) => x,
  );
  expect(e).toBeInstanceOf(QuorumUnreachableError);
  return e as QuorumUnreachableError;
}

describe('validator network', () => {
  it('valid two-leg intent: 7 signatures, an aggregate the anchor accepts, observation, proof_result written once and read back', async () => {
    const recipient = '0x000000000000000000000000000000000000bEEF';
    const intent = intentFor(id, [
      recordLeg(d, id, arg('happy')),
      { legId: 'pay', chain: CHAIN.name, chainId: CHAIN.chainId, fromAddress: id.account, toAddress: recipient, amount: '12345' },
    ]);
    const st = await writeIntent(d, id, intent.parts);
    expect(st.delivered).toBe(true);
    const plan = planOf(d, intent, st);
    expect(plan.leafCount).toBe(2n);

    const t0 = performance.now();
    const pre = await d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) });
    const quorumMs = performance.now() - t0;
    expect(pre.signers).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(pre.outcomes.every((o) => o.status === 'signed')).toBe(true);
    const r0 = pre.responses.get(0)!;
    expect(r0.authority).toMatchObject({ keyPage: id.page, keyPageVersion: 1, threshold: 1, signatures: 1 });
    expect(r0.legs).toEqual([intent.legs[0]!.legId, 'pay']);
    const ms = [...pre.responses.values()].map((r) => r.elapsedMs);
    console.log(
      `attest: quorum round ${quorumMs.toFixed(0)} ms; per-validator handling ${ms.join(', ')} ms; answered after ${pre.outcomes.map((o) => o.elapsedMs).join(', ')} ms`,
    );

    const { proven, exec } = await anchorAndExecute(d, id, plan, pre, 0);
    expect(proven.tx?.status).toBe('success');
    expect((await readAnchorState(d.w, plan.anchor, plan.anchorId)).status).toBe('proven');
    expect(exec.status).toBe('success');

    const oreq = observeRequest(st, plan, 0, exec.txHash);
    const t1 = performance.now();
    const post = await d.quorum.observe(oreq, { chainId: BigInt(CHAIN.chainId), proofAnchor: plan.anchor, validatorSetRoot: d.setRoot });
    console.log(`observe: quorum round ${(performance.now() - t1).toFixed(0)} ms (includes ${CHAIN.confirmations} confirmations)`);
    expect(post.signers.length).toBe(7);
    const o0 = post.responses.get(0)!;
    expect(o0.checks).toEqual({ callBinding: 'calldata', expectedEvents: 1, expectedState: 1 });
    expect(new Set([...post.responses.values()].map((r) => r.resultHash)).size).toBe(1);

    const w1 = await d.quorum.writeResult(oreq, post);
    expect(w1.written).toBe(true);
    const w2 = await d.quorum.writeResult(oreq, post);
    expect(w2.written).toBe(false);
    expect(w2.resultId).toBe(w1.resultId);
    // a different validator (no local memory of the write) also finds it on the ledger
    const other = post.signers.find((i) => i !== w1.writtenBy)!;
    const w3 = await d.vn.nodes[other]!.writeResult({ ...oreq, aggregateSignature: post.aggregateSignature, signerBitmap: post.signerBitmap.toString() });
    expect(w3.written).toBe(false);

    // read back from the ledger and recompute
    const entries = await d.ledger.readDataEntries(d.vn.protocol.resultsAccount);
    const records = entries.map((e) => parseProofResult(e.data, true)).filter((r) => r && r.result_id === w1.resultId);
    expect(records.length).toBe(1);
    const rec = records[0]!;
    expect(rec).toMatchObject({
      entry_type: 'pgw:proof_result:v2',
      version: '2.0',
      intent_id: intent.intentId,
      tx_hash: exec.txHash,
      success: 'true',
      confirmation_blocks: String(CHAIN.confirmations),
      threshold_met: 'true',
    });
    const again = recomputeProofResult(rec);
    expect(again.resultHash).toBe(rec.result_hash);
    expect(again.resultHash).toBe(post.resultHash);
    expect(again.message).toBe(rec.attestation_message_hash);
    const bitmap = BigInt(rec.validator_bitfield);
    const keys = d.vn.validators.filter((v) => (bitmap >> BigInt(v.index)) & 1n).map((v) => v.blsPublicKey);
    expect(blsVerify(rec.aggregate_signature as Hex, again.message, blsAggregatePublicKeys(keys))).toBe(true);
    // the record's own chain facts match the chain
    const block = await d.w.public.getBlock({ blockHash: rec.block_hash as Hex });
    expect(block.receiptsRoot).toBe(rec.receipts_root);
    expect(block.stateRoot).toBe(rec.state_root);

    // second leg (native transfer) executes with the same anchor and is observed as leaf 1
    const l1 = plan.legs[1]!;
    const before = await d.w.public.getBalance({ address: recipient });
    const { executeGovernanceProofDirect, proofForLeg } = await import('../../src/chain/account.js');
    const exec1 = await executeGovernanceProofDirect(d.w, id.account, { target: l1.target, value: l1.value, data: l1.data, proof: proofForLeg(plan, 1) });
    expect(await d.w.public.getBalance({ address: recipient })).toBe(before + 12345n);
    const post1 = await d.quorum.observe(observeRequest(st, plan, 1, exec1.txHash), {
      chainId: BigInt(CHAIN.chainId),
      proofAnchor: plan.anchor,
      validatorSetRoot: d.setRoot,
    });
    expect(post1.signers.length).toBe(7);
    // leaf 1's result, written by its designated signer, is found by a node that read the results account before
    // it existed (its index is extended with the new entries only), and is not written twice
    const oreq1 = observeRequest(st, plan, 1, exec1.txHash);
    const w4 = await d.quorum.writeResult(oreq1, post1);
    expect(w4.written).toBe(true);
    const scannedBefore = [w1.writtenBy, other].find((i) => i !== w4.writtenBy)!;
    const w5 = await d.vn.nodes[scannedBefore]!.writeResult({
      ...oreq1,
      aggregateSignature: post1.aggregateSignature,
      signerBitmap: post1.signerBitmap.toString(),
    });
    expect(w5).toMatchObject({ written: false, resultId: w4.resultId, txId: w4.txId, entryHash: w4.entryHash });
    expect(w5.record.written_by).toBe(String(w4.writtenBy));
    const all = (await d.ledger.readDataEntries(d.vn.protocol.resultsAccount)).map((e) => parseProofResult(e.data, true));
    expect(all.filter((r) => r?.result_id === w4.resultId)).toHaveLength(1);
    // observing leaf 1 with leaf 0's execution is refused
    const wrong = await unreachable(
      d.quorum.observe(observeRequest(st, plan, 1, exec.txHash), { chainId: BigInt(CHAIN.chainId), proofAnchor: plan.anchor, validatorSetRoot: d.setRoot }),
    );
    expect(wrong.outcomes.every((o) => o.status === 'refused' && o.code === 'CALL_MISMATCH')).toBe(true);
  });

  async function freshAttest(label: string) {
    const intent = intentFor(id, [recordLeg(d, id, arg(label))]);
    const st = await writeIntent(d, id, intent.parts);
    const plan = planOf(d, intent, st);
    return { intent, st, plan, req: attestRequest(st, plan), message: anchorMsg(d, plan) };
  }

  it('2 validators stopped: quorum still reached, the two reported as failed', async () => {
    const a = await freshAttest('two-down');
    await d.vn.stopValidator(1);
    await d.vn.stopValidator(4);
    try {
      const pre = await d.quorum.attest(a.req, { message: a.message });
      expect(pre.signers).toEqual([0, 2, 3, 5, 6]);
      for (const i of [1, 4]) expect(pre.outcomes[i]).toMatchObject({ status: 'failed', code: 'NETWORK' });
      const { proven } = await anchorAndExecute(d, id, a.plan, pre);
      expect(proven.tx?.status).toBe('success');
    } finally {
      await d.vn.startValidator(1);
      await d.vn.startValidator(4);
    }
  });

  it('1 stopped + 1 returning garbage signatures: quorum reached, garbage reported', async () => {
    const a = await freshAttest('garbage');
    const liar = blsKeygen();
    const real = d.vn.validators[6]!.url;
    // validator 6 answers with a well-formed signature made with the wrong key
    const server: Server = createServer(async (req, res) => {
      let body = '';
      for await (const c of req) body += c;
      // the gateway's signature headers go along: the real validator answers signed requests only
      const auth = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-pgw-'))) as Record<string, string>;
      const r = await fetch(`${real}${req.url}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body });
      const j = (await r.json()) as AttestResponse;
      j.signature = blsSign(liar.secretKey, j.message);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(j));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const q = createQuorumClient({
      clientKey: d.vn.clientKey,
      validators: d.vn.quorum.map((v) => (v.index === 6 ? { ...v, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } : v)),
    });
    await d.vn.stopValidator(2);
    try {
      const pre = await q.attest(a.req, { message: a.message });
      expect(pre.signers).toEqual([0, 1, 3, 4, 5]);
      expect(pre.outcomes[6]).toMatchObject({ status: 'failed', code: 'INVALID_SIGNATURE' });
      expect(pre.outcomes[2]).toMatchObject({ status: 'failed', code: 'NETWORK' });
      const { proven } = await anchorAndExecute(d, id, a.plan, pre);
      expect(proven.tx?.status).toBe('success');
      // also in 'quorum' settle mode (resolves at the fifth valid signature)
      const b = await freshAttest('garbage-quorum-mode');
      const fast = await q.attest(b.req, { message: b.message }, { settle: 'quorum' });
      expect(fast.signers.length).toBe(5);
      expect(fast.signers).not.toContain(6);
    } finally {
      await d.vn.startValidator(2);
      server.close();
    }
  });

  it('3 stopped: "quorum unreachable"; succeeds once one returns', async () => {
    const a = await freshAttest('three-down');
    for (const i of [0, 3, 5]) await d.vn.stopValidator(i);
    let restarted = false;
    try {
      const e = await unreachable(d.quorum.attest(a.req, { message: a.message }));
      expect(e.message).toMatch(/quorum unreachable/);
      expect(e.outcomes.filter((o) => o.status === 'signed').map((o) => o.index)).toEqual([1, 2, 4, 6]);
      expect(e.signedPower).toBe(400n);
      await d.vn.startValidator(3);
      restarted = true;
      const pre = await d.quorum.attest(a.req, { message: a.message });
      expect(pre.signers).toEqual([1, 2, 3, 4, 6]);
    } finally {
      for (const i of [0, 3, 5]) await d.vn.startValidator(i);
      expect(restarted).toBe(true);
    }
  });

  it('tampered intent: one byte of a stored leg changed after the commitment was made is refused with the leg and field', async () => {
    const intent = intentFor(id, [
      {
        legId: 'pay-1',
        chain: CHAIN.name,
        chainId: CHAIN.chainId,
        fromAddress: id.account,
        toAddress: '0x000000000000000000000000000000000000dEaD',
        amount: '1000',
      },
    ]);
    const parts = [...intent.parts];
    expect(parts[1]).toContain('"amount_wei":"1000"');
    parts[1] = parts[1]!.replace('"amount_wei":"1000"', '"amount_wei":"9000"');
    const st = await writeIntent(d, id, parts);
    const plan = planOf(d, intent, st);
    const e = await unreachable(d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) }));
    for (const o of e.outcomes) {
      expect(o.status).toBe('refused');
      expect(o.code).toBe('INTENT_INVALID');
      expect(o.reason).toMatch(/legs\[0\]\.execution\.value: leg pay-1/);
    }
  });

  it('tampered anchor: a leg changed by the caller after signing (commitment root differs) is refused', async () => {
    const a = await freshAttest('tampered-anchor');
    const forged = intentFor(id, [recordLeg(d, id, arg('tampered-anchor-x'))]);
    const fplan = planOf(d, forged, a.st);
    const req = { ...a.req, anchor: { ...a.req.anchor, commitmentRoot: fplan.commitmentRoot, anchorId: fplan.anchorId } };
    const e = await unreachable(d.quorum.attest(req, { message: anchorMsg(d, fplan) }));
    expect(e.outcomes.every((o) => o.code === 'ANCHOR_MISMATCH' && /commitmentRoot/.test(o.reason ?? ''))).toBe(true);
  });

  it('expired intent is refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    const intent = intentFor(id, [recordLeg(d, id, arg('expired'))], { createdAt: now - 3600, expiresAt: now - 60 });
    const st = await writeIntent(d, id, intent.parts);
    const plan = planOf(d, intent, st);
    const e = await unreachable(d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) }));
    expect(e.outcomes.every((o) => o.status === 'refused' && o.code === 'EXPIRED' && /expired at/.test(o.reason ?? ''))).toBe(true);
  });

  it("an intent created more than CLOCK_SKEW_S ahead of the validators' clocks is refused (NOT_YET_VALID, retried by the gateway)", async () => {
    const now = Math.floor(Date.now() / 1000);
    const intent = intentFor(id, [recordLeg(d, id, arg('future'))], { createdAt: now + 3600, expiresAt: now + 7200 });
    const st = await writeIntent(d, id, intent.parts);
    const plan = planOf(d, intent, st);
    const e = await unreachable(d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) }));
    expect(e.outcomes.every((o) => o.status === 'refused' && o.code === 'NOT_YET_VALID' && /ahead of this validator's clock/.test(o.reason ?? ''))).toBe(true);
  });

  it('under-threshold multi-sig intent (1 of 2) is refused; attested once the second key signs', async () => {
    const ms = await createIdentity(d, { extraKeys: 1, threshold: 2 });
    const intent = intentFor(ms, [recordLeg(d, ms, arg('multisig'))]);
    const st = await writeIntent(d, ms, intent.parts, { wait: 'recorded' });
    expect(st.pending).toBe(true);
    const plan = planOf(d, intent, st);
    const e = await unreachable(d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) }));
    expect(e.outcomes.every((o) => o.status === 'refused' && o.code === 'INTENT_PENDING')).toBe(true);
    const done = await d.ledger.signPending(st.txId, held(ms.extraKeys[0]!, ms.page));
    const final = await d.ledger.waitForTransaction(done.txId.includes('@') ? st.txId : st.txId, { timeoutMs: 30_000 });
    expect(final.delivered).toBe(true);
    const pre = await d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) });
    expect(pre.signers.length).toBe(7);
    expect(pre.responses.get(0)!.authority).toMatchObject({ keyPage: ms.page, threshold: 2, signatures: 2 });
  });

  it('an intent signed through a delegate book counts for the page that lists the delegate', async () => {
    const { createAdi, executed, settle } = await import('../ledger-conformance/harness.js');
    const owner = await createIdentity(d);
    const del = await createAdi(d.ledger, d.sponsor, 1_000);
    const r = await d.ledger.signAndSubmit(owner.page, tx.updateKeyPage([{ type: 'addDelegate', delegate: del.book }]), held(owner.key, owner.page));
    await d.ledger.waitForTransaction(r.txId, { until: 'recorded' });
    expect((await settle(d.ledger, d.ledger.signPending(r.txId, held(del.key, del.page)))).delivered).toBe(true);
    const intent = intentFor(owner, [recordLeg(d, owner, arg('delegated'))]);
    const st = await executed(
      d.ledger,
      d.ledger.signAndSubmit(owner.data, tx.writeData(intent.parts), held(del.key, del.page, { delegators: [owner.page] }), { memo: INTENT_MEMO }),
    );
    const plan = planOf(d, intent, st);
    const pre = await d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) });
    expect(pre.signers.length).toBe(7);
    expect(pre.responses.get(0)!.authority).toMatchObject({ keyPage: owner.page, threshold: 1, signatures: 1, delegated: 1 });
  });

  it("an intent not written with the intent memo, or to another identity's account, is refused", async () => {
    const intent = intentFor(id, [recordLeg(d, id, arg('no-memo'))]);
    const r = await d.ledger.signAndSubmit(id.data, tx.writeData(intent.parts), held(id.key, id.page));
    const st = await d.ledger.waitForTransaction(r.txId);
    const plan = planOf(d, intent, st);
    const e = await unreachable(d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) }));
    expect(e.outcomes.every((o) => o.code === 'NOT_AN_INTENT')).toBe(true);
    expect(INTENT_MEMO).toBe('PGW_INTENT');
  });

  it('an intent naming a key book that does not govern its identity is refused, naming the authorities', async () => {
    const intent = intentFor(id, [recordLeg(d, id, arg('other-book'))], { keyBook: `${id.url}/other-book` });
    const st = await writeIntent(d, id, intent.parts);
    expect(st.delivered).toBe(true); // the ledger took it: the identity's own book signed
    const plan = planOf(d, intent, st);
    const e = await unreachable(d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) }));
    expect(e.outcomes.every((o) => o.status === 'refused' && o.code === 'AUTHORITY')).toBe(true);
    expect(e.outcomes[0]!.reason).toContain(`${id.url}/other-book is not an authority of the identity ${id.url} (authorities: ${id.url.toLowerCase()}/book)`);
  });

  it("an intent written under a sub-identity another party holds cannot spend the identity's account", async () => {
    const { executed, newKey, waitFor } = await import('../ledger-conformance/harness.js');
    const victim = await createIdentity(d);
    // the victim made a sub-identity for a partner (Mallory's key), who gives a data account there her own book
    const mallory = newKey();
    const dept = `${victim.url}/dept`;
    const page = `${dept}/book/1`;
    await executed(
      d.ledger,
      d.ledger.signAndSubmit(
        victim.url,
        tx.createIdentity({ url: dept, keyBookUrl: `${dept}/book`, publicKeyHash: mallory.publicKeyHash }),
        held(victim.key, victim.page),
      ),
    );
    const { amount, oracle } = await d.ledger.acmeForCredits(2_000);
    await executed(d.ledger, d.ledger.signAndSubmit(d.sponsor.lta, tx.addCredits({ recipient: page, amount, oracle }), held(d.sponsor.key, d.sponsor.lite)));
    await waitFor('page credits', async () => ((await d.ledger.queryKeyPage(page)).creditBalance > 0 ? true : undefined));
    await executed(d.ledger, d.ledger.signAndSubmit(dept, tx.createDataAccount({ url: `${dept}/data`, authorities: [`${dept}/book`] }), held(mallory, page)));
    // an intent of the victim's identity, paying from the victim's account, authorized by Mallory's book alone
    const intent = intentFor(victim, [recordLeg(d, victim, arg('sub-identity'))], { keyBook: `${dept}/book` });
    const st = await executed(d.ledger, d.ledger.signAndSubmit(`${dept}/data`, tx.writeData(intent.parts), held(mallory, page), { memo: INTENT_MEMO }));
    expect(st.delivered).toBe(true); // the ledger took it: the data account's own book signed
    const plan = planOf(d, intent, st);
    const e = await unreachable(d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) }));
    expect(e.outcomes.every((o) => o.status === 'refused' && o.code === 'INTENT_INVALID')).toBe(true);
    expect(e.outcomes[0]!.reason).toContain(`was written to ${dept}/data, not to an account of that identity`);
  });

  it('conflicting anchor for the same operation (same intent bytes, second ledger tx) is refused', async () => {
    const a = await freshAttest('conflict');
    await d.quorum.attest(a.req, { message: a.message });
    const st2 = await writeIntent(d, id, a.intent.parts);
    const plan2 = planOf(d, a.intent, st2);
    expect(plan2.operationId).toBe(a.plan.operationId);
    const e = await unreachable(d.quorum.attest(attestRequest(st2, plan2), { message: anchorMsg(d, plan2) }));
    expect(e.outcomes.every((o) => o.code === 'CONFLICTING_ANCHOR')).toBe(true);
  });

  it('two ledger txs of the same intent attested at the same moment: a validator signs one of them, never both', async () => {
    const { ValidatorRefusal } = await import('../../src/validator/node.js');
    const a = await freshAttest('conflict-race');
    const st2 = await writeIntent(d, id, a.intent.parts);
    const plan2 = planOf(d, a.intent, st2);
    // a node of its own (empty store): the network's nodes would already know the first anchor from other tests
    const node = await ownNode(4, d.anvil.rpcUrl);
    // both requests pass the store check before either has finished its on-chain conflict search
    const [r1, r2] = await Promise.allSettled([node.attest(a.req), node.attest(attestRequest(st2, plan2))]);
    const signed = [r1, r2].filter((r) => r.status === 'fulfilled');
    const refused = [r1, r2].flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(signed).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(ValidatorRefusal);
    expect(refused[0].code).toBe('CONFLICTING_ANCHOR');
  });

  it('an anchor for the same operation already proven on chain is a conflict even for a validator that never saw it', async () => {
    const { ValidatorRefusal } = await import('../../src/validator/node.js');
    const a = await freshAttest('onchain-conflict');
    const pre = await d.quorum.attest(a.req, { message: a.message });
    await anchorAndExecute(d, id, a.plan, pre);
    const st2 = await writeIntent(d, id, a.intent.parts);
    const plan2 = planOf(d, a.intent, st2);
    // a node with no memory (fresh store) still refuses: it reads AnchorCreated for the operation and its state,
    // here from a provider that serves eth_getLogs only by block number and 200 blocks at a time
    const { rpcLogRangeLimit, startFaultProxy } = await import('../support/fault-proxy.js');
    const spans: { from: bigint; to: bigint }[] = [];
    const rpc = await startFaultProxy(d.anvil.rpcUrl, { answer: rpcLogRangeLimit(200, spans) });
    onTestFinished(() => rpc.close());
    const amnesiac = await ownNode(3, rpc.url, { chain: { logRangeBlocks: 200 } });
    const e = await amnesiac.attest(attestRequest(st2, plan2)).catch((x) => x);
    expect(e).toBeInstanceOf(ValidatorRefusal);
    expect(e.code).toBe('CONFLICTING_ANCHOR');
    expect(e.message).toMatch(/already proven on chain|already proven on ethereum-sepolia/);
    expect(spans.length).toBeGreaterThan(0);
    expect(rpc.stats.answered).toBe(0); // no search the provider refuses
    // a merely created (unproven) anchor for the operation does not block: createAnchor is permissionless
    const a3 = await freshAttest('onchain-created-only');
    const st4 = await writeIntent(d, id, a3.intent.parts);
    const plan4 = planOf(d, a3.intent, st4);
    const { createAnchor } = await import('../../src/chain/anchor.js');
    await createAnchor(d.w, plan4.anchor, {
      commitmentRoot: plan4.commitmentRoot,
      operationId: plan4.operationId,
      ledgerTxHash: plan4.ledgerTxHash,
      leafCount: plan4.leafCount,
    });
    const ok = await amnesiac.attest(a3.req);
    expect(ok.anchorId).toBe(a3.plan.anchorId);
  });

  async function executeAndObserve(legOver: Parameters<typeof recordLeg>[3], label: string) {
    const a = await freshAttestWith(label, legOver);
    const pre = await d.quorum.attest(a.req, { message: a.message });
    const { exec } = await anchorAndExecute(d, id, a.plan, pre);
    expect(exec.status).toBe('success');
    return d.quorum.observe(observeRequest(a.st, a.plan, 0, exec.txHash), {
      chainId: BigInt(CHAIN.chainId),
      proofAnchor: a.plan.anchor,
      validatorSetRoot: d.setRoot,
    });
  }

  /** A validator node of this test's own, with validator `index`'s keys, on CHAIN (with `opts.chain`) at `rpcUrl`. */
  async function ownNode(
    index: number,
    rpcUrl: string,
    opts: { chain?: { confirmations?: number; logRangeBlocks?: number }; finality?: 'finalized' | 'confirmations'; pollIntervalMs?: number } = {},
  ) {
    const { join } = await import('node:path');
    const { loadValidatorKeys } = await import('../../src/validator/keys.js');
    const { createValidatorNode } = await import('../../src/validator/node.js');
    return createValidatorNode({
      keys: loadValidatorKeys(join(d.dataDir, 'validators', `validator-${index}.json`)),
      ledger: d.ledger,
      chains: [{ ...CHAIN, rpcUrl, contracts: d.vn.contracts, ...opts.chain }],
      protocol: { keyPage: d.vn.protocol.validatorPage, resultsAccount: d.vn.protocol.resultsAccount },
      finality: opts.finality,
      pollIntervalMs: opts.pollIntervalMs,
    });
  }

  async function freshAttestWith(label: string, legOver: Parameters<typeof recordLeg>[3]) {
    const intent = intentFor(id, [recordLeg(d, id, arg(label), legOver)]);
    const st = await writeIntent(d, id, intent.parts);
    const plan = planOf(d, intent, st);
    return { intent, st, plan, req: attestRequest(st, plan), message: anchorMsg(d, plan) };
  }

  it('an expected event that was not emitted fails observation with a reason', async () => {
    const e = await unreachable(executeAndObserve({ expectedEvents: [{ contract: d.target, event: 'Transfer(address,address,uint256)' }] }, 'no-event'));
    expect(e.outcomes.every((o) => o.status === 'refused' && o.code === 'EVENT_NOT_EMITTED' && /expected event not emitted/.test(o.reason ?? ''))).toBe(true);
  });

  it('an expected event from another contract, or with other topics, fails observation', async () => {
    const e = await unreachable(
      executeAndObserve(
        { expectedEvents: [{ contract: d.target, event: 'Called(address,uint256,bytes32)', topics: [toHex(1n, { size: 32 })] }] },
        'wrong-topic',
      ),
    );
    expect(e.outcomes.every((o) => o.code === 'EVENT_NOT_EMITTED')).toBe(true);
  });

  it('a reverted execution fails observation (status 0 from the proven receipt)', async () => {
    const { executeGovernanceProofDirect, proofForLeg } = await import('../../src/chain/account.js');
    const intent = intentFor(id, [
      {
        legId: 'fails',
        chain: CHAIN.name,
        chainId: CHAIN.chainId,
        fromAddress: id.account,
        toAddress: d.target,
        amount: '0',
        contractCall: { target: d.target, functionSignature: 'fail()', args: [] },
      },
    ]);
    const st = await writeIntent(d, id, intent.parts);
    const plan = planOf(d, intent, st);
    const pre = await d.quorum.attest(attestRequest(st, plan), { message: anchorMsg(d, plan) });
    const { createAnchor, executeComprehensiveProof } = await import('../../src/chain/anchor.js');
    await createAnchor(d.w, plan.anchor, {
      commitmentRoot: plan.commitmentRoot,
      operationId: plan.operationId,
      ledgerTxHash: plan.ledgerTxHash,
      leafCount: plan.leafCount,
    });
    await executeComprehensiveProof(d.w, plan.anchor, { anchorId: plan.anchorId, signerBitmap: pre.signerBitmap, signature: pre.aggregateSignature });
    const l = plan.legs[0]!;
    const exec = await executeGovernanceProofDirect(
      d.w,
      id.account,
      { target: l.target, value: l.value, data: l.data, proof: proofForLeg(plan, 0) },
      { gas: 300_000n },
    );
    expect(exec.status).toBe('reverted');
    const e = await unreachable(
      d.quorum.observe(observeRequest(st, plan, 0, exec.txHash), { chainId: BigInt(CHAIN.chainId), proofAnchor: plan.anchor, validatorSetRoot: d.setRoot }),
    );
    expect(e.outcomes.every((o) => o.status === 'refused' && o.code === 'EXECUTION_FAILED' && /reverted/.test(o.reason ?? ''))).toBe(true);
  });

  it('a state slot with the wrong value fails observation', async () => {
    const e = await unreachable(
      executeAndObserve({ expectedState: [{ account: d.target, slot: `0x${'0'.repeat(63)}3`, value: arg('something-else') }] }, 'wrong-state'),
    );
    expect(e.outcomes.every((o) => o.status === 'refused' && o.code === 'STATE_MISMATCH' && /state slot/.test(o.reason ?? ''))).toBe(true);
  });

  it("multi-chain intent: one anchor per chain over that chain's legs; a leg whose chain name and id disagree is refused", async () => {
    const { createAccount, executeGovernanceProofDirect, proofForLeg } = await import('../../src/chain/account.js');
    const { createAnchor, executeComprehensiveProof } = await import('../../src/chain/anchor.js');
    const { anchorMessage } = await import('../../src/chain/formulas.js');
    const { planIntentAnchor } = await import('../../src/protocol/intent/index.js');
    const { parseEther } = await import('viem');
    const onB = await createAccount(d.wB, d.vn.contracts.accountFactory, id.url);
    expect(onB.address).toBe(id.account); // same account on every chain
    await d.wB.public.waitForTransactionReceipt({ hash: await d.wB.wallet.sendTransaction({ to: id.account, value: parseEther('1') }) });
    const bob = '0x000000000000000000000000000000000000b0b0';
    const intent = intentFor(id, [
      recordLeg(d, id, arg('multi-a')),
      { legId: 'amoy-pay', chain: CHAIN_B.name, chainId: CHAIN_B.chainId, fromAddress: id.account, toAddress: bob, amount: '777' },
    ]);
    const st = await writeIntent(d, id, intent.parts);
    const planA = planOf(d, intent, st);
    const planB = planIntentAnchor(intent, { chainId: BigInt(CHAIN_B.chainId), proofAnchor: d.vn.contracts.proofAnchor, ledgerTxHash: st.txHash });
    expect(planA.legs.map((l) => l.legId)).toEqual([intent.legs[0]!.legId]);
    expect(planB.legs.map((l) => l.legId)).toEqual(['amoy-pay']);
    expect(planB.anchorId).not.toBe(planA.anchorId);
    const setRootB = (await (await import('../../src/chain/anchor.js')).readValidatorSet(d.wB, planB.anchor)).root;
    const reqB = { ...attestRequest(st, planB), chain: CHAIN_B.name };
    const pre = await d.quorum.attest(reqB, {
      message: anchorMessage({ chainId: BigInt(CHAIN_B.chainId), anchor: planB.anchor, anchorId: planB.anchorId, validatorSetRoot: setRootB }),
    });
    expect(pre.signers.length).toBe(7);
    await createAnchor(d.wB, planB.anchor, {
      commitmentRoot: planB.commitmentRoot,
      operationId: planB.operationId,
      ledgerTxHash: planB.ledgerTxHash,
      leafCount: planB.leafCount,
    });
    const proven = await executeComprehensiveProof(d.wB, planB.anchor, {
      anchorId: planB.anchorId,
      signerBitmap: pre.signerBitmap,
      signature: pre.aggregateSignature,
    });
    expect(proven.tx?.status).toBe('success');
    const l = planB.legs[0]!;
    const exec = await executeGovernanceProofDirect(d.wB, id.account, { target: l.target, value: l.value, data: l.data, proof: proofForLeg(planB, 0) });
    expect(await d.wB.public.getBalance({ address: bob })).toBe(777n);
    const post = await d.quorum.observe(
      { ...observeRequest(st, planB, 0, exec.txHash), chain: CHAIN_B.name },
      { chainId: BigInt(CHAIN_B.chainId), proofAnchor: planB.anchor, validatorSetRoot: setRootB },
    );
    expect(post.signers.length).toBe(7);
    // the chain-A anchor request for chain B's anchor is refused (the anchor id is chain-bound)
    const cross = await unreachable(d.quorum.attest({ ...attestRequest(st, planB) }, { message: anchorMsg(d, planB) }));
    expect(cross.outcomes.every((o) => o.code === 'ANCHOR_MISMATCH')).toBe(true);
    // a leg naming polygon-amoy with Sepolia's chain id
    const spoof = intentFor(id, [{ legId: 'spoof', chain: CHAIN_B.name, chainId: CHAIN.chainId, fromAddress: id.account, toAddress: bob, amount: '1' }]);
    const sst = await writeIntent(d, id, spoof.parts);
    const splan = planOf(d, spoof, sst);
    const e = await unreachable(d.quorum.attest(attestRequest(sst, splan), { message: anchorMsg(d, splan) }));
    expect(e.outcomes.every((o) => o.code === 'CHAIN_MISMATCH')).toBe(true);
  });

  it('result write-back falls over to the next signer when the designated one is down', async () => {
    const a = await freshAttestWith('writer-down', {});
    const pre = await d.quorum.attest(a.req, { message: a.message });
    const { exec } = await anchorAndExecute(d, id, a.plan, pre);
    const oreq = observeRequest(a.st, a.plan, 0, exec.txHash);
    const post = await d.quorum.observe(oreq, { chainId: BigInt(CHAIN.chainId), proofAnchor: a.plan.anchor, validatorSetRoot: d.setRoot });
    const designated = post.signers[Number(BigInt(a.plan.anchorId) % BigInt(post.signers.length))]!;
    await d.vn.stopValidator(designated);
    try {
      const w = await d.quorum.writeResult(oreq, post);
      expect(w.written).toBe(true);
      expect(w.writtenBy).not.toBe(designated);
      expect(w.attempts).toEqual([expect.objectContaining({ index: designated, status: 'failed' })]);
      expect(w.record.written_by).toBe(String(w.writtenBy));
    } finally {
      await d.vn.startValidator(designated);
    }
    // a forged aggregate is refused by the writer
    const forged = await d.vn.nodes[0]!.writeResult({ ...oreq, aggregateSignature: pre.aggregateSignature, signerBitmap: post.signerBitmap.toString() }).catch(
      (e) => e,
    );
    expect(forged.code).toBe('BAD_AGGREGATE');
  });

  it("a leg's result slot cannot be taken by a record of another intent, nor held by a junk entry", async () => {
    const a = await freshAttestWith('slot-a', {});
    const b = await freshAttestWith('slot-b', {});
    const pre = await d.quorum.attest(a.req, { message: a.message });
    const { exec } = await anchorAndExecute(d, id, a.plan, pre);
    const oreq = observeRequest(a.st, a.plan, 0, exec.txHash);
    const post = await d.quorum.observe(oreq, { chainId: BigInt(CHAIN.chainId), proofAnchor: a.plan.anchor, validatorSetRoot: d.setRoot });
    const agg = { aggregateSignature: post.aggregateSignature, signerBitmap: post.signerBitmap.toString() };
    // the genuine anchor, leaf, execution and aggregate, but another delivered intent named: its fields would go
    // into the record under this leg's result id
    const poisoned = await d.vn.nodes[0]!.writeResult({ ...oreq, intentTxId: b.st.txId, ...agg }).catch((e) => e);
    expect(poisoned.code).toBe('ANCHOR_MISMATCH');
    // a junk entry under this leg's result id, written by a key of the protocol page (any one of them can)
    const { join } = await import('node:path');
    const { loadOrCreateValidatorKeys } = await import('../../src/validator/keys.js');
    const { encodeProofResult, PROOF_RESULT_MEMO } = await import('../../src/protocol/result-record.js');
    const { resultIdOf } = await import('../../src/protocol/result-record.js');
    const resultId = resultIdOf(a.plan.anchorId, 0);
    const k6 = loadOrCreateValidatorKeys(join(d.dataDir, 'validators'), 6);
    const junk = Object.fromEntries(
      PROOF_RESULT_FIELDS.map((f) => [f, f === 'entry_type' ? 'pgw:proof_result:v2' : f === 'result_id' ? resultId : '0']),
    ) as ProofResultRecord;
    const wrote = await d.ledger.signAndSubmit(
      d.vn.protocol.resultsAccount,
      tx.writeData(encodeProofResult(junk)),
      { privateKey: k6.ed25519.seed.slice(2), signerUrl: d.vn.protocol.validatorPage },
      { memo: PROOF_RESULT_MEMO },
    );
    expect((await d.ledger.waitForTransaction(wrote.txId)).delivered).toBe(true);
    const w = await d.quorum.writeResult(oreq, post);
    expect(w.written).toBe(true);
    expect(w.record).toMatchObject({ intent_id: a.intent.intentId, result_id: resultId, result_hash: post.resultHash });
    // the next node finds the valid record, not the junk before it
    const other = post.signers.find((i) => i !== w.writtenBy)!;
    const again = await d.vn.nodes[other]!.writeResult({ ...oreq, ...agg });
    expect(again).toMatchObject({ written: false, txId: w.txId, entryHash: w.entryHash });
    expect(again.record).toEqual(w.record);
  });

  it("a node in 'finalized' mode waits for the finalized tag to pass the execution block", async () => {
    const node = await ownNode(0, d.anvil.rpcUrl, { finality: 'finalized' });
    const a = await freshAttestWith('finalized', {});
    const pre = await d.quorum.attest(a.req, { message: a.message });
    const { exec } = await anchorAndExecute(d, id, a.plan, pre);
    const obs = await node.observe(observeRequest(a.st, a.plan, 0, exec.txHash));
    const fin = await d.w.public.getBlock({ blockTag: 'finalized' });
    expect(fin.number).toBeGreaterThanOrEqual(BigInt(obs.result.blockNumber));
    expect(obs.result.txHash).toBe(exec.txHash);
  });

  it("a node in 'finalized' mode reports the confirmations it counted, never fewer than the chain's, also while its block number is older than the execution", async () => {
    const { startFaultProxy } = await import('../support/fault-proxy.js');
    // eth_blockNumber answers a number from before the execution block (a cached one) until `stale` is cleared
    let stale: bigint | undefined;
    const rpc = await startFaultProxy(d.anvil.rpcUrl, {
      answer: (_path, body) => (stale !== undefined && body?.method === 'eth_blockNumber' ? { jsonrpc: '2.0', id: body.id, result: toHex(stale) } : undefined),
    });
    onTestFinished(() => rpc.close());
    const node = await ownNode(2, rpc.url, { finality: 'finalized', pollIntervalMs: 50 });
    const a = await freshAttestWith('finalized-stale-head', {});
    const pre = await d.quorum.attest(a.req, { message: a.message });
    const { exec } = await anchorAndExecute(d, id, a.plan, pre);
    const { blockNumber } = await d.w.public.getTransactionReceipt({ hash: exec.txHash });
    stale = blockNumber - 1n;
    // the finalized tag has passed the block: only the stale head stands between the node and its answer
    await vi.waitFor(async () => expect((await d.w.public.getBlock({ blockTag: 'finalized' })).number).toBeGreaterThanOrEqual(blockNumber), {
      timeout: 10_000,
    });
    const observing = node.observe(observeRequest(a.st, a.plan, 0, exec.txHash));
    setTimeout(() => (stale = undefined), 500);
    const obs = await observing;
    expect(obs.confirmations).toBeGreaterThanOrEqual(CHAIN.confirmations);
    expect(BigInt(obs.result.blockNumber)).toBe(blockNumber);
  });

  it('observations waiting on one chain share one eth_blockNumber per poll interval, however many there are', async () => {
    const { startFaultProxy } = await import('../support/fault-proxy.js');
    let blockNumbers = 0;
    const count = (_path: string, body: any) => {
      for (const r of Array.isArray(body) ? body : [body]) if (r?.method === 'eth_blockNumber') blockNumbers++;
      return undefined;
    };
    const rpc = await startFaultProxy(d.anvil.rpcUrl, { answer: count });
    onTestFinished(() => rpc.close());
    const pollIntervalMs = 100;
    // 12 confirmations of 0.2 s blocks: every observation below waits at least a second
    const node = await ownNode(1, rpc.url, { chain: { confirmations: 12 }, pollIntervalMs });
    // four executed legs (identical requests would share one answer anyway)
    const legs: { req: ReturnType<typeof observeRequest>; txHash: Hex }[] = [];
    for (let i = 0; i < 4; i++) {
      const a = await freshAttestWith(`shared-block-number-${i}`, {});
      const pre = await d.quorum.attest(a.req, { message: a.message });
      const { exec } = await anchorAndExecute(d, id, a.plan, pre);
      legs.push({ req: observeRequest(a.st, a.plan, 0, exec.txHash), txHash: exec.txHash });
    }
    blockNumbers = 0;
    const t0 = performance.now();
    // started 15 ms apart, as requests arrive: on its own, each would poll in its own phase
    const observed = await Promise.all(
      legs.map(async (l, i) => {
        await new Promise((r) => setTimeout(r, i * 15));
        return node.observe(l.req);
      }),
    );
    const elapsed = performance.now() - t0;
    for (const [i, o] of observed.entries()) expect(o.result.txHash).toBe(legs[i]!.txHash);
    // each of the 4 polling on its own would ask about 4 times per interval
    expect(blockNumbers).toBeGreaterThan(0);
    expect(blockNumbers).toBeLessThanOrEqual(Math.ceil(elapsed / pollIntervalMs) + 3);
  });

  it('an observation still waiting for confirmations answers 202 PENDING within the poll bound; the gateway renews the poll until the answer', async () => {
    const { serveValidator } = await import('../../src/validator/http.js');
    const { postToValidator } = await import('../../src/validator/quorum/post.js');
    const { gatewayKeyFromSeed, signValidatorRequest } = await import('../../src/protocol/validator-auth.js');
    // 12 confirmations of 0.2 s blocks: the observation waits for seconds
    const node = await ownNode(1, d.anvil.rpcUrl, { chain: { confirmations: 12 } });
    const server = await serveValidator(node, { trustedGatewayKeys: d.vn.trustedGatewayKeys, pollWaitMs: 300 });
    onTestFinished(() => server.close({ graceMs: 0 }));
    const a = await freshAttestWith('long-poll', {});
    const pre = await d.quorum.attest(a.req, { message: a.message });
    const { exec } = await anchorAndExecute(d, id, a.plan, pre);
    const req = observeRequest(a.st, a.plan, 0, exec.txHash);
    const key = gatewayKeyFromSeed(d.vn.clientKey);
    const body = JSON.stringify(req);
    const t0 = performance.now();
    const first = await fetch(`${server.url}/v1/observe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signValidatorRequest(key, { method: 'POST', path: '/v1/observe', validatorIndex: 1, body }) },
      body,
    });
    expect(performance.now() - t0).toBeLessThan(1_500);
    expect(first.status).toBe(202);
    expect(await first.json()).toMatchObject({ ok: false, kind: 'pending', code: 'PENDING', validatorIndex: 1 });
    let polls = 0;
    const counting = ((url: string, init: RequestInit) => {
      polls++;
      return fetch(url, init);
    }) as typeof fetch;
    const r = await postToValidator<{ result: { txHash: Hex } }>(counting, key, { index: 1, url: server.url, publicKey: '0x' }, '/v1/observe', req, 60_000);
    expect(r.ok && r.data.result.txHash).toBe(exec.txHash);
    expect(polls).toBeGreaterThan(1);
  });

  it('an RPC that answers null or an error is RPC_UNAVAILABLE (retried by the gateway), never a verdict on the execution', async () => {
    const { ValidatorRefusal } = await import('../../src/validator/node.js');
    const { startFaultProxy } = await import('../support/fault-proxy.js');
    // a lagging backend behind a load balancer: the next eth_getBlockReceipts is null, the next eth_getProof an error
    const faults = new Set(['eth_getBlockReceipts', 'eth_getProof']);
    const rpc = await startFaultProxy(d.anvil.rpcUrl, {
      answer: (_path, body) => {
        if (!faults.has(body?.method)) return undefined;
        faults.delete(body.method);
        if (body.method === 'eth_getBlockReceipts') return { jsonrpc: '2.0', id: body.id, result: null };
        return { jsonrpc: '2.0', id: body.id, error: { code: -32000, message: 'missing trie node 0c1f… (path )' } };
      },
    });
    onTestFinished(() => rpc.close());
    const node = await ownNode(2, rpc.url);
    const calls = (await d.w.public.getStorageAt({ address: d.target, slot: '0x0' })) ?? '0x0';
    const a = await freshAttestWith('rpc-unavailable', {
      expectedState: [{ account: d.target, slot: `0x${'0'.repeat(64)}`, value: toHex(BigInt(calls) + 1n, { size: 32 }) }],
    });
    const pre = await d.quorum.attest(a.req, { message: a.message });
    const { exec } = await anchorAndExecute(d, id, a.plan, pre);
    const req = observeRequest(a.st, a.plan, 0, exec.txHash);
    const first = await node.observe(req).catch((x) => x);
    expect(first).toBeInstanceOf(ValidatorRefusal);
    expect(first.code).toBe('RPC_UNAVAILABLE');
    expect(first.message).toMatch(/receipt inclusion: block receipts unavailable/);
    const second = await node.observe(req).catch((x) => x);
    expect(second).toBeInstanceOf(ValidatorRefusal);
    expect(second.code).toBe('RPC_UNAVAILABLE');
    expect(second.message).toMatch(/state proof for .*missing trie node/);
    const third = await node.observe(req);
    expect(third.checks).toEqual({ callBinding: 'calldata', expectedEvents: 1, expectedState: 1 });
    // and the gateway counts the code among the refusals a later attempt can overcome
    const src = await import('node:fs').then((fs) => fs.readFileSync(new URL('../../src/activities/cycle/context.ts', import.meta.url), 'utf8'));
    expect(src).toMatch(/TRANSIENT_REFUSALS = new Set\([^)]*'RPC_UNAVAILABLE'/);
  });

  it("an execution run through a third party's contract is attested only for a leg without expected events", async () => {
    const { abstractAccountAbi, relayAbi, relayBytecode } = await import('../../src/chain/abi/index.js');
    const { proofForLeg } = await import('../../src/chain/account.js');
    const { createAnchor, executeComprehensiveProof } = await import('../../src/chain/anchor.js');
    const { encodeFunctionData } = await import('viem');
    const deployTx = await d.w.wallet.deployContract({ abi: relayAbi, bytecode: relayBytecode, args: [] } as never);
    const relay = (await d.w.public.waitForTransactionReceipt({ hash: deployTx })).contractAddress!;
    // the relay calls the target itself first (its own Called event, in the same receipt), then runs the proven leg
    const viaRelay = async (label: string, over: Parameters<typeof recordLeg>[3]) => {
      const a = await freshAttestWith(label, over);
      const pre = await d.quorum.attest(a.req, { message: a.message });
      await createAnchor(d.w, a.plan.anchor, {
        commitmentRoot: a.plan.commitmentRoot,
        operationId: a.plan.operationId,
        ledgerTxHash: a.plan.ledgerTxHash,
        leafCount: a.plan.leafCount,
      });
      await executeComprehensiveProof(d.w, a.plan.anchor, { anchorId: a.plan.anchorId, signerBitmap: pre.signerBitmap, signature: pre.aggregateSignature });
      const l = a.plan.legs[0]!;
      const proof = proofForLeg(a.plan, 0);
      const exec = encodeFunctionData({
        abi: abstractAccountAbi,
        functionName: 'executeGovernanceProofDirect',
        args: [l.target, l.value, l.data, { ...proof, merkleProof: [...proof.merkleProof] }],
      });
      const own = encodeFunctionData({
        abi: [{ type: 'function', name: 'record', inputs: [{ type: 'bytes32' }], outputs: [], stateMutability: 'payable' }],
        functionName: 'record',
        args: [arg(`${label}-relay`)],
      });
      const hash = await d.w.wallet.writeContract({
        address: relay,
        abi: relayAbi,
        functionName: 'run',
        args: [
          [d.target, id.account],
          [own, exec],
        ],
      } as never);
      expect((await d.w.public.waitForTransactionReceipt({ hash })).status).toBe('success');
      return d.quorum.observe(observeRequest(a.st, a.plan, 0, hash), {
        chainId: BigInt(CHAIN.chainId),
        proofAnchor: a.plan.anchor,
        validatorSetRoot: d.setRoot,
      });
    };
    // the relay's own Called event would satisfy this expectation: no validator may attest it
    const e = await unreachable(viaRelay('relayed-event', { expectedEvents: [{ contract: d.target, event: CALLED_EVENT }], expectedState: [] }));
    expect(
      e.outcomes.every((o) => o.status === 'refused' && o.code === 'INDIRECT_EXECUTION' && new RegExp(`through contract ${relay}`, 'i').test(o.reason ?? '')),
    ).toBe(true);
    // without expected events the Executed event from the account binds the call: attested
    const ok = await viaRelay('relayed-plain', { expectedEvents: [], expectedState: [] });
    expect(ok.signers.length).toBe(7);
    expect(ok.responses.get(0)!.checks).toEqual({ callBinding: 'event', expectedEvents: 0, expectedState: 0 });
  });

  it('a leg with a gas limit is attested, executed with that gas and observed (the proof carries the limit the leaf binds)', async () => {
    const a = await freshAttestWith('gas-limited', { gasLimit: 120_000 });
    expect(a.plan.proofs[0]!.gasLimit).toBe(120_000n);
    const pre = await d.quorum.attest(a.req, { message: a.message });
    const { exec } = await anchorAndExecute(d, id, a.plan, pre);
    expect(exec.status).toBe('success');
    const post = await d.quorum.observe(observeRequest(a.st, a.plan, 0, exec.txHash), {
      chainId: BigInt(CHAIN.chainId),
      proofAnchor: a.plan.anchor,
      validatorSetRoot: d.setRoot,
    });
    expect(post.signers.length).toBe(7);
    expect(post.responses.get(0)!.checks.callBinding).toBe('calldata');
  });

  it('the calls counter slot proven by eth_getProof matches (expectedState on slot 0 with the live count)', async () => {
    const calls = (await d.w.public.getStorageAt({ address: d.target, slot: '0x0' })) ?? '0x0';
    const next = toHex(BigInt(calls) + 1n, { size: 32 });
    const post = await executeAndObserve({ expectedState: [{ account: d.target, slot: `0x${'0'.repeat(64)}`, value: next }] }, 'counter');
    expect(post.signers.length).toBe(7);
  });

  // last: the reorg drops the chain's newest blocks, and with them transactions of this devnet's wallet
  it('no result is written for an observation whose block was reorged out after the quorum observed it', async () => {
    const a = await freshAttestWith('reorged', {});
    const pre = await d.quorum.attest(a.req, { message: a.message });
    const { exec } = await anchorAndExecute(d, id, a.plan, pre);
    const oreq = observeRequest(a.st, a.plan, 0, exec.txHash);
    const post = await d.quorum.observe(oreq, { chainId: BigInt(CHAIN.chainId), proofAnchor: a.plan.anchor, validatorSetRoot: d.setRoot });
    const observed = post.responses.values().next().value!.result;
    const latest = await d.w.public.getBlockNumber();
    // two blocks deeper than needed: the interval miner may add one between reading the head and the reorg
    await d.w.public.request({ method: 'anvil_reorg', params: [Number(latest - BigInt(observed.blockNumber)) + 3, []] } as never);
    // the observed height holds a replacement block once anvil has mined it (it can be missing for a moment)
    let replaced: string | undefined;
    for (let i = 0; i < 50 && !replaced; i++) {
      replaced = (await d.w.public.getBlock({ blockNumber: BigInt(observed.blockNumber) }).catch(() => undefined))?.hash;
      if (!replaced) await new Promise((r) => setTimeout(r, 100));
    }
    expect(replaced).toMatch(/^0x[0-9a-f]{64}$/);
    expect(replaced).not.toBe(observed.blockHash);
    const e = await d.quorum.writeResult(oreq, post).catch((x) => x);
    expect(e).toBeInstanceOf(Error);
    // every signer refuses: its cached observation names a block that is no longer the chain's
    expect(String(e.message)).toMatch(/no validator wrote the result/);
    expect(String(e.message).match(/refused block \d+ is now 0x[0-9a-f]{64}, observed/g)).toHaveLength(post.signers.length);
    const { resultIdOf } = await import('../../src/protocol/result-record.js');
    const resultId = resultIdOf(a.plan.anchorId, 0);
    const entries = await d.ledger.readDataEntries(d.vn.protocol.resultsAccount);
    expect(entries.map((x) => parseProofResult(x.data, true)).filter((r) => r?.result_id === resultId)).toHaveLength(0);
  });
});
