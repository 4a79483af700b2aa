/**
 * Browser stand-in for mcl-wasm in the console bundle: src/chain/bls.ts falls back to @noble/curves when mcl does
 * not load, which keeps the bundle small and the page's policy free of WebAssembly compilation.
 */
export const BLS12_381 = 5;
export async function init(): Promise<void> {
  throw new Error('mcl-wasm is not part of the console bundle');
}
