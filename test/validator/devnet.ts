/**
 * A small devnet for the validator tests: ledger-sim + one anvil + system contracts deployed with 7 validator
 * keys + a TestTarget + 7 validator nodes on loopback ports (src/devnet/validators.ts), and helpers to make an
 * identity, write an intent and run the proof cycle step by step.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEther, type Address, type Hex } from 'viem';
import { testTargetAbi, testTargetBytecode } from '../../src/chain/abi/index.js';
import { createAccount, executeGovernanceProofDirect, proofForLeg } from '../../src/chain/account.js';
import { createAnchor, executeComprehensiveProof, readValidatorSet } from '../../src/chain/anchor.js';
import { createChainClients, type ChainWriter } from '../../src/chain/clients.js';
import { anchorMessage } from '../../src/chain/formulas.js';
import { startAnvil, type AnvilHandle } from '../../src/devnet/anvil.js';
import { startDevnetValidators, type DevnetValidators } from '../../src/devnet/validators.js';
import { startLedgerSim, type LedgerSimHandle } from '../../src/ledger-sim/index.js';
import { createLedgerClient, tx, type LedgerClient, type TxStatus } from '../../src/ledger/index.js';
import { INTENT_MEMO, buildIntent, planIntentAnchor, type CanonicalIntent, type IntentAnchorPlan, type IntentInput } from '../../src/protocol/intent/index.js';
import { attestRequestFor, observeRequestFor } from '../../src/protocol/validator-wire.js';
import { createQuorumClient, type QuorumClient } from '../../src/validator/quorum.js';
import { ANVIL_KEYS } from '../chain/fixture.js';
import { createAdi, executed, fundedLite, held, newKey, type Adi, type Sponsor, type TestKey } from '../ledger-conformance/harness.js';
import { testTargetLeg } from '../support/test-target.js';

export const CHAIN = { name: 'ethereum-sepolia', chainId: 11155111, confirmations: 2 } as const;
/** a second chain: same system contract and account addresses (CREATE2) */
export const CHAIN_B = { name: 'polygon-amoy', chainId: 80002, confirmations: 1 } as const;

export interface TestDevnet {
  dataDir: string;
  sim: LedgerSimHandle;
  ledger: LedgerClient;
  anvil: AnvilHandle;
  anvilB: AnvilHandle;
  /** relayer (anvil account 1) */
  w: ChainWriter;
  /** relayer on CHAIN_B */
  wB: ChainWriter;
  target: Address;
  vn: DevnetValidators;
  quorum: QuorumClient;
  setRoot: Hex;
  sponsor: Sponsor;
  stop(): Promise<void>;
}

export async function startTestDevnet(): Promise<TestDevnet> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pgw-validators-'));
  const sim = await startLedgerSim({ port: 0, blockIntervalMs: 20 });
  const anvil = await startAnvil({ chainId: CHAIN.chainId });
  const anvilB = await startAnvil({ chainId: CHAIN_B.chainId });
  try {
    const ledger = createLedgerClient({ url: sim.url });
    const vn = await startDevnetValidators({
      dataDir,
      ledgerUrl: sim.url,
      chains: [
        { ...CHAIN, rpcUrl: anvil.rpcUrl },
        { ...CHAIN_B, rpcUrl: anvilB.rpcUrl },
      ],
      deployerKey: ANVIL_KEYS[0],
      observeTimeoutMs: 20_000,
      // a short poll bound: rounds whose work takes longer are answered 202 PENDING and renewed by the quorum client
      http: { pollWaitMs: 1_000 },
    });
    const w = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: CHAIN.chainId, privateKey: ANVIL_KEYS[1], pollingIntervalMs: 25 });
    const wB = createChainClients({ rpcUrl: anvilB.rpcUrl, chainId: CHAIN_B.chainId, privateKey: ANVIL_KEYS[1], pollingIntervalMs: 25 });
    const hash = await w.wallet.deployContract({ abi: testTargetAbi, bytecode: testTargetBytecode });
    const target = (await w.public.waitForTransactionReceipt({ hash })).contractAddress as Address;
    const setRoot = (await readValidatorSet(w, vn.contracts.proofAnchor)).root;
    const quorum = createQuorumClient({ validators: vn.quorum, clientKey: vn.clientKey, attestTimeoutMs: 5_000, observeTimeoutMs: 30_000 });
    const sponsor = await fundedLite(ledger);
    return {
      dataDir,
      sim,
      ledger,
      anvil,
      anvilB,
      w,
      wB,
      target,
      vn,
      quorum,
      setRoot,
      sponsor,
      async stop() {
        await vn.stop();
        await anvil.stop();
        await anvilB.stop();
        await sim.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await anvil.stop();
    await anvilB.stop();
    await sim.stop();
    throw e;
  }
}

