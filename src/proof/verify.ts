/**
 * Offline verifier of a proof bundle (./bundle.ts): with nothing but the bundle it re-derives every link
 * of the proof cycle with the same formulas the gateway and the validators use:
 *
 *   encoding       the bytes are canonical JSON and bundle_hash = SHA-256 of the rest; the bundle is of
 *                  bundle.ts's schema: every object exactly the builder's keys, every value its type, every
 *                  byte string 0x + lowercase hex (fixed lengths for hashes, keys, signatures), addresses as the
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
import { core } from 'accumulate.js';
import {
  bytesToHex,
  decodeFunctionData,
  getAddress,
  hexToBytes,
  keccak256,
  numberToHex,
  parseTransaction,
  type Address,
  type Hex,
} from 'viem';
import { abstractAccountAbi, proofAnchorAbi } from '../chain/abi/index.js';
import { proofForLeg } from '../chain/account.js';
import { readAnchorState } from '../chain/anchor.js';
import { blsAggregatePublicKeys, blsVerify, signerBitmap } from '../chain/bls.js';
import { createChainClients } from '../chain/clients.js';
import { anchorMessage, canonicalJson, eventsHash, meetsThreshold, validatorSetRoot, verifyMerkleProof, type ResultLog } from '../chain/formulas.js';
import { createLedgerClient } from '../ledger/client.js';
import { publicKeyHash, transactionHash, unwrapSignature, verifySignature } from '../ledger/signing.js';
import { verifyReceipt } from '../ledger/receipt.js';
import { decodeReceipt, headerHash, verifyStorageProof, type RawBlock } from '../chain/effects/evm-proofs.js';
import { rlpIndexKey, verifyMptProof } from '../chain/effects/mpt.js';
import { expectedEventEmitted, findExecutedEvent } from '../chain/effects/events.js';
import { encodeProofResult, PROOF_RESULT_ENTRY_TYPE, PROOF_RESULT_FORMAT, PROOF_RESULT_MEMO, PROOF_RESULT_VERSION, parseProofResult, recomputeProofResult, resultIdOf, type ProofResultRecord } from '../protocol/result-record.js';
import { BUNDLE_VERSION, HEADER_INT_FIELDS, bundleHash, bundleSchemaProblems, type BundleChain, type BundleLedgerReceipt, type ProofBundle, type ProvenEvmTx } from './bundle.js';
import { INTENT_MEMO, parseIntentEntries, planIntentAnchor, type CanonicalIntent, type IntentAnchorPlan } from '../protocol/intent/index.js';

export interface BundleCheck {
  name: string;
  ok: boolean;
  detail: string;
}

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
  trust?: Record<string, { proofAnchor: string; validatorSetRoot?: string }>;
}

class CheckFailed extends Error {}

function ensure(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new CheckFailed(msg);
}

const UINT = /^(0|[1-9][0-9]*)$/;
function uint(v: unknown, field: string): bigint {
  ensure(typeof v === 'string' && UINT.test(v), `${field} must be a decimal string, got ${JSON.stringify(v)}`);
  return BigInt(v);
}
function index(v: unknown, field: string): number {
  const n = uint(v, field);
  ensure(n <= BigInt(Number.MAX_SAFE_INTEGER), `${field} is too large`);
  return Number(n);
}
const lc = (v: unknown) => String(v).toLowerCase();
const same = (a: unknown, b: unknown) => typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
function eq(actual: unknown, expected: unknown, what: string) {
  ensure(same(actual, expected), `${what}: ${String(actual)} != ${String(expected)}`);
}

/** What a proven EVM transaction establishes. */
interface ProvenFacts {
  tx: ReturnType<typeof parseTransaction>;
  logs: ResultLog[];
  gasUsed: bigint;
  txIndex: number;
  blockNumber: bigint;
}

function rawBlock(p: ProvenEvmTx): RawBlock {
  const h = p.block as unknown as Record<string, string | undefined>;
  const out: Record<string, unknown> = { transactions: [] };
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k] = (HEADER_INT_FIELDS as readonly string[]).includes(k) ? numberToHex(uint(v, `block.${k}`)) : v;
  }
  return out as unknown as RawBlock;
}

/** Trie proofs must be exactly the nodes of their path, in path order (no node that proves nothing). */
const EXACT = { exact: true } as const;

/** Header hash, transactions trie, receipts trie (+ previous receipt), status 1. Throws naming what failed. */
function checkProvenTx(p: ProvenEvmTx, what: string): ProvenFacts {
  ensure(p && typeof p === 'object' && p.block, `${what}: missing`);
  const block = rawBlock(p);
  const hh = headerHash(block);
  eq(hh, p.block.hash, `${what}: block header hash`);
  const txIndex = index(p.tx_index, `${what}.tx_index`);
  const key = rlpIndexKey(txIndex);
  const txValue = verifyMptProof(block.transactionsRoot, key, p.tx_proof, EXACT);
  ensure(txValue !== null, `${what}: transactions-trie proof shows no transaction at index ${txIndex}`);
  eq(txValue, p.raw, `${what}: transaction proven at index ${txIndex}`);
  eq(keccak256(p.raw), p.tx_hash, `${what}: keccak256(raw transaction)`);
  const rv = verifyMptProof(block.receiptsRoot, key, p.receipt_proof, EXACT);
  ensure(rv !== null, `${what}: receipts-trie proof shows no receipt at index ${txIndex}`);
  eq(rv, p.receipt, `${what}: receipt proven at index ${txIndex}`);
  const r = decodeReceipt(p.receipt);
  ensure(r.status === 1, `${what}: receipt status is ${r.status}, not 1`);
  let prevCum = 0n;
  if (txIndex > 0) {
    ensure(p.prev_receipt, `${what}: previous receipt (index ${txIndex - 1}) missing`);
    const pv = verifyMptProof(block.receiptsRoot, rlpIndexKey(txIndex - 1), p.prev_receipt.proof, EXACT);
    ensure(pv !== null, `${what}: receipts-trie proof shows no receipt at index ${txIndex - 1}`);
    eq(pv, p.prev_receipt.receipt, `${what}: previous receipt`);
    prevCum = decodeReceipt(p.prev_receipt.receipt).cumulativeGasUsed;
  } else ensure(p.prev_receipt === undefined, `${what}: previous receipt given for index 0`);
  return { tx: parseTransaction(p.raw), logs: r.logs, gasUsed: r.cumulativeGasUsed - prevCum, txIndex, blockNumber: BigInt(block.number) };
}

