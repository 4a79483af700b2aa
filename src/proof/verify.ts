/**
 * Offline verifier of a proof bundle (./bundle.ts): with nothing but the bundle it re-derives every link
 * of the proof cycle with the same formulas the gateway and the validators use:
 *
 *   encoding       the bytes are canonical JSON and bundle_hash = SHA-256 of the rest; the bundle is of
 *                  bundle.ts's schema of its version (2, or 1 as handed out before it): every object exactly the
 *                  builder's keys, every value its type and form (numbers, decimal strings, ledger hashes, 0x +
 *                  lowercase hex; fixed lengths for hashes, keys, signatures), addresses as the
 *                  builder writes them, the ledger's transaction and signature JSON exactly accumulate.js's form
 *                  of what they decode to; the bundle's own Accumulate URLs lowercase; every list in the builder's
 *                  one order without repeats (signatures by canonical JSON, chains by name, a chain's legs by leaf
 *                  index, failed legs by leg_id, key hashes and delegates ascending); so content that proves
 *                  nothing cannot ride along re-sealed, nor the same content be written another way
 *   intent         parseIntentEntries accepts the 4 parts; operation id, intent id, ADI as stated
 *   ledger         the Accumulate transaction re-hashes (accumulate.js) to tx_hash; it is the intent's
 *                  WriteData (memo, double-hash entry = exactly the parts) on the identity's data account;
 *                  every signature verifies; the key page's signatures meet the stated threshold and version;
 *                  the Merkle receipt folds from tx_hash to its anchor
 *   per chain      the anchor re-planned from the intent = the stated id/root/leaf count; per-leg Merkle proofs;
 *                  the validator set root recomputes from the keys; the attestation aggregate verifies over
 *                  formulas.anchorMessage against the signers' keys, with signer power meeting the threshold;
 *                  createAnchor / executeComprehensiveProof transactions carry exactly that anchor and aggregate
 *   per leg        the execution transaction calls executeGovernanceProofDirect(target, value, data, proof) on
 *                  the identity's account with exactly the committed leg; header hash, transactions-trie and
 *                  receipts-trie proofs (every trie proof in the bundle exactly the nodes of its path); status 1; the Executed event and the expected events in the proven logs;
 *                  the expected state by storage proofs against the execution block's stateRoot;
 *                  the proof_result record recomputes (recomputeProofResult), binds to the proven execution, its
 *                  aggregate verifies, and it is the WriteData of its (re-hashed, receipted) ledger transaction
 *
 * A ledger-only proof (version pgw-ledger-receipt/1, a token transfer's) is checked by ./verify/ledger-receipt.ts:
 * the transaction, its signatures and page threshold, the receipt; `anchored` stays false (no chain).
 *
 * The encoding checks read the bundle as sent; the others read it in version 2's form (bundle.ts upgradeBundle
 * writes a version 1 bundle's values so), so one set of checks serves both versions.
 *
 * With opts.rpc (chain name -> JSON-RPC URL) it also cross-checks public chain data: the chain id, each block exists
 * with that hash at that number, the anchor is proven on chain, each leg's leaf is used.
 *
 * Offline, the bundle is checked for internal consistency down to its trust roots: the validator set (BLS keys)
 * and the block hashes. Whether those blocks are on the canonical chain is what the RPC cross-check adds (a
 * proven executeComprehensiveProof in a canonical block means the contract accepted the aggregate under its set).
 * Membership of the ledger signers' keys in their key page is attested by the validators, not re-checked here
 * (the page's key list at signing time is not part of the bundle).
 *
 * Successful BLS verifications and aggregate keys are memoized per process (pure functions; re-verifying a
 * bundle would repeat the pairings).
 */
import type { ProofBundle } from './bundle.js';
import { createChecker, type BundleCheck, type TrustedAnchors, type VerifyContext } from './verify/checks.js';
import { verifyChains } from './verify/chain.js';
import { checkEnvelope, parseInput } from './verify/input.js';
import { verifyIntentAndLedger } from './verify/ledger.js';
import { isLedgerReceiptBundle, verifyLedgerReceiptBundle } from './verify/ledger-receipt.js';
import { verifyOnChains, verifyOnLedger } from './verify/online.js';

export type { BundleCheck } from './verify/checks.js';

export interface BundleVerification {
  valid: boolean;
  /** valid, and every leg of the intent proven (a partial proof names its failed legs in failed_legs) */
  complete: boolean;
  /** every chain of the bundle was checked against a trusted ProofAnchor (opts.trust) or public RPC (opts.rpc) */
  anchored: boolean;
  checks: BundleCheck[];
}

export interface VerifyBundleOptions {
  /** chain name -> JSON-RPC URL for the public cross-checks; offline when omitted */
  rpc?: Record<string, string>;
  /**
   * the ledger network's API (v3 JSON-RPC URL): the intent's and each result's ledger transaction must be there,
   * delivered, with the bundle's hash and principal. Offline, the ledger receipts fold to an anchor the bundle
   * names itself.
   */
  ledger?: string;
  /**
   * chain name -> what the verifier trusts there (e.g. from GET /v1/chains or the deployment it knows): the
   * ProofAnchor address, and optionally the validator set root. Offline, only this ties the bundle's validator set
   * to anything outside the bundle.
   */
  trust?: TrustedAnchors;
}

/** Verifies a bundle (object, JSON text or bytes). Offline unless opts.rpc is given. Never throws for bad input. */
export async function verifyBundle(bundleOrBytes: ProofBundle | Uint8Array | string, opts: VerifyBundleOptions = {}): Promise<BundleVerification> {
  const checker = createChecker();
  const { checks, check } = checker;
  /** the bundle in version 2's form, once parsed */
  let b: ProofBundle | undefined;
  const done = (): BundleVerification => {
    const valid = checks.length > 0 && checks.every((c) => c.ok);
    const chains = Array.isArray(b?.chains) ? b.chains.map((c) => c?.chain) : [];
    const anchored = valid && chains.length > 0 && chains.every((n) => checks.some((c) => c.ok && (c.name === `trust[${n}]` || c.name === `rpc[${n}].anchor`)));
    return { valid, complete: valid && Array.isArray(b?.failed_legs) && b.failed_legs.length === 0, anchored, checks };
  };
  const sent = parseInput(bundleOrBytes, check);
  if (!sent) return done();
  // a ledger-only proof (a token transfer: the ledger's receipt, no chains) has checks of its own
  if (isLedgerReceiptBundle(sent)) {
    verifyLedgerReceiptBundle(sent as never, check);
    const valid = checks.every((c) => c.ok);
    return { valid, complete: valid, anchored: false, checks };
  }
  // the checks run in this order, each recorded under its name whether it passes or not; the envelope (schema,
  // hash, version) is of the bundle as sent, the others read it in version 2's form (a version 1 bundle upgraded)
  b = checkEnvelope(sent, check);
  const ctx: VerifyContext = { ...checker, b };
  verifyIntentAndLedger(ctx);
  verifyChains(ctx, opts.trust);
  if (opts.ledger) await verifyOnLedger(ctx, opts.ledger);
  await verifyOnChains(ctx, opts.rpc ?? {});
  return done();
}
