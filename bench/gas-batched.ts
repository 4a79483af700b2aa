/**
 * Gas of the batched proof class: one createAnchor and one executeComprehensiveProof over the Merkle root of
 * `legs` legs from as many identities (one account each), then one executeGovernanceProofDirect per leg with its
 * own Merkle proof. Per call, amortised = (createAnchor + executeComprehensiveProof) / legs + the mean execution.
 * Used by bench/gas.ts; the legs call the same TestTarget `record` as the standard rows there.
 */
import { encodeFunctionData, keccak256, stringToHex, toHex, type Address, type Hex } from 'viem';
import { createAccount, executeGovernanceProofDirect, proofForLeg } from '../src/chain/account.js';
import { createAnchor, executeComprehensiveProof } from '../src/chain/anchor.js';
import type { ChainWriter } from '../src/chain/clients.js';
import { anchorMessage, planBatchAnchor } from '../src/chain/formulas.js';
import { blsAggregateSignatures, blsSign, signerBitmap } from '../src/chain/bls.js';
import { testTargetAbi } from '../src/chain/abi/index.js';

export interface BatchedGasRow {
  legs: number;
  createAnchor: number;
  executeComprehensiveProof: number;
  /** mean executeGovernanceProofDirect receipt gas (incl. the target call) */
  executeMean: number;
  /** mean of the same without the target call (its call frame + the cold account access) */
  executeMeanExclTarget: number;
  /** (createAnchor + executeComprehensiveProof) / legs + executeMean */
  perCall: number;
  perCallExclTarget: number;
}

type Frame = { to?: string; gasUsed: string; calls?: Frame[] };

export async function batchedGasCurve(p: {
  w: ChainWriter;
  chainId: number;
  proofAnchor: Address;
  accountFactory: Address;
  target: Address;
  setRoot: Hex;
  signers: readonly number[];
  secretKeys: readonly Uint8Array[];
  sizes: readonly number[];
  coldAccountAccess: number;
}): Promise<BatchedGasRow[]> {
  const { w } = p;
  const accounts: { adiUrl: string; address: Address }[] = [];
  const most = Math.max(...p.sizes);
  for (let i = 0; i < most; i++) {
    const adiUrl = `acc://bench-batch-${i}.acme`;
    accounts.push({ adiUrl, address: (await createAccount(w, p.accountFactory, adiUrl)).address });
  }
  const rows: BatchedGasRow[] = [];
  for (const n of p.sizes) {
    const legs = accounts.slice(0, n).map((a, i) => ({
      account: a.address,
      adiUrl: a.adiUrl,
      target: p.target,
      value: 0n,
      data: encodeFunctionData({ abi: testTargetAbi, functionName: 'record', args: [keccak256(toHex(`batch-${n}-${i}`))] }),
      deadline: BigInt(Math.floor(Date.now() / 1000) + 3600),
    }));
    const plan = planBatchAnchor({
      chainId: BigInt(p.chainId),
      anchor: p.proofAnchor,
      operationId: keccak256(stringToHex(`bench-batch-op-${n}`)),
      ledgerTxHash: keccak256(stringToHex(`bench-batch-ltx-${n}`)),
      legs,
    });
    const ca = await createAnchor(w, p.proofAnchor, plan);
    const msg = anchorMessage({ chainId: BigInt(p.chainId), anchor: p.proofAnchor, anchorId: plan.anchorId, validatorSetRoot: p.setRoot });
    const signature = blsAggregateSignatures(p.signers.map((i) => blsSign(p.secretKeys[i]!, msg)));
    const ep = await executeComprehensiveProof(w, p.proofAnchor, { anchorId: plan.anchorId, signerBitmap: signerBitmap([...p.signers]), signature });
    let total = 0;
    let exclTarget = 0;
    for (let i = 0; i < n; i++) {
      const leg = legs[i]!;
      const ex = await executeGovernanceProofDirect(w, leg.account, { target: leg.target, value: 0n, data: leg.data, proof: proofForLeg(plan, i) });
      if (ex.status !== 'success') throw new Error(`batched leg ${i} of ${n} reverted`);
      const trace = (await w.public.request({
        method: 'debug_traceTransaction' as never,
        params: [ex.txHash, { tracer: 'callTracer' }] as never,
      })) as Frame;
      const frame = (trace.calls ?? []).find((c) => c.to?.toLowerCase() === p.target.toLowerCase());
      total += Number(ex.gasUsed);
      exclTarget += Number(ex.gasUsed) - (frame ? Number(BigInt(frame.gasUsed)) : 0) - p.coldAccountAccess;
    }
    const create = Number(ca.tx!.gasUsed);
    const prove = Number(ep.tx!.gasUsed);
    const executeMean = Math.round(total / n);
    const executeMeanExclTarget = Math.round(exclTarget / n);
    rows.push({
      legs: n,
      createAnchor: create,
      executeComprehensiveProof: prove,
      executeMean,
      executeMeanExclTarget,
      perCall: Math.round((create + prove) / n) + executeMean,
      perCallExclTarget: Math.round((create + prove) / n) + executeMeanExclTarget,
    });
  }
  return rows;
}
