/**
 * Validator figures: BLS sign (a new message: hash-to-G1 included; a message hashed before: the scalar
 * multiplication alone) / verify / aggregate with the engine src/chain/bls.ts uses (mcl-wasm once loaded), one validator's attestation handling,
 * a 7-validator attestation quorum round and an observation round on a local devnet (ledger-sim + anvil).
 * Prints a table and a JSON line.
 */
import { hexToBytes, keccak256, stringToHex, toHex } from 'viem';
import { blsAggregatePublicKeys, blsAggregateSignatures, blsEngine, blsKeygen, blsReady, blsSign, blsVerify } from '../src/chain/bls.js';
import {
  CHAIN,
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
} from '../test/validator/devnet.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function time(f: () => unknown, n = 10): number {
  f();
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    f();
    xs.push(performance.now() - t);
  }
  return median(xs);
}

await blsReady();
const ks = Array.from({ length: 7 }, () => blsKeygen());
const m = keccak256(stringToHex('bench'));
const sigs = ks.map((k) => blsSign(k.secretKey, m));
const figures: Record<string, number> = {
  blsSignNewMessageMs: time(() => blsSign(ks[0]!.secretKey, keccak256(toHex(String(Math.random()))))),
  blsSignHashedMessageMs: time(() => blsSign(ks[1]!.secretKey, m)),
  blsVerifyMs: time(() => blsVerify(sigs[0]!, m, ks[0]!.publicKey)),
  blsAggregate5SigsMs: time(() => blsAggregateSignatures(sigs.slice(0, 5))),
  blsAggregate5KeysMs: time(() => blsAggregatePublicKeys(ks.slice(0, 5).map((k) => k.publicKey))),
};

const d = await startTestDevnet();
try {
  const id = await createIdentity(d);
  const rounds: number[] = [];
  const single: number[] = [];
  const handling: number[] = [];
  const observe: number[] = [];
  const verify: number[] = [];
  for (let i = 0; i < 6; i++) {
    const intent = intentFor(id, [recordLeg(d, id, keccak256(stringToHex(`bench-${i}`)))]);
    const st = await writeIntent(d, id, intent.parts);
    const plan = planOf(d, intent, st);
    const req = attestRequest(st, plan);
    let t = performance.now();
    await d.vn.nodes[0]!.attest(req);
    single.push(performance.now() - t);
    t = performance.now();
    const pre = await d.quorum.attest(req, { message: anchorMsg(d, plan) });
    rounds.push(performance.now() - t);
    verify.push(pre.verifyMs);
    handling.push(...[...pre.responses.values()].map((r) => r.elapsedMs));
    const { exec } = await anchorAndExecute(d, id, plan, pre);
    t = performance.now();
    await d.quorum.observe(observeRequest(st, plan, 0, exec.txHash), { chainId: BigInt(CHAIN.chainId), proofAnchor: plan.anchor, validatorSetRoot: d.setRoot });
    observe.push(performance.now() - t);
  }
  // drop the first (cold) round
  figures.attestOneValidatorMs = median(single.slice(1));
  figures.attestQuorumRoundMs = median(rounds.slice(1));
  figures.attestHandlingPerValidatorMs = median(handling.slice(7));
  figures.quorumVerify7SigsMs = median(verify.slice(1));
  figures.observeQuorumRoundMs = median(observe.slice(1));
} finally {
  await d.stop();
}
for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(32)} ${v.toFixed(1)}`);
console.log(`BLS engine: ${blsEngine()}`);
console.log(
  JSON.stringify({ bench: 'validators', blsEngine: blsEngine(), ...Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v * 10) / 10])) }),
);
void hexToBytes;
