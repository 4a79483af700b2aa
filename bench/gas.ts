/**
 * Gas of the three proof-cycle transactions on a local anvil (hardfork prague), plus the min-sig vs min-pk
 * comparison that chose the BLS variant, plus the TypeScript signing cost.
 *
 *   npx tsx bench/gas.ts            # table + JSON on stdout
 *
 * "exec excl. target" = executeGovernanceProofDirect receipt gas minus the cost of the target call: the gas
 * used inside the target's call frame (debug_traceTransaction callTracer) plus the CALL's cold-account
 * access (EIP-2929, 2600; the target appears nowhere else in the transaction). The call carries no value.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { encodeFunctionData, hexToBytes, keccak256, stringToHex, toHex, type Address, type Hex } from 'viem';
import { blsLongEncodings } from './long-sig.js';
import { batchedGasCurve } from './gas-batched.js';
import { startAnvil } from '../src/devnet/anvil.js';
import { deploySystem } from '../src/chain/deploy.js';
import { createChainClients } from '../src/chain/clients.js';
import { createAccount, executeGovernanceProofDirect, proofForLeg } from '../src/chain/account.js';
import { createAnchor, executeComprehensiveProof, readValidatorSet } from '../src/chain/anchor.js';
import { anchorMessage, planAnchor, BLS_SIG_DST } from '../src/chain/formulas.js';
import { blsAggregatePublicKeys, blsAggregateSignatures, blsKeygen, blsProofOfPossession, blsSign, signerBitmap } from '../src/chain/bls.js';
import { blsHarnessAbi, blsHarnessBytecode, testTargetAbi, testTargetBytecode } from '../src/chain/abi/index.js';

const KEY0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
const CHAIN_ID = 11155111;
const ROUNDS = 5;
const COLD_ACCOUNT_ACCESS = 2600;
const SIGNERS = [0, 1, 2, 4, 6];
const BATCH_SIZES = [1, 4, 16, 32];

type Frame = { to?: string; gasUsed: string; calls?: Frame[] };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const anvil = await startAnvil({ chainId: CHAIN_ID });
  try {
    const w = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: CHAIN_ID, privateKey: KEY0, pollingIntervalMs: 25 });

    // ---- TS side: 7 validators, sign / aggregate timings
    const vs = Array.from({ length: 7 }, (_, i) => {
      const { secretKey, publicKey } = blsKeygen(hexToBytes(keccak256(stringToHex(`bench-validator-${i}`))));
      return { secretKey, publicKey, proofOfPossession: blsProofOfPossession(secretKey) };
    });
    const sys = await deploySystem({
      rpcUrl: anvil.rpcUrl,
      chainId: CHAIN_ID,
      privateKey: KEY0,
      validators: vs.map((v) => ({ publicKey: v.publicKey, proofOfPossession: v.proofOfPossession, power: 100n })),
    });
    const deployGas: bigint[] = [];
    for (const h of sys.txHashes) deployGas.push((await w.public.getTransactionReceipt({ hash: h })).gasUsed);
    const setRoot = (await readValidatorSet(w, sys.proofAnchor)).root;
    const adiUrl = 'acc://bench.acme';
    const acct = await createAccount(w, sys.accountFactory, adiUrl);
    const th = await w.wallet.deployContract({ abi: testTargetAbi, bytecode: testTargetBytecode });
    const target = (await w.public.waitForTransactionReceipt({ hash: th })).contractAddress as Address;
    const hh = await w.wallet.deployContract({ abi: blsHarnessAbi, bytecode: blsHarnessBytecode });
    const harness = (await w.public.waitForTransactionReceipt({ hash: hh })).contractAddress as Address;

    const rows: Record<string, number[]> = {
      createAnchor: [],
      executeComprehensiveProof: [],
      executeGovernanceProofDirect_total: [],
      target_call_frame: [],
      executeGovernanceProofDirect_excl_target: [],
      ts_sign_one_ms: [],
      ts_aggregate5_ms: [],
      cycle_wall_ms: [],
    };
    for (let r = 0; r < ROUNDS; r++) {
      const data = encodeFunctionData({ abi: testTargetAbi, functionName: 'record', args: [keccak256(toHex(r))] });
      const plan = planAnchor({
        chainId: BigInt(CHAIN_ID),
        anchor: sys.proofAnchor,
        account: acct.address,
        adiUrl,
        operationId: keccak256(stringToHex(`bench-op-${r}`)),
        ledgerTxHash: keccak256(stringToHex(`bench-ltx-${r}`)),
        deadline: BigInt(Math.floor(Date.now() / 1000) + 3600),
        legs: [{ target, value: 0n, data }],
      });
      const cycleStart = performance.now();
      const ca = await createAnchor(w, sys.proofAnchor, plan);
      rows.createAnchor!.push(Number(ca.tx!.gasUsed));
      const msg = anchorMessage({ chainId: BigInt(CHAIN_ID), anchor: sys.proofAnchor, anchorId: plan.anchorId, validatorSetRoot: setRoot });
      let t = performance.now();
      const partials = SIGNERS.map((i) => blsSign(vs[i]!.secretKey, msg));
      rows.ts_sign_one_ms!.push((performance.now() - t) / SIGNERS.length);
      t = performance.now();
      const signature = blsAggregateSignatures(partials);
      rows.ts_aggregate5_ms!.push(performance.now() - t);
      const ep = await executeComprehensiveProof(w, sys.proofAnchor, { anchorId: plan.anchorId, signerBitmap: signerBitmap(SIGNERS), signature });
      rows.executeComprehensiveProof!.push(Number(ep.tx!.gasUsed));
      const ex = await executeGovernanceProofDirect(w, acct.address, { target, value: 0n, data, proof: proofForLeg(plan, 0) });
      rows.cycle_wall_ms!.push(performance.now() - cycleStart);
      if (ex.status !== 'success') throw new Error('execution reverted');
      const trace = (await w.public.request({
        method: 'debug_traceTransaction' as never,
        params: [ex.txHash, { tracer: 'callTracer' }] as never,
      })) as Frame;
      const targetFrame = (trace.calls ?? []).find((c) => c.to?.toLowerCase() === target.toLowerCase());
      const tf = targetFrame ? Number(BigInt(targetFrame.gasUsed)) : 0;
      rows.executeGovernanceProofDirect_total!.push(Number(ex.gasUsed));
      rows.target_call_frame!.push(tf + COLD_ACCOUNT_ACCESS);
      rows.executeGovernanceProofDirect_excl_target!.push(Number(ex.gasUsed) - tf - COLD_ACCOUNT_ACCESS);
    }

    // ---- proof gas by signer count (4 of 7 cannot prove: threshold)
    const bySigners: Record<string, number> = {};
    for (const signers of [
      [0, 1, 2, 3, 4],
      [0, 1, 2, 3, 4, 5],
      [0, 1, 2, 3, 4, 5, 6],
    ]) {
      const plan = planAnchor({
        chainId: BigInt(CHAIN_ID),
        anchor: sys.proofAnchor,
        account: acct.address,
        adiUrl,
        operationId: keccak256(stringToHex(`bench-op-k${signers.length}`)),
        ledgerTxHash: keccak256(stringToHex('bench-ltx-k')),
        deadline: BigInt(Math.floor(Date.now() / 1000) + 3600),
        legs: [{ target, value: 0n, data: '0x' }],
      });
      await createAnchor(w, sys.proofAnchor, plan);
      const m = anchorMessage({ chainId: BigInt(CHAIN_ID), anchor: sys.proofAnchor, anchorId: plan.anchorId, validatorSetRoot: setRoot });
      const signature = blsAggregateSignatures(signers.map((i) => blsSign(vs[i]!.secretKey, m)));
      const ep = await executeComprehensiveProof(w, sys.proofAnchor, { anchorId: plan.anchorId, signerBitmap: signerBitmap(signers), signature });
      bySigners[`${signers.length}_of_7`] = Number(ep.tx!.gasUsed);
    }

    // ---- min-sig (keys G2, sigs G1) vs min-pk (keys G1, sigs G2), same 5-of-7 message, via the harness
    const msg = keccak256(stringToHex('bench-message'));
    const minSigPk = blsAggregatePublicKeys(SIGNERS.map((i) => vs[i]!.publicKey));
    const minSigSig = blsAggregateSignatures(SIGNERS.map((i) => blsSign(vs[i]!.secretKey, msg)));
    const long = blsLongEncodings(SIGNERS.length, msg);
    const est = (fn: 'verifyMinSig' | 'verifyMinPk' | 'hashToG1' | 'hashToG2', args: readonly Hex[]) =>
      w.public.estimateGas({ to: harness, data: encodeFunctionData({ abi: blsHarnessAbi, functionName: fn, args: args as never }) });
    const okSig = await w.public.readContract({
      address: harness,
      abi: blsHarnessAbi,
      functionName: 'verifyMinSig',
      args: [minSigPk, minSigSig, msg, stringToHex(BLS_SIG_DST)],
    });
    const okPk = await w.public.readContract({
      address: harness,
      abi: blsHarnessAbi,
      functionName: 'verifyMinPk',
      args: [long.publicKey, long.signature, msg, stringToHex(long.dst)],
    });
    if (!okSig || !okPk) throw new Error('harness verification failed');
    const variant = {
      minSig_verify_call: Number(await est('verifyMinSig', [minSigPk, minSigSig, msg, stringToHex(BLS_SIG_DST)])),
      minPk_verify_call: Number(await est('verifyMinPk', [long.publicKey, long.signature, msg, stringToHex(long.dst)])),
      hashToG1_call: Number(await est('hashToG1', [msg, stringToHex(BLS_SIG_DST)])),
      hashToG2_call: Number(await est('hashToG2', [msg, stringToHex(long.dst)])),
      ts_minSig_sign_ms: long.minSigSignMs,
      ts_minPk_sign_ms: long.minPkSignMs,
    };

    // ---- batched class: one anchor over the legs of 1, 4, 16 and 32 identities, each leg with its own Merkle proof
    const batched = await batchedGasCurve({
      w,
      chainId: CHAIN_ID,
      proofAnchor: sys.proofAnchor,
      accountFactory: sys.accountFactory,
      target,
      setRoot,
      signers: SIGNERS,
      secretKeys: vs.map((v) => v.secretKey),
      sizes: BATCH_SIZES,
      coldAccountAccess: COLD_ACCOUNT_ACCESS,
    });

    const med = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, median(v)]));
    const three = med.createAnchor! + med.executeComprehensiveProof! + med.executeGovernanceProofDirect_excl_target!;
    const result = {
      chain: { chainId: CHAIN_ID, hardfork: 'prague', rounds: ROUNDS, signers: `${SIGNERS.length} of 7` },
      txGasMedian: {
        createAnchor: med.createAnchor,
        executeComprehensiveProof: med.executeComprehensiveProof,
        executeGovernanceProofDirect_excl_target: med.executeGovernanceProofDirect_excl_target,
        executeGovernanceProofDirect_total: med.executeGovernanceProofDirect_total,
        target_call: med.target_call_frame,
        three_together_excl_target: three,
      },
      perCall: {
        standard: three + med.target_call_frame!,
        standard_excl_target: three,
        batched: Object.fromEntries(batched.map((r) => [`legs_${r.legs}`, r.perCall])),
        batched_excl_target: Object.fromEntries(batched.map((r) => [`legs_${r.legs}`, r.perCallExclTarget])),
      },
      targets: {
        blsVerification_le_160000: med.executeComprehensiveProof! <= 160_000,
        threeTogether_le_250000: three <= 250_000,
        batched16_le_90000: (batched.find((r) => r.legs === 16)?.perCall ?? Infinity) <= 90_000,
      },
      batched,
      executeComprehensiveProofBySigners: bySigners,
      blsVariant: variant,
      ts: { sign_one_ms: +med.ts_sign_one_ms!.toFixed(2), aggregate5_ms: +med.ts_aggregate5_ms!.toFixed(2), cycle_wall_ms: +med.cycle_wall_ms!.toFixed(1) },
      deployGas: { proofAnchor: Number(deployGas[0] ?? 0n), accountFactory: Number(deployGas[1] ?? 0n), createAccount: Number(acct.tx?.gasUsed ?? 0n) },
      raw: rows,
    };
    const line = (k: string, v: string | number) => console.log(`${k.padEnd(48)} ${String(v).padStart(10)}`);
    console.log('gas (receipt gasUsed, incl. 21000 intrinsic), median of', ROUNDS);
    line('createAnchor', med.createAnchor!);
    line('executeComprehensiveProof (BLS 5-of-7 verify)', med.executeComprehensiveProof!);
    line('executeGovernanceProofDirect excl. target call', med.executeGovernanceProofDirect_excl_target!);
    line('  (total incl. target call)', med.executeGovernanceProofDirect_total!);
    line('three together excl. target', three);
    line('  per call incl. target call', three + med.target_call_frame!);
    console.log('batched: one anchor + one proof for N legs of N identities, then one execution per leg (Merkle proof)');
    console.log(
      `${'legs'.padStart(6)} ${'createAnchor'.padStart(13)} ${'proof'.padStart(8)} ${'exec mean'.padStart(10)} ${'per call'.padStart(9)} ${'excl. target'.padStart(13)}`,
    );
    for (const r of batched) {
      console.log(
        `${String(r.legs).padStart(6)} ${String(r.createAnchor).padStart(13)} ${String(r.executeComprehensiveProof).padStart(8)} ${String(r.executeMean).padStart(10)} ${String(r.perCall).padStart(9)} ${String(r.perCallExclTarget).padStart(13)}`,
      );
    }
    for (const [k, v] of Object.entries(bySigners)) line(`executeComprehensiveProof, ${k.replace(/_/g, ' ')}`, v);
    console.log('BLS variant (eth_estimateGas of a harness call, incl. 21000 + calldata)');
    line('verify min-sig (keys G2, sigs G1)  [chosen]', variant.minSig_verify_call);
    line('verify min-pk  (keys G1, sigs G2)', variant.minPk_verify_call);
    line('hashToG1', variant.hashToG1_call);
    line('hashToG2', variant.hashToG2_call);
    line('TS sign ms min-sig / min-pk', `${variant.ts_minSig_sign_ms.toFixed(2)} / ${variant.ts_minPk_sign_ms.toFixed(2)}`);
    line('TS aggregate 5 sigs ms', result.ts.aggregate5_ms);
    line('wall ms: 3 txs + 5 sequential signs + aggregate', result.ts.cycle_wall_ms);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await anvil.stop();
  }
}

void bls12_381;
await main();