function checkLedgerReceipt(r: BundleLedgerReceipt, txHash: Hex, account: string, what: string): string {
  ensure(r && Array.isArray(r.entries), `${what}: missing`);
  eq(r.start, txHash, `${what}: receipt start`);
  eq(r.account, account, `${what}: receipt account`);
  ensure(verifyReceipt({ start: r.start, anchor: r.anchor, entries: r.entries }), `${what}: entries do not fold from ${r.start} to anchor ${r.anchor}`);
  return `${r.entries.length} entries fold to anchor ${r.anchor}${r.simulated ? ` (simulated: ${r.simulated})` : ''}`;
}

/** The Accumulate transaction re-hashed with accumulate.js; a WriteData double-hash entry; returns its parts as text. */
function ledgerWriteData(txJson: unknown, txHash: Hex, txId: string, what: string): { parts: string[]; memo: unknown; principal: string } {
  let h: Hex;
  try {
    h = bytesToHex(transactionHash(new core.Transaction(txJson as core.TransactionArgs)));
  } catch (e) {
    throw new CheckFailed(`${what}: accumulate.js cannot hash the transaction: ${(e as Error).message}`);
  }
  eq(h, txHash, `${what}: transaction hash`);
  const t = txJson as { header?: { principal?: string; memo?: unknown }; body?: { type?: string; entry?: { type?: string; data?: unknown[] } } };
  const principal = String(t.header?.principal ?? '');
  ensure(lc(txId) === `acc://${txHash.slice(2).toLowerCase()}@${lc(principal).replace(/^acc:\/\//, '')}`, `${what}: tx id ${txId} is not ${txHash}@${principal}`);
  ensure(t.body?.type === 'writeData', `${what}: transaction is a ${String(t.body?.type)}, not writeData`);
  ensure(t.body.entry?.type === 'doubleHash', `${what}: data entry is ${String(t.body.entry?.type)}, not doubleHash`);
  const data = t.body.entry.data;
  ensure(Array.isArray(data), `${what}: entry has no data`);
  const parts = data.map((p, i) => {
    ensure(typeof p === 'string' && /^(0x)?([0-9a-fA-F]{2})*$/.test(p), `${what}: entry part ${i} is not hex`);
    return new TextDecoder('utf-8', { fatal: true }).decode(hexToBytes(`0x${p.replace(/^0x/, '')}`));
  });
  return { parts, memo: t.header?.memo, principal };
}

/** Aggregate public keys, memoized (decoding and subgroup-checking G2 keys dominates a verification). */
const aggregates = new Map<string, Hex>();
function aggregateKey(keys: readonly Hex[]): Hex {
  const k = keys.map((x) => x.toLowerCase()).join(',');
  let agg = aggregates.get(k);
  if (!agg) {
    agg = blsAggregatePublicKeys(keys);
    if (aggregates.size >= 256) aggregates.delete(aggregates.keys().next().value as string);
    aggregates.set(k, agg);
  }
  return agg;
}

/** blsVerify with successful verifications memoized (a pure function; re-verifying a bundle repeats the pairings). */
const verifiedSigs = new Set<string>();
function blsVerified(signature: Hex, message: Hex, publicKey: Hex): boolean {
  const k = `${signature}|${message}|${publicKey}`.toLowerCase();
  if (verifiedSigs.has(k)) return true;
  if (!blsVerify(signature, message, publicKey)) return false;
  if (verifiedSigs.size >= 1024) verifiedSigs.delete(verifiedSigs.values().next().value as string);
  verifiedSigs.add(k);
  return true;
}

function quorumCheck(set: BundleChain['validator_set'], q: { message: Hex; aggregate_signature: Hex; signer_bitmap: string; signers: string[] }, what: string): string {
  const bitmap = uint(q.signer_bitmap, `${what}.signer_bitmap`);
  const signers = q.signers.map((s, i) => index(s, `${what}.signers[${i}]`));
  // one way to write a signer list: strictly ascending, as the bitmap orders them
  ensure(signers.every((x, i) => i === 0 || x > signers[i - 1]!), `${what}: signers [${signers.join(',')}] are not strictly ascending`);
  ensure(signerBitmap(signers) === bitmap, `${what}: signer bitmap ${bitmap} does not match signers [${signers.join(',')}]`);
  const powers = set.powers.map((p, i) => uint(p, `validator_set.powers[${i}]`));
  const s = { powers, thresholdNum: uint(set.threshold_numerator, 'threshold_numerator'), thresholdDen: uint(set.threshold_denominator, 'threshold_denominator') };
  ensure(meetsThreshold(s, bitmap), `${what}: signers [${signers.join(',')}] do not meet the threshold ${s.thresholdNum}/${s.thresholdDen}`);
  const keys = signers.map((i) => {
    const k = set.public_keys[i];
    ensure(k, `${what}: signer ${i} is not in the validator set`);
    return k;
  });
  ensure(blsVerified(q.aggregate_signature, q.message, aggregateKey(keys)), `${what}: aggregate signature does not verify over ${q.message} against the signers' aggregate key`);
  const signed = powers.reduce((a, p, i) => ((bitmap >> BigInt(i)) & 1n ? a + p : a), 0n);
  const total = powers.reduce((a, p) => a + p, 0n);
  return `${signers.length} signers, power ${signed}/${total} meets ${s.thresholdNum}/${s.thresholdDen}; aggregate verifies`;
}

// ------------------------------------------------------------------------------------------------ verify

