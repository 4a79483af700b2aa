/**
 * The ledger simulator's Merkle chains (src/ledger-sim/merkle.ts): time of one step as the simulator does it
 * (append a leaf to the state array, anchor the chain, then a receipt for an entry) at several chain lengths, and
 * the same receipt made from a cold chain (nothing hashed yet). A step's time should not grow with the length.
 *
 *   npx tsx bench/ledger-sim-merkle.ts      # table + JSON on stdout
 */
import { createHash } from 'node:crypto';
import { MerkleChain } from '../src/ledger-sim/merkle.js';

const leaf = (i: number) => createHash('sha256').update(`leaf-${i}`).digest('hex');
const STEPS = 200;

const rows = [1_000, 5_000, 20_000, 100_000].map((n) => {
  const leaves = Array.from({ length: n - STEPS }, (_, i) => leaf(i));
  const chain = MerkleChain.of(leaves);
  chain.anchor(); // what the simulator has already hashed by the time the chain is this long
  const t0 = performance.now();
  for (let k = 0; k < STEPS; k++) {
    leaves.push(leaf(n - STEPS + k));
    chain.anchor();
    chain.receipt(chain.indexOf(leaves[(k * 7919) % leaves.length]!));
  }
  const stepMs = (performance.now() - t0) / STEPS;
  const t1 = performance.now();
  new MerkleChain([...leaves]).receipt(n >> 1);
  const coldMs = performance.now() - t1;
  return { leaves: n, step_ms: Number(stepMs.toFixed(3)), cold_receipt_ms: Number(coldMs.toFixed(1)) };
});

console.log('Ledger simulator Merkle chain: append + anchor + receipt per step, and a receipt from a cold chain');
console.table(rows);
console.log(JSON.stringify({ bench: 'ledger-sim-merkle', steps: STEPS, results: rows }));