export interface Identity extends Adi {
  data: string;
  account: Address;
  extraKeys: TestKey[];
}

/** ADI + data account (+ extra keys and threshold on page 1) + its AbstractAccount, funded with 1 ETH. */
export async function createIdentity(d: TestDevnet, opts: { extraKeys?: number; threshold?: number } = {}): Promise<Identity> {
  const c = d.ledger;
  const adi = await createAdi(c, d.sponsor, 5_000);
  const data = `${adi.url}/data`;
  await executed(c, c.signAndSubmit(adi.url, tx.createDataAccount({ url: data }), held(adi.key, adi.page)));
  const extraKeys = Array.from({ length: opts.extraKeys ?? 0 }, () => newKey());
  if (extraKeys.length || opts.threshold) {
    await executed(
      c,
      c.signAndSubmit(
        adi.page,
        tx.updateKeyPage([
          ...extraKeys.map((k) => ({ type: 'addKey' as const, publicKeyHash: k.publicKeyHash })),
          ...(opts.threshold ? [{ type: 'setThreshold' as const, threshold: opts.threshold }] : []),
        ]),
        held(adi.key, adi.page),
      ),
    );
  }
  const { address: account } = await createAccount(d.w, d.vn.contracts.accountFactory, adi.url);
  const h = await d.w.wallet.sendTransaction({ to: account, value: parseEther('1') });
  await d.w.public.waitForTransactionReceipt({ hash: h });
  return { ...adi, data, account, extraKeys };
}

export { CALLED_EVENT } from '../support/test-target.js';

/** A contract-call leg on TestTarget.record(arg) with the Called event and the lastArg slot (3) expected. */
export function recordLeg(d: TestDevnet, id: Identity, arg: Hex, over: Partial<NonNullable<IntentInput['legs'][number]['contractCall']>> = {}) {
  return testTargetLeg({ chain: CHAIN, account: id.account, target: d.target, arg, legId: `leg-${arg.slice(2, 10)}`, over });
}

let seq = 0;
export function intentFor(id: Identity, legs: IntentInput['legs'], over: Partial<IntentInput> = {}): CanonicalIntent {
  return buildIntent({ intentId: `intent-${Date.now()}-${++seq}`, adiUrl: id.url, legs, ...over });
}

/** Writes the intent parts (or `parts` as given) to the identity's data account, signed by page 1's key. */
export async function writeIntent(d: TestDevnet, id: Identity, parts: string[], opts: { wait?: 'final' | 'recorded' } = {}): Promise<TxStatus> {
  const r = await d.ledger.signAndSubmit(id.data, tx.writeData(parts), held(id.key, id.page), { memo: INTENT_MEMO });
  return d.ledger.waitForTransaction(r.txId, { until: opts.wait ?? 'final', timeoutMs: 30_000 });
}

export function planOf(d: TestDevnet, intent: CanonicalIntent, st: TxStatus): IntentAnchorPlan {
  return planIntentAnchor(intent, { chainId: BigInt(CHAIN.chainId), proofAnchor: d.vn.contracts.proofAnchor, ledgerTxHash: st.txHash });
}

export function attestRequest(st: TxStatus, plan: IntentAnchorPlan) {
  return attestRequestFor(st.txId, CHAIN.name, plan);
}

export function anchorMsg(d: TestDevnet, plan: IntentAnchorPlan): Hex {
  return anchorMessage({ chainId: BigInt(CHAIN.chainId), anchor: plan.anchor, anchorId: plan.anchorId, validatorSetRoot: d.setRoot });
}

/** createAnchor + executeComprehensiveProof with the aggregate + executeGovernanceProofDirect for leg `leg`. */
export async function anchorAndExecute(d: TestDevnet, id: Identity, plan: IntentAnchorPlan, agg: { aggregateSignature: Hex; signerBitmap: bigint }, leg = 0) {
  await createAnchor(d.w, plan.anchor, {
    commitmentRoot: plan.commitmentRoot,
    operationId: plan.operationId,
    ledgerTxHash: plan.ledgerTxHash,
    leafCount: plan.leafCount,
  });
  const proven = await executeComprehensiveProof(d.w, plan.anchor, {
    anchorId: plan.anchorId,
    signerBitmap: agg.signerBitmap,
    signature: agg.aggregateSignature,
  });
  const l = plan.legs[leg]!;
  const exec = await executeGovernanceProofDirect(d.w, id.account, { target: l.target, value: l.value, data: l.data, proof: proofForLeg(plan, leg) });
  return { proven, exec };
}

export function observeRequest(st: TxStatus, plan: IntentAnchorPlan, leafIndex: number, executionTxHash: Hex) {
  return observeRequestFor(st.txId, CHAIN.name, plan.anchorId, leafIndex, executionTxHash);
}