function parseInput(input: unknown, check: (name: string, fn: () => string) => boolean): ProofBundle | undefined {
  let bundle: ProofBundle | undefined;
  check('encoding.canonical_json', () => {
    if (typeof input === 'string' || input instanceof Uint8Array) {
      let text: string;
      try {
        text = typeof input === 'string' ? input : new TextDecoder('utf-8', { fatal: true }).decode(input);
      } catch {
        throw new CheckFailed('bundle bytes are not UTF-8');
      }
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch (e) {
        throw new CheckFailed(`bundle is not JSON: ${(e as Error).message}`);
      }
      ensure(typeof v === 'object' && v !== null && !Array.isArray(v), 'bundle is not a JSON object');
      let canon: string;
      try {
        canon = canonicalJson(v);
      } catch (e) {
        throw new CheckFailed(`bundle is not canonical-JSON encodable: ${(e as Error).message}`);
      }
      if (canon !== text) {
        let i = 0;
        while (i < canon.length && canon[i] === text[i]) i++;
        throw new CheckFailed(`bundle bytes are not in canonical form (first difference at character ${i})`);
      }
      bundle = v as ProofBundle;
      return `${Buffer.byteLength(text)} bytes of canonical JSON`;
    }
    ensure(typeof input === 'object' && input !== null, 'bundle is not an object');
    canonicalJson(input);
    bundle = input as ProofBundle;
    return 'given as an object (canonical form computed)';
  });
  return bundle;
}

/** Verifies a bundle (object, JSON text or bytes). Offline unless opts.rpc is given. Never throws for bad input. */
export async function verifyBundle(bundleOrBytes: ProofBundle | Uint8Array | string, opts: VerifyBundleOptions = {}): Promise<BundleVerification> {
  const checks: BundleCheck[] = [];
  const check = (name: string, fn: () => string): boolean => {
    try {
      checks.push({ name, ok: true, detail: fn() });
      return true;
    } catch (e) {
      checks.push({ name, ok: false, detail: e instanceof CheckFailed ? e.message : `${(e as Error)?.name ?? 'Error'}: ${(e as Error)?.message ?? String(e)}` });
      return false;
    }
  };
  const done = (): BundleVerification => {
    const valid = checks.length > 0 && checks.every((c) => c.ok);
    const chains = Array.isArray(b?.chains) ? b.chains.map((c) => c?.chain) : [];
    const anchored = valid && chains.length > 0 && chains.every((n) => checks.some((c) => c.ok && (c.name === `trust[${n}]` || c.name === `rpc[${n}].anchor`)));
    return { valid, complete: valid && Array.isArray(b?.failed_legs) && b.failed_legs.length === 0, anchored, checks };
  };
  const b = parseInput(bundleOrBytes, check);
  if (!b) return done();
  check('encoding.schema', () => {
    const problems = bundleSchemaProblems(b);
    ensure(!problems.length, `${problems.slice(0, 8).join('; ')}${problems.length > 8 ? `; and ${problems.length - 8} more` : ''}`);
    return 'every object has exactly the keys the builder writes, every value its type and form';
  });

  check('bundle.hash', () => {
    const h = bundleHash(b);
    ensure(typeof b.bundle_hash === 'string' && b.bundle_hash === h, `bundle_hash ${String(b.bundle_hash)} != SHA-256 of the canonical bundle ${h}`);
    return h;
  });
  check('bundle.version', () => {
    ensure(b.version === BUNDLE_VERSION, `version ${JSON.stringify(b.version)} is not ${BUNDLE_VERSION}`);
    return b.version;
  });

  // ---------------------------------------------------------------------------------------- intent + ledger
  let intent: CanonicalIntent | undefined;
  check('intent.parts', () => {
    ensure(b.intent && Array.isArray(b.intent.parts), 'intent.parts missing');
    intent = parseIntentEntries(b.intent.parts);
    eq(intent.operationId, b.intent.operation_id, 'operation id');
    ensure(intent.intentId === b.intent.intent_id, `intent id ${intent.intentId} != ${b.intent.intent_id}`);
    ensure(intent.adiUrl === b.intent.adi_url, `ADI ${intent.adiUrl} != ${b.intent.adi_url}`);
    return `intent ${intent.intentId}, operation ${intent.operationId}, ${intent.legs.length} leg(s)`;
  });
  const L = b.ledger;
  let ledgerTxHashOk = false;
  check('ledger.transaction', () => {
    ensure(L, 'ledger section missing');
    const w = ledgerWriteData(L.transaction, L.tx_hash, L.tx_id, 'intent transaction');
    ledgerTxHashOk = true;
    ensure(w.memo === INTENT_MEMO, `memo ${JSON.stringify(w.memo)} is not ${INTENT_MEMO}`);
    ensure(w.parts.length === b.intent.parts.length && w.parts.every((p, i) => p === b.intent.parts[i]), 'the WriteData entry is not exactly the intent parts');
    ensure(same(w.principal, b.intent.data_account), `written to ${w.principal}, not the data account ${b.intent.data_account}`);
    const rest = lc(w.principal).startsWith(`${lc(b.intent.adi_url)}/`) ? lc(w.principal).slice(b.intent.adi_url.length + 1) : '';
    // a direct account of the identity, as the validators require (one under a sub-identity may be another party's)
    ensure(rest && !rest.includes('/'), `data account ${w.principal} is not a direct account of ${b.intent.adi_url}`);
    return `${L.tx_hash} re-hashes; WriteData of the 4 intent parts to ${w.principal}`;
  });
  let validKeys: { signer: string; publicKey: string; version: number; delegators: string[]; vote: unknown }[] = [];
  check('ledger.signatures', () => {
    ensure(ledgerTxHashOk, 'not checked: the transaction hash did not recompute');
    ensure(Array.isArray(L.signatures) && L.signatures.length > 0, 'no signatures');
    const texts = L.signatures.map((x) => canonicalJson(x));
    ensure(new Set(texts).size === texts.length, 'a signature is listed twice');
    const h = hexToBytes(L.tx_hash);
    validKeys = L.signatures.map((raw, i) => {
      let sig: core.Signature;
      try {
        sig = core.Signature.fromObject(raw as core.SignatureArgs);
      } catch (e) {
        throw new CheckFailed(`signature ${i}: cannot decode: ${(e as Error).message}`);
      }
      const v = verifySignature(sig, h);
      ensure(v.ok, `signature ${i}: ${v.ok ? '' : v.reason}`);
      const { key, delegators } = unwrapSignature(sig);
      return { signer: key.signer!.toString(), publicKey: bytesToHex(key.publicKey!), version: Number(key.signerVersion), delegators, vote: key.vote };
    });
    return `${validKeys.length} Ed25519 signature(s) verify over the transaction`;
  });
  check('ledger.authority', () => {
    const a = L.authority;
    ensure(a && intent, 'not checked: authority or intent missing');
    ensure(same(a.key_book, intent.keyBook), `key book ${a.key_book} is not the intent's ${intent.keyBook}`);
    ensure(lc(a.key_page).startsWith(`${lc(a.key_book)}/`), `key page ${a.key_page} is not a page of ${a.key_book}`);
    const threshold = uint(a.threshold, 'authority.threshold');
    const version = uint(a.key_page_version, 'authority.key_page_version');
    ensure(threshold >= 1n, 'threshold must be at least 1');
    const accept = (v: unknown) => v === undefined || v === core.VoteType.Accept;
    const direct = validKeys.filter((k) => accept(k.vote) && !k.delegators.length && same(k.signer, a.key_page));
    for (const k of direct) ensure(BigInt(k.version) === version, `signature of ${k.publicKey} is for page version ${k.version}, not ${version}`);
    const delegated = validKeys.filter((k) => accept(k.vote) && k.delegators.length === 1 && same(k.delegators[0], a.key_page));
    // a delegate book votes once, however many of its keys signed (as the ledger and the validators count it)
    const books = new Set(delegated.map((k) => lc(k.signer).replace(/\/\d+$/, ''))).size;
    const counted = new Set(direct.map((k) => k.publicKey)).size + books;
    ensure(BigInt(counted) >= threshold, `${counted} valid signature(s) from ${a.key_page}, threshold ${threshold}`);
    // the validators' count (stated) checks page membership on the ledger, so it can be lower than the bundle's
    // signatures allow, never higher
    const stated = uint(a.signatures, 'authority.signatures');
    ensure(stated >= threshold, `stated signatures ${a.signatures} below threshold ${threshold}`);
    ensure(stated <= BigInt(counted), `stated signatures ${a.signatures} exceed the ${counted} the bundle's signatures can count`);
    const statedDelegated = uint(a.delegated, 'authority.delegated');
    ensure(statedDelegated <= BigInt(books) && statedDelegated <= stated, `stated delegated votes ${a.delegated} exceed the ${books} delegate book(s) that signed`);
    return `${counted} signature(s) on ${a.key_page} v${version} meet threshold ${threshold}`;
  });
  check('ledger.key_page', () => {
    const a = L.authority;
    const p = L.key_page;
    ensure(a && p && Array.isArray(p.key_hashes) && Array.isArray(p.delegates), 'not checked: authority or key_page missing');
    ensure(same(p.url, a.key_page), `key page ${p.url} is not the authority's ${a.key_page}`);
    const version = uint(a.key_page_version, 'authority.key_page_version');
    const now = uint(p.version, 'key_page.version');
    // the page as read at assembly; if it changed after the signatures, its key list is not the one they met.
    // A page's version only grows: one read before the signatures' version is not the page they were counted on.
    ensure(now >= version, `key page read at version ${now}, before the version ${version} the signatures were counted at`);
    if (now !== version) return `page is at version ${now}, the signatures were counted at version ${version}: membership not checked offline`;
    ensure(uint(p.accept_threshold, 'key_page.accept_threshold') === uint(a.threshold, 'authority.threshold'), `page threshold ${p.accept_threshold} != stated ${a.threshold}`);
    const accept = (v: unknown) => v === undefined || v === core.VoteType.Accept;
    let direct = 0;
    let delegated = 0;
    for (const k of validKeys.filter((x) => accept(x.vote))) {
      if (!k.delegators.length && same(k.signer, a.key_page)) {
        const h = bytesToHex(publicKeyHash(hexToBytes(k.publicKey as Hex)));
        ensure(p.key_hashes.some((x) => same(x, h)), `signer key ${k.publicKey} (hash ${h}) is not a key of ${p.url} v${now}`);
        direct++;
      } else if (k.delegators.length === 1 && same(k.delegators[0], a.key_page)) {
        const book = lc(k.signer).replace(/\/\d+$/, '');
        ensure(p.delegates.some((x) => lc(x) === book), `delegate book ${book} is not listed on ${p.url} v${now}`);
        delegated++;
      }
    }
    return `${direct} signer key(s)${delegated ? ` and ${delegated} delegated signature(s)` : ''} on ${p.url} v${now} (threshold ${p.accept_threshold})`;
  });
  check('ledger.receipt', () => checkLedgerReceipt(L.receipt, L.tx_hash, b.intent.data_account, 'intent receipt'));

  // ---------------------------------------------------------------------------------------- chains
  check('chains', () => {
    ensure(Array.isArray(b.chains) && b.chains.length > 0, 'no chains');
    const names = b.chains.map((c) => c.chain);
    ensure(new Set(names).size === names.length, `a chain is listed twice: ${names.join(', ')}`);
    const legIds = b.chains.flatMap((c) => (Array.isArray(c.legs) ? c.legs.map((l) => l.leg_id) : []));
    ensure(Array.isArray(b.failed_legs), 'failed_legs missing');
    const failed = b.failed_legs.map((l) => l.leg_id);
    const all = [...legIds, ...failed];
    ensure(new Set(all).size === all.length, 'a leg is listed twice (proven or failed)');
    ensure(intent, 'not checked: the intent did not parse');
    // every leg of the intent is accounted for: proven here, or named as failed (a leg left out is not a proof)
    for (const l of intent.legs) ensure(all.includes(l.legId), `leg ${l.legId} of the intent is neither proven nor listed as failed`);
    ensure(all.length === intent.legs.length, `${all.length} legs listed for ${intent.legs.length} in the intent`);
    for (const f of b.failed_legs) {
      const chain = intent.legs.find((l) => l.legId === f.leg_id)!.chain;
      // exactly the intent's chain name (as a proven chain's name must be)
      ensure(f.chain === chain, `failed leg ${f.leg_id} chain: ${f.chain} != ${chain}`);
      ensure(typeof f.reason === 'string' && f.reason.length > 0, `failed leg ${f.leg_id} has no reason`);
    }
    const partial = failed.length ? `; PARTIAL: ${failed.length} failed (${b.failed_legs.map((f) => `${f.leg_id}: ${f.reason}`).join('; ')})` : '';
    return `${names.join(', ')}: ${legIds.length} of ${intent.legs.length} leg(s) proven (${legIds.join(', ')})${partial}`;
  });
  if (Array.isArray(b.chains)) for (const c of b.chains) if (c && typeof c === 'object') verifyChain(c);
  for (const [name, t] of Object.entries(opts.trust ?? {})) {
    check(`trust[${name}]`, () => {
      const c = Array.isArray(b.chains) ? b.chains.find((x) => x?.chain === name) : undefined;
      ensure(c, `the bundle has no chain ${name}`);
      ensure(same(c.proof_anchor, t.proofAnchor), `ProofAnchor ${c.proof_anchor} is not the trusted ${t.proofAnchor}`);
      if (t.validatorSetRoot) ensure(same(c.validator_set.root, t.validatorSetRoot), `validator set ${c.validator_set.root} is not the trusted ${t.validatorSetRoot}`);
      return `ProofAnchor ${c.proof_anchor}${t.validatorSetRoot ? ` and validator set ${c.validator_set.root}` : ''} as trusted`;
    });
  }

  function verifyChain(c: BundleChain) {
    const P = `chain[${c.chain}]`;
    let plan: IntentAnchorPlan | undefined;
    let chainId = 0n;
    check(`${P}.anchor`, () => {
      ensure(intent, 'not checked: the intent did not parse');
      chainId = uint(c.chain_id, 'chain_id');
      plan = planIntentAnchor(intent, { chainId, proofAnchor: getAddress(c.proof_anchor), ledgerTxHash: L.tx_hash });
      for (const l of plan.legs) ensure(l.chain === c.chain, `leg ${l.legId} with chain id ${chainId} names chain ${l.chain}`);
      eq(c.anchor.anchor_id, plan.anchorId, 'anchor id');
      eq(c.anchor.commitment_root, plan.commitmentRoot, 'commitment root');
      eq(c.anchor.operation_id, plan.operationId, 'operation id');
      eq(c.anchor.ledger_tx_hash, plan.ledgerTxHash, 'ledger tx hash');
      ensure(uint(c.anchor.leaf_count, 'leaf_count') === plan.leafCount, `leaf count ${c.anchor.leaf_count} != ${plan.leafCount}`);
      ensure(Array.isArray(c.legs) && c.legs.length > 0, 'no legs');
      for (const l of c.legs) {
        const i = index(l.leaf_index, `leg ${l.leg_id}.leaf_index`);
        const pl = plan.legs[i];
        ensure(pl && pl.legId === l.leg_id, `leaf ${i} of the anchor is ${pl?.legId ?? 'absent'}, not ${l.leg_id}`);
        ensure(
          verifyMerkleProof({ leaf: plan.leaves[i]!, index: i, proof: l.merkle_proof, root: plan.commitmentRoot, leafCount: Number(plan.leafCount) }),
          `leg ${l.leg_id}: merkle proof does not lead from its leaf to the commitment root`,
        );
      }
      return `anchor ${plan.anchorId} re-planned from the intent: root ${plan.commitmentRoot}, ${plan.leafCount} leaf/leaves; ${c.legs.length} leg proof(s) verify`;
    });
    check(`${P}.validator_set`, () => {
      const s = c.validator_set;
      ensure(s && Array.isArray(s.public_keys) && Array.isArray(s.powers), 'validator set missing');
      const root = validatorSetRoot({
        publicKeys: s.public_keys,
        powers: s.powers.map((p, i) => uint(p, `powers[${i}]`)),
        thresholdNum: uint(s.threshold_numerator, 'threshold_numerator'),
        thresholdDen: uint(s.threshold_denominator, 'threshold_denominator'),
      });
      eq(root, s.root, 'validator set root');
      return `${s.public_keys.length} validators, root ${root}`;
    });
    check(`${P}.attestation`, () => {
      ensure(plan, 'not checked: the anchor did not re-plan');
      const m = anchorMessage({ chainId, anchor: getAddress(c.proof_anchor), anchorId: plan.anchorId, validatorSetRoot: c.validator_set.root });
      eq(c.attestation.message, m, 'attestation message (formulas.anchorMessage)');
      return quorumCheck(c.validator_set, c.attestation, 'attestation');
    });
    check(`${P}.create_anchor`, () => {
      ensure(plan, 'not checked: the anchor did not re-plan');
      const f = checkProvenTx(c.create_anchor, 'createAnchor');
      ensure(f.tx.to && getAddress(f.tx.to) === getAddress(c.proof_anchor), `createAnchor was sent to ${f.tx.to}, not ProofAnchor ${c.proof_anchor}`);
      ensure(BigInt(f.tx.chainId ?? -1) === chainId, `createAnchor is for chain id ${f.tx.chainId}`);
      const d = decodeFunctionData({ abi: proofAnchorAbi, data: f.tx.data ?? '0x' });
      ensure(d.functionName === 'createAnchor', `transaction calls ${d.functionName}, not createAnchor`);
      const [root, op, ltx, n] = d.args as unknown as [Hex, Hex, Hex, bigint];
      eq(root, plan.commitmentRoot, 'createAnchor commitmentRoot');
      eq(op, plan.operationId, 'createAnchor operationId');
      eq(ltx, plan.ledgerTxHash, 'createAnchor ledgerTxHash');
      ensure(n === plan.leafCount, `createAnchor leafCount ${n} != ${plan.leafCount}`);
      return `${c.create_anchor.tx_hash} in block ${f.blockNumber}: header, tx and receipt proofs verify, status 1`;
    });
    check(`${P}.prove`, () => {
      ensure(plan, 'not checked: the anchor did not re-plan');
      const f = checkProvenTx(c.prove, 'executeComprehensiveProof');
      ensure(f.tx.to && getAddress(f.tx.to) === getAddress(c.proof_anchor), `executeComprehensiveProof was sent to ${f.tx.to}, not ${c.proof_anchor}`);
      ensure(BigInt(f.tx.chainId ?? -1) === chainId, `executeComprehensiveProof is for chain id ${f.tx.chainId}`);
      const d = decodeFunctionData({ abi: proofAnchorAbi, data: f.tx.data ?? '0x' });
      ensure(d.functionName === 'executeComprehensiveProof', `transaction calls ${d.functionName}, not executeComprehensiveProof`);
      const [id, bitmap, sig] = d.args as unknown as [Hex, bigint, Hex];
      eq(id, plan.anchorId, 'executeComprehensiveProof anchorId');
      ensure(bitmap === uint(c.attestation.signer_bitmap, 'signer_bitmap'), `executeComprehensiveProof bitmap ${bitmap} != attestation ${c.attestation.signer_bitmap}`);
      eq(sig, c.attestation.aggregate_signature, 'executeComprehensiveProof signature');
      return `${c.prove.tx_hash} in block ${f.blockNumber} carries the attestation aggregate, status 1`;
    });
    for (const l of c.legs ?? []) verifyLeg(c, l, P, () => plan, chainId);
  }

  function verifyLeg(c: BundleChain, l: BundleChain['legs'][number], P: string, planOf: () => IntentAnchorPlan | undefined, chainId: bigint) {
    const Q = `${P}.leg[${l.leg_id}]`;
    let facts: ProvenFacts | undefined;
    const leafIndex = (() => {
      try {
        return index(l.leaf_index, 'leaf_index');
      } catch {
        return -1;
      }
    })();
    check(`${Q}.execution_inclusion`, () => {
      facts = checkProvenTx(l.execution, 'execution');
      return `${l.execution.tx_hash} at index ${facts.txIndex} of block ${facts.blockNumber}: header hashes to ${l.execution.block.hash}; tx and receipt proofs verify; status 1`;
    });
    check(`${Q}.execution_call`, () => {
      const plan = planOf();
      ensure(plan && intent && facts, 'not checked: the anchor or the execution inclusion failed');
      const leg = plan.legs[leafIndex];
      ensure(leg, `no leaf ${l.leaf_index}`);
      const tx = facts.tx;
      ensure(tx.to && getAddress(tx.to) === getAddress(intent.account), `execution was sent to ${tx.to}, not the identity's account ${intent.account}`);
      ensure(BigInt(tx.chainId ?? -1) === chainId, `execution is for chain id ${tx.chainId}`);
      const d = decodeFunctionData({ abi: abstractAccountAbi, data: tx.data ?? '0x' });
      ensure(d.functionName === 'executeGovernanceProofDirect', `execution calls ${d.functionName}, not executeGovernanceProofDirect`);
      const [target, value, data, proof] = d.args as unknown as [Address, bigint, Hex, { commitmentRoot: Hex; operationId: Hex; ledgerTxHash: Hex; leafCount: bigint; leafIndex: bigint; deadline: bigint; gasLimit: bigint; merkleProof: readonly Hex[] }];
      ensure(getAddress(target) === getAddress(leg.target), `target ${target} is not the committed ${leg.target}`);
      ensure(value === leg.value, `value ${value} is not the committed ${leg.value}`);
      ensure(lc(data) === lc(leg.data), `calldata ${data.slice(0, 74)}… is not the committed calldata of leg ${leg.legId}`);
      const want = proofForLeg(plan, leafIndex);
      eq(proof.commitmentRoot, want.commitmentRoot, 'proof.commitmentRoot');
      eq(proof.operationId, want.operationId, 'proof.operationId');
      eq(proof.ledgerTxHash, want.ledgerTxHash, 'proof.ledgerTxHash');
      ensure(proof.leafCount === want.leafCount && proof.leafIndex === want.leafIndex, `proof is for leaf ${proof.leafIndex}/${proof.leafCount}, not ${want.leafIndex}/${want.leafCount}`);
      ensure(proof.deadline === want.deadline, `proof.deadline ${proof.deadline} is not the intent's expires_at ${want.deadline}`);
      ensure(proof.gasLimit === want.gasLimit, `proof.gasLimit ${proof.gasLimit} is not the leg's gas limit ${want.gasLimit}`);
      ensure(proof.merkleProof.length === want.merkleProof.length && proof.merkleProof.every((h, i) => same(h, want.merkleProof[i])), 'proof.merkleProof is not the anchor proof of the leaf');
      ensure(proof.merkleProof.every((h, i) => same(h, l.merkle_proof[i])) && proof.merkleProof.length === l.merkle_proof.length, 'bundle merkle_proof differs from the one executed');
      return `executeGovernanceProofDirect(${target}, ${value}, ${data.length / 2 - 1} bytes) on ${intent.account} = committed leg ${leg.legId}`;
    });
    check(`${Q}.effects`, () => {
      const plan = planOf();
      ensure(plan && intent && facts, 'not checked: the anchor or the execution inclusion failed');
      const leg = plan.legs[leafIndex]!;
      ensure(findExecutedEvent(facts.logs, { account: intent.account, anchorId: plan.anchorId, leafIndex: BigInt(leafIndex), executionCommitment: leg.executionCommitment }), `no Executed(${plan.anchorId}, ${leafIndex}, ${leg.executionCommitment}) event from ${intent.account} in the proven receipt`);
      for (const ev of leg.expectedEvents) ensure(expectedEventEmitted(facts.logs, ev), `expected event ${ev.topic0} from ${ev.contract} not in the proven logs`);
      return `Executed event and ${leg.expectedEvents.length} expected event(s) in ${facts.logs.length} proven log(s); gas used ${facts.gasUsed}`;
    });
    check(`${Q}.observation_checks`, () => {
      // what the validators report having checked, as they derive it (src/validator/node.ts): the execution is a
      // direct call of the account (execution_call), so its binding is by calldata; one count per expectation
      const plan = planOf();
      ensure(plan, 'not checked: the anchor failed');
      const leg = plan.legs[leafIndex];
      ensure(leg, `no leaf ${l.leaf_index}`);
      const got = l.observation?.checks;
      const want = { call_binding: 'calldata', expected_events: String(leg.expectedEvents.length), expected_state: String(leg.expectedState.length) };
      ensure(got && canonicalJson(got) === canonicalJson(want), `observation checks ${canonicalJson(got ?? null)} are not what the leg gives ${canonicalJson(want)}`);
      return `call bound by calldata; ${want.expected_events} expected event(s), ${want.expected_state} expected state item(s)`;
    });
    check(`${Q}.expected_state`, () => {
      const plan = planOf();
      ensure(plan && facts, 'not checked: the anchor or the execution inclusion failed');
      const leg = plan.legs[leafIndex]!;
      ensure(l.effects && Array.isArray(l.effects.state), 'effects.state missing');
      // one way to lay the proofs out, the builder's: per account in order of first mention, its slots in order
      const layout = new Map<string, string[]>();
      for (const e of leg.expectedState) layout.set(getAddress(e.account), [...(layout.get(getAddress(e.account)) ?? []), lc(e.slot)]);
      const want = [...layout].map(([a, slots]) => `${a}[${slots.join(',')}]`).join(' ');
      const got = l.effects.state.map((a) => `${a.account}[${Array.isArray(a.slots) ? a.slots.map((x) => x.slot).join(',') : ''}]`).join(' ');
      ensure(got === want, `effects.state is not the expected state laid out as the builder writes it (per account in order of first mention, its slots in order): ${got || '(none)'} != ${want || '(none)'}`);
      const proven = new Map<string, Hex>();
      for (const a of l.effects.state) {
        const values = verifyStorageProof(l.execution.block.stateRoot, {
          account: getAddress(a.account),
          accountProof: a.account_proof,
          slots: a.slots.map((x) => ({ slot: x.slot, proof: x.proof })),
        }, EXACT);
        a.slots.forEach((x, i) => {
          eq(values[i], x.value, `state ${a.account} slot ${x.slot}: proven value`);
          proven.set(`${lc(getAddress(a.account))}|${lc(x.slot)}`, values[i]!);
        });
      }
      ensure(proven.size === leg.expectedState.length, `${proven.size} proven slot(s) for ${leg.expectedState.length} expected`);
      for (const e of leg.expectedState) {
        const v = proven.get(`${lc(getAddress(e.account))}|${lc(e.slot)}`);
        ensure(v !== undefined, `expected state ${e.account} slot ${e.slot} is not proven`);
        eq(v, e.value, `state ${e.account} slot ${e.slot} after execution (expected)`);
      }
      return `${leg.expectedState.length} expected slot(s) proven against stateRoot ${l.execution.block.stateRoot}`;
    });
    let record: ProofResultRecord | undefined;
    check(`${Q}.proof_result`, () => {
      const plan = planOf();
      ensure(plan && intent && facts, 'not checked: the anchor or the execution inclusion failed');
      const leg = plan.legs[leafIndex]!;
      const r = l.result;
      ensure(r && Array.isArray(r.parts), 'result missing');
      record = parseProofResult(r.parts);
      ensure(record, 'result parts are not a proof_result v2 record');
      // exactly the record's encoding: no extra, repeated or reordered line
      const encoded = encodeProofResult(record);
      ensure(encoded.length === r.parts.length && encoded.every((p, j) => p === r.parts[j]), 'result parts are not exactly the encoding of the record they parse to');
      const re = recomputeProofResult(record);
      eq(re.resultHash, record.result_hash, 'record result_hash (recomputed)');
      eq(re.resultHash, l.observation.result_hash, 'observation result hash');
      eq(re.message, record.attestation_message_hash, 'record attestation_message_hash (recomputed)');
      eq(re.message, l.observation.message, 'observation message');
      const h = l.execution.block;
      const bind: [keyof ProofResultRecord, string][] = [
        ['result_id', resultIdOf(plan.anchorId, leafIndex)],
        ['intent_id', intent.intentId],
        ['intent_tx_id', L.tx_id],
        ['intent_tx_hash', L.tx_hash],
        ['operation_id', plan.operationId],
        ['anchor_contract', c.proof_anchor],
        ['anchor_id', plan.anchorId],
        ['leaf_index', String(leafIndex)],
        ['leg_id', leg.legId],
        ['execution_commitment', leg.executionCommitment],
        ['chain_name', c.chain],
        ['chain_id', chainId.toString()],
        ['tx_hash', l.execution.tx_hash],
        ['block_number', h.number],
        ['block_hash', h.hash],
        ['block_timestamp', h.timestamp],
        ['tx_index', String(facts.txIndex)],
        ['success', 'true'],
        ['gas_used', facts.gasUsed.toString()],
        ['events_hash', eventsHash(facts.logs)],
        ['event_count', String(facts.logs.length)],
        ['expected_events_verified', String(leg.expectedEvents.length)],
        ['expected_state_verified', String(leg.expectedState.length)],
        ['transactions_root', h.transactionsRoot],
        ['receipts_root', h.receiptsRoot],
        ['state_root', h.stateRoot],
        ['attestation_hash', c.attestation.message],
        ['validator_set_root', c.validator_set.root],
        ['validator_bitfield', l.observation.signer_bitmap],
        ['validator_count', String(l.observation.signers.length)],
        ['signed_power', String(c.validator_set.powers.reduce((a, p, j) => ((BigInt(l.observation.signer_bitmap) >> BigInt(j)) & 1n ? a + BigInt(p) : a), 0n))],
        ['total_power', String(c.validator_set.powers.reduce((a, p) => a + BigInt(p), 0n))],
        ['threshold_met', 'true'],
        ['entry_type', PROOF_RESULT_ENTRY_TYPE],
        ['version', PROOF_RESULT_VERSION],
        ['format', PROOF_RESULT_FORMAT],
        ['threshold_numerator', c.validator_set.threshold_numerator],
        ['threshold_denominator', c.validator_set.threshold_denominator],
        ['aggregate_signature', l.observation.aggregate_signature],
        ['result_id', r.result_id],
        ['written_by', r.written_by],
      ];
      for (const [k, v] of bind) eq(record[k], v, `record ${k}`);
      // the depth the writer required (its chain setting, signed by nobody) was met by what was observed, which
      // may be deeper: a validator counts the blocks it saw
      ensure(
        uint(record.confirmation_blocks, 'record confirmation_blocks') <= uint(l.observation.confirmations, 'observation.confirmations'),
        `record confirmation_blocks ${record.confirmation_blocks} exceeds the ${l.observation.confirmations} confirmations observed`,
      );
      return `record ${record.result_id} recomputes to result hash ${re.resultHash} and binds to the proven execution`;
    });
    check(`${Q}.result_signature`, () => quorumCheck(c.validator_set, l.observation, 'observation'));
    check(`${Q}.result_ledger_entry`, () => {
      const r = l.result;
      ensure(r, 'result missing');
      const w = ledgerWriteData(r.transaction, r.tx_hash, r.tx_id, 'proof_result transaction');
      ensure(w.memo === PROOF_RESULT_MEMO, `memo ${JSON.stringify(w.memo)} is not ${PROOF_RESULT_MEMO}`);
      ensure(same(w.principal, r.results_account), `written to ${w.principal}, not ${r.results_account}`);
      ensure(w.parts.length === r.parts.length && w.parts.every((p, i) => p === r.parts[i]), 'the WriteData entry is not exactly the record parts');
      return `${r.tx_hash} re-hashes; ${checkLedgerReceipt(r.receipt, r.tx_hash, r.results_account, 'result receipt')}`;
    });
  }

  // ---------------------------------------------------------------------------------------- public RPC
  if (opts.ledger) {
    const ledger = createLedgerClient({ url: opts.ledger, timeoutMs: 10_000 });
    const delivered = async (txId: string, txHash: string, principal: string, what: string) => {
      const st = await ledger.getTransaction(txId);
      ensure(st.delivered, `${what} ${txId} is ${st.status} on the ledger, not delivered`);
      eq(`0x${st.txHash.replace(/^0x/, '')}`, `0x${txHash.replace(/^0x/, '')}`, `${what} hash on the ledger`);
      ensure(same(st.principal, principal), `${what} was delivered to ${st.principal}, not ${principal}`);
      return `${what} ${txId} delivered to ${st.principal}`;
    };
    await asyncCheck('ledger_rpc.intent', () => delivered(L.tx_id, L.tx_hash, b.intent.data_account, 'intent transaction'));
    for (const c of Array.isArray(b.chains) ? b.chains : []) {
      for (const l of Array.isArray(c?.legs) ? c.legs : []) {
        await asyncCheck(`ledger_rpc.result[${c.chain}.${l.leg_id}]`, () => delivered(l.result.tx_id, l.result.tx_hash, l.result.results_account, 'proof_result transaction'));
      }
    }
  }
  for (const [name, url] of Object.entries(opts.rpc ?? {})) {
    const c = Array.isArray(b.chains) ? b.chains.find((x) => x.chain === name) : undefined;
    const R = `rpc[${name}]`;
    if (!c) {
      checks.push({ name: R, ok: false, detail: `the bundle has no chain ${name}` });
      continue;
    }
    const clients = createChainClients({ rpcUrl: url, chainId: Number(c.chain_id), name });
    await asyncCheck(`${R}.chain_id`, async () => {
      const id = await clients.public.getChainId();
      ensure(String(id) === c.chain_id, `RPC serves chain id ${id}, the bundle says ${c.chain_id}`);
      return `chain id ${id}`;
    });
    await asyncCheck(`${R}.blocks`, async () => {
      const txs = [c.create_anchor, c.prove, ...c.legs.map((l) => l.execution)];
      for (const t of txs) {
        const blk = (await clients.public.request({ method: 'eth_getBlockByNumber', params: [numberToHex(uint(t.block.number, 'block.number')), false] } as never)) as { hash?: Hex } | null;
        ensure(blk?.hash, `block ${t.block.number} not found`);
        eq(blk.hash, t.block.hash, `block ${t.block.number} hash on chain`);
      }
      return `${txs.length} block(s) found with the bundle's hashes`;
    });
    await asyncCheck(`${R}.anchor`, async () => {
      const s = await readAnchorState(clients, getAddress(c.proof_anchor), c.anchor.anchor_id);
      ensure(s.status === 'proven', `anchor ${c.anchor.anchor_id} is ${s.status} on chain, not proven`);
      ensure(s.leafCount.toString() === c.anchor.leaf_count, `anchor leaf count on chain ${s.leafCount} != ${c.anchor.leaf_count}`);
      for (const l of c.legs) {
        const i = index(l.leaf_index, 'leaf_index');
        ensure((s.usedBitmap >> BigInt(i)) & 1n, `leaf ${i} (${l.leg_id}) is not used on chain`);
      }
      return `anchor proven; leaves ${c.legs.map((l) => l.leaf_index).join(', ')} used`;
    });
  }

  async function asyncCheck(name: string, fn: () => Promise<string>) {
    try {
      checks.push({ name, ok: true, detail: await fn() });
    } catch (e) {
      checks.push({ name, ok: false, detail: e instanceof CheckFailed ? e.message : `${(e as Error).message.split('\n')[0]}` });
    }
  }

  return done();
}
