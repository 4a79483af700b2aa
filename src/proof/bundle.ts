/**
 * The proof bundle of one intent: everything needed to check its proof cycle offline, read from the ledger and
 * the chains by reference (the CycleRecord's identifiers), never from the record's own claims alone.
 * Verified by ./verify.ts.
 *
 * Encoding: canonical JSON (formulas.canonicalJson). Version 2 (written since it replaced version 1; version 1
 * bundles are still read): counts, indexes, versions, thresholds, block numbers and gas as JSON numbers, integers
 * that may exceed 2^53 as decimal strings, ledger hashes as 64 lowercase hex without 0x, EVM bytes 0x + lowercase
 * hex (the schema section below lists the differences from version 1). Two kinds of objects are the ledger's JSON because accumulate.js re-hashes them: the Accumulate transaction
 * (`ledger.transaction`, `…result.transaction`) and the Accumulate signature (`ledger.signatures`), each written in
 * accumulate.js's form of what it decodes to (accumulateTransactionJson / accumulateSignatureJson), which hashes
 * the same. The exact shape (keys, types, hex forms) is schemaOf below, per version; the types are inferred from it.
 *
 *   bundle_hash = 0x SHA-256(canonicalJson(bundle without bundle_hash))
 *
 * Every EVM transaction in the bundle (createAnchor, executeComprehensiveProof, each leg's execution) is a
 * ProvenEvmTx: block header (re-hashes to the block hash), raw transaction + transactions-trie proof, receipt
 * (consensus encoding) + receipts-trie proof, and the previous receipt when the index is > 0 (gas used).
 * A leg's expected state is proven with eth_getProof at the execution block (the RPC must still serve that block's
 * state: assemble soon after execution, or against an archive node).
 *
 * Top level: { version, intent, ledger, chains[], failed_legs[], bundle_hash }; see ProofBundle.
 */
import { core } from 'accumulate.js';
import { getAddress, sha256, stringToBytes, type Address, type Hex } from 'viem';
import { z } from 'zod';
import { canonicalJson, compareCodePoints } from '../chain/formulas.js';

/** The version assembleBundle writes. */
export const BUNDLE_VERSION = 'pgw-proof-bundle/2';
/** The first version, handed out before 2: still read (verified, and served as stored), never written. */
export const BUNDLE_VERSION_1 = 'pgw-proof-bundle/1';
/** The versions the verifier reads. */
export const BUNDLE_VERSIONS: readonly string[] = [BUNDLE_VERSION_1, BUNDLE_VERSION];

// ------------------------------------------------------------------------------------------------ schema

/*
 * The bundle's shape, in one place per version: the types below are inferred from version 2's, assembleBundle
 * checks its own output against it and the verifier's first check (encoding.schema) refuses any bundle that is not
 * of its version's schema. Every object has exactly the keys the builder writes (optional ones only where it may
 * leave them out), every value the type it writes, every byte string in the one form it writes (fixed lengths for
 * hashes, keys, signatures and blooms; addresses of the intent and the deployment EIP-55; the block's miner
 * lowercase, as the header carries it; the bundle's own Accumulate URLs lowercase). Every list has one order and no
 * repeats: ledger.signatures ascending by their canonical JSON, chains by chain name, a chain's legs by leaf index,
 * failed_legs by leg_id, key_page.key_hashes and key_page.delegates ascending (code points, as canonicalJson
 * orders keys); where order carries meaning (proof nodes, the intent's and the record's parts, signers by index)
 * the checks of that content fix it. Content that proves nothing therefore cannot ride along re-sealed in a key of
 * its own, nor can the same content be written in another order or case (values the builder states and the
 * verifier cannot re-derive, e.g. the receipts' local_block_time or the key page beyond its signers, are still
 * free). The two ledger objects kept as the ledger's JSON must be exactly accumulate.js's form of what they decode
 * to (accumulateTransactionJson, accumulateSignatureJson): an unknown key would not be hashed; the URLs inside
 * them stay as the ledger holds them (they are hashed).
 *
 * The versions differ only in the forms of some values (docs/api-conventions.md):
 *   version 2  counts, indexes, versions, thresholds, block numbers, gas and timestamps are JSON numbers (safe
 *              integers); values that may exceed 2^53 (wei amounts, powers, bitmaps, difficulty) decimal strings;
 *              ledger hashes (the ledger transactions' hashes, their receipts, the key page's key hashes) 64
 *              lowercase hex without 0x; EVM values 0x + lowercase hex; a chain is `chain` + `evm_chain_id`, and
 *              the ledger transaction hash its anchor commits is the anchor's `tx_hash`
 *   version 1  every integer a decimal string, every hash 0x + lowercase hex, a chain's `chain_id` a decimal
 *              string, the anchor's ledger transaction hash `ledger_tx_hash`
 * upgradeBundle (./bundle-v1.ts) reads a version 1 bundle in version 2's form (the verifier's checks and the proof
 * artifact read that form only).
 */

const lowerHex = (bytes: number | undefined, what: string) =>
  z
    .string()
    .regex(
      bytes === undefined ? /^0x(?:[0-9a-f]{2})*$/ : new RegExp(`^0x[0-9a-f]{${bytes * 2}}$`),
      `must be ${what} (0x + lowercase hex)`,
    ) as unknown as z.ZodType<Hex>;
/** 0x + lowercase hex of any byte length (also empty) */
const bytesHex = lowerHex(undefined, 'bytes');
/** 0x + lowercase hex of at least one byte: RLP items, trie nodes, raw transactions */
const rlpHex = z.string().regex(/^0x(?:[0-9a-f]{2})+$/, 'must be non-empty bytes (0x + lowercase hex)') as unknown as z.ZodType<Hex>;
const hash32 = lowerHex(32, 'a 32-byte hash');
const blsPublicKey = lowerHex(256, 'a 256-byte G2 public key (EIP-2537)');
const blsSignature = lowerHex(128, 'a 128-byte G1 signature (EIP-2537)');
/** an address as the builder writes those of the deployment and the intent: its EIP-55 checksum */
const checksumAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 20-byte 0x address')
  .refine((v) => !/^0x[0-9a-fA-F]{40}$/.test(v) || getAddress(v) === v, 'must be written as its EIP-55 checksum') as unknown as z.ZodType<Address>;
/** an unsigned integer as a decimal string, without leading zeros */
const uintString = z.string().regex(/^(0|[1-9][0-9]*)$/, 'must be a decimal string');
/** version 2: an unsigned integer as a JSON number (a safe integer) */
const uintNumber = z.number().int('must be a whole number (a safe integer)').nonnegative('must not be negative');
/** version 2: a ledger hash, 64 lowercase hex characters without 0x */
const ledgerHash = z.string().regex(/^[0-9a-f]{64}$/, 'must be a ledger hash (64 lowercase hex characters, no 0x)');
/**
 * An Accumulate URL of the bundle's own fields (not those inside the ledger's JSON, which are hashed as the ledger
 * holds them): acc://… in lowercase, as the builder writes it. Accumulate URLs are case-insensitive (the verifier
 * compares them so with the hashed JSON), so the case is fixed here to give them one form.
 */
const accUrl = z
  .string()
  .regex(/^acc:\/\/\S+$/, 'must be an acc:// URL')
  .refine((v) => v === v.toLowerCase(), 'must be written in lowercase, as the builder writes Accumulate URLs (they are case-insensitive)');

/**
 * A list the builder writes in one order: strictly ascending by `key` (code points), so neither reordered nor
 * holding an item twice. The problem is reported at the first item out of order.
 */
function sortedList<T extends z.ZodType>(item: T, key: (v: z.infer<T>) => string, order: string) {
  const keyOf = (v: z.infer<T>): string | undefined => {
    try {
      const k = key(v);
      return typeof k === 'string' ? k : undefined;
    } catch {
      return undefined; // an item not of its shape: reported by the item's own schema
    }
  };
  return z.array(item).superRefine((list, ctx) => {
    for (let i = 1; i < list.length; i++) {
      const a = keyOf(list[i - 1]);
      const b = keyOf(list[i]);
      if (a === undefined || b === undefined) continue;
      const d = compareCodePoints(a, b);
      if (d < 0) continue;
      ctx.addIssue({
        code: 'custom',
        path: [i],
        message: d === 0 ? `repeats item ${i - 1} (${order}, each once)` : `is not in the builder's order (${order}): it comes before item ${i - 1}`,
      });
      return;
    }
  });
}

/** An unsigned integer of either version's form (number or decimal string), undefined for anything else. */
function uintOf(v: unknown): bigint | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : undefined;
  return typeof v === 'string' && /^(0|[1-9][0-9]*)$/.test(v) ? BigInt(v) : undefined;
}

/** An Accumulate transaction JSON: exactly accumulateTransactionJson of itself. */
const accumulateTransaction = z.unknown().superRefine((v, ctx) => sameJson(v, accumulateTransactionJson, 'the Accumulate transaction', ctx));
/** An Accumulate signature JSON: exactly accumulateSignatureJson of itself. */
const accumulateSignature = z.unknown().superRefine((v, ctx) => sameJson(v, accumulateSignatureJson, 'the Accumulate signature', ctx));

/** Header integer fields that are JSON numbers in version 2 (block number, gas, time); the others may exceed 2^53. */
export const HEADER_NUMBER_FIELDS = ['number', 'gasLimit', 'gasUsed', 'timestamp', 'blobGasUsed', 'excessBlobGas'] as const;
/** Header fields that are integers (numbers or decimal strings in the bundle, hex quantities over JSON-RPC). */
export const HEADER_INT_FIELDS = ['difficulty', 'number', 'gasLimit', 'gasUsed', 'timestamp', 'baseFeePerGas', 'blobGasUsed', 'excessBlobGas'] as const;

/** The EVM evidence of one version: `n` is the form of its small integers (block number, gas, time, indexes). */
function evmSchemaOf<N extends z.ZodType>(n: N) {
  /** Block header with integer fields as numbers (block number, gas, time) or decimal strings (RawBlock without the transaction list). */
  const blockHeader = z.strictObject({
    hash: hash32,
    parentHash: hash32,
    sha3Uncles: hash32,
    miner: lowerHex(20, 'a 20-byte address'),
    stateRoot: hash32,
    transactionsRoot: hash32,
    receiptsRoot: hash32,
    logsBloom: lowerHex(256, 'a 256-byte bloom'),
    difficulty: uintString,
    number: n,
    gasLimit: n,
    gasUsed: n,
    timestamp: n,
    extraData: bytesHex,
    mixHash: hash32,
    nonce: lowerHex(8, 'an 8-byte nonce'),
    baseFeePerGas: uintString.optional(),
    withdrawalsRoot: hash32.optional(),
    blobGasUsed: n.optional(),
    excessBlobGas: n.optional(),
    parentBeaconBlockRoot: hash32.optional(),
    requestsHash: hash32.optional(),
  });
  const provenEvmTx = z.strictObject({
    tx_hash: hash32,
    block: blockHeader,
    tx_index: n,
    /** EIP-2718 encoding; keccak256(raw) = tx_hash */
    raw: rlpHex,
    /** transactions-trie nodes from transactionsRoot to the transaction, exactly the path */
    tx_proof: z.array(rlpHex),
    /** consensus encoding of the receipt (the receipts-trie value) */
    receipt: rlpHex,
    receipt_proof: z.array(rlpHex),
    /** the receipt at tx_index - 1 (its cumulative gas gives this transaction's gas used); absent at index 0 */
    prev_receipt: z.strictObject({ receipt: rlpHex, proof: z.array(rlpHex) }).optional(),
  });
  const stateProof = z.strictObject({
    account: checksumAddress,
    account_proof: z.array(rlpHex),
    slots: z.array(z.strictObject({ slot: hash32, value: hash32, proof: z.array(rlpHex) })),
  });
  return { blockHeader, provenEvmTx, stateProof };
}

/**
 * One version's schema: `n` is the form of its small integers, `lh` of its ledger hashes, `chainId` and `anchorTx`
 * the keys naming a chain's EVM chain id and the ledger transaction hash its anchor commits.
 */
function schemaOf<N extends z.ZodType, H extends z.ZodType, C extends z.ZodRawShape, A extends z.ZodRawShape>(n: N, lh: H, chainId: C, anchorTx: A) {
  const { blockHeader, provenEvmTx, stateProof } = evmSchemaOf(n);
  /** the signer bitmap may exceed 2^53 (a bit per validator): a decimal string in both versions */
  const quorumShape = { message: hash32, aggregate_signature: blsSignature, signer_bitmap: uintString, signers: z.array(n) };
  const quorum = z.strictObject(quorumShape);
  /** a ledger (Accumulate) Merkle receipt: its hashes are ledger hashes */
  const ledgerReceipt = z.strictObject({
    account: accUrl,
    start: lh,
    anchor: lh,
    entries: z.array(z.strictObject({ hash: lh, right: z.boolean() })),
    local_block: n.optional(),
    local_block_time: z.string().optional(),
    /** set by ledger-sim: the receipt is not anchored to a real network */
    simulated: z.string().optional(),
  });
  const leg = z.strictObject({
    leg_id: z.string(),
    leaf_index: n,
    merkle_proof: z.array(hash32),
    execution: provenEvmTx,
    /**
     * The leg's expected state after execution, proven (eth_getProof) against the execution block's stateRoot:
     * per account its account proof and per slot the value and its storage proof. Empty for a leg without
     * expectedState. (The events are in the proven receipt.)
     */
    effects: z.strictObject({ state: z.array(stateProof) }),
    /** the post-execution quorum (observation) */
    observation: z.strictObject({
      ...quorumShape,
      result_hash: hash32,
      confirmations: n,
      checks: z.strictObject({ call_binding: z.string(), expected_events: n, expected_state: n }),
    }),
    /** the proof_result v2 record as written to the results account */
    result: z.strictObject({
      result_id: hash32,
      results_account: accUrl,
      tx_id: accUrl,
      tx_hash: lh,
      /** Accumulate transaction JSON (accumulateTransactionJson) */
      transaction: accumulateTransaction,
      /** the record's `key=value` parts as stored */
      parts: z.array(z.string()),
      written_by: n,
      receipt: ledgerReceipt,
    }),
  });
  const chain = z.strictObject({
    chain: z.string(),
    ...chainId,
    proof_anchor: checksumAddress,
    validator_set: z.strictObject({
      root: hash32,
      public_keys: z.array(blsPublicKey),
      /** uint256 contract values: decimal strings in both versions */
      powers: z.array(uintString),
      threshold_numerator: n,
      threshold_denominator: n,
    }),
    anchor: z.strictObject({ anchor_id: hash32, commitment_root: hash32, operation_id: hash32, ...anchorTx, leaf_count: n }),
    /**
     * A batched intent (its legs are leaves of a batch anchor, src/protocol/intent/batch.ts): the batch's id and its
     * members in batch order (operation id, ledger transaction hash), this intent being members[index]. The anchor's
     * operation id and tx_hash are the batch's (formulas.batchOperationId / batchLedgerTxHash over the members);
     * the legs' Merkle proofs lead to the batch's commitment root. Absent for a standard intent.
     */
    batch: z.strictObject({ id: z.string(), index: n, members: z.array(z.strictObject({ operation_id: hash32, tx_hash: lh })) }).optional(),
    attestation: quorum,
    create_anchor: provenEvmTx,
    prove: provenEvmTx,
    /** in ascending leaf index */
    legs: z.array(leg).superRefine((legs, ctx) => {
      for (let i = 1; i < legs.length; i++) {
        const a = uintOf((legs[i - 1] as { leaf_index?: unknown } | undefined)?.leaf_index);
        const b = uintOf((legs[i] as { leaf_index?: unknown } | undefined)?.leaf_index);
        if (a === undefined || b === undefined || a < b) continue;
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `is not in the builder's order (ascending leaf_index, each once): leaf ${b} after leaf ${a}`,
        });
        return;
      }
    }),
  });
  const bundle = z.strictObject({
    version: z.string(),
    intent: z.strictObject({
      intent_id: z.string(),
      operation_id: hash32,
      /** as the intent states it (the verifier requires exactly the adiUrl of the parts) */
      adi_url: z.string(),
      data_account: accUrl,
      /** the four WriteData parts (canonical JSON text) as stored */
      parts: z.array(z.string()),
    }),
    ledger: z.strictObject({
      tx_id: accUrl,
      tx_hash: lh,
      /** Accumulate transaction JSON (accumulateTransactionJson) */
      transaction: accumulateTransaction,
      /** Accumulate signature JSON with the signature bytes (accumulateSignatureJson), in ascending order of their canonical JSON */
      signatures: sortedList(accumulateSignature, (s) => canonicalJson(s), 'ascending canonical JSON of the signatures'),
      receipt: ledgerReceipt,
      authority: z.strictObject({ key_book: accUrl, key_page: accUrl, key_page_version: n, threshold: n, signatures: n, delegated: n }),
      /** the key page as read from the ledger when the bundle was assembled (its keys, for signer membership) */
      key_page: z.strictObject({
        url: accUrl,
        version: n,
        accept_threshold: n,
        /** the page's key hashes, ascending */
        key_hashes: sortedList(lh, (h) => h as string, 'ascending key hashes'),
        /** the page's delegate books, ascending */
        delegates: sortedList(accUrl, (u) => u, 'ascending delegate URLs'),
      }),
    }),
    /** in ascending order of chain name */
    chains: sortedList(chain, (c) => (c as { chain: string }).chain, 'ascending chain names'),
    /** legs of the intent that did not complete, in ascending leg_id: empty for a complete proof; a partial one proves the other legs */
    failed_legs: sortedList(z.strictObject({ leg_id: z.string(), chain: z.string(), reason: z.string() }), (l) => l.leg_id, 'ascending leg_id'),
    bundle_hash: hash32,
  });
  return { blockHeader, provenEvmTx, stateProof, quorum, ledgerReceipt, leg, chain, bundle };
}

const v2 = schemaOf(uintNumber, ledgerHash, { evm_chain_id: uintNumber }, { tx_hash: ledgerHash });
const v1 = schemaOf(uintString, hash32, { chain_id: uintString }, { ledger_tx_hash: hash32 });

export type BundleBlockHeader = z.infer<typeof v2.blockHeader>;
export const HEADER_FIELDS = Object.keys(v2.blockHeader.shape) as (keyof BundleBlockHeader)[];
export type ProvenEvmTx = z.infer<typeof v2.provenEvmTx>;
export type BundleStateProof = z.infer<typeof v2.stateProof>;
export type BundleQuorum = z.infer<typeof v2.quorum>;
export type BundleLedgerReceipt = z.infer<typeof v2.ledgerReceipt>;
export type BundleLeg = z.infer<typeof v2.leg>;
export type BundleChain = z.infer<typeof v2.chain>;
/** A bundle of version 2 (also the form upgradeBundle gives a version 1 bundle). */
export type ProofBundle = z.infer<typeof v2.bundle>;
/** A bundle of version 1, as handed out before version 2. */
export type ProofBundleV1 = z.infer<typeof v1.bundle>;

export type UnsealedBundle = Omit<ProofBundle, 'bundle_hash'>;

/** JSON as JSON.stringify writes it (Dates as ISO text, undefined keys dropped); throws on what JSON cannot hold. */
const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');

/**
 * The form of an Accumulate transaction JSON the bundle holds: what accumulate.js decodes it to, written back
 * (keys it does not know dropped, bytes as lowercase hex, times as ISO text). Its hash is the one accumulate.js
 * computes from the given JSON.
 */
export function accumulateTransactionJson(json: unknown): unknown {
  return asJson(new core.Transaction(json as core.TransactionArgs).asObject());
}

/** The form of an Accumulate signature JSON the bundle holds (as accumulateTransactionJson). */
export function accumulateSignatureJson(json: unknown): unknown {
  return asJson(core.Signature.fromObject(json as core.SignatureArgs).asObject());
}

type Path = (string | number)[];

/** The first place where `a` and `b` differ as JSON, with what differs there. */
function jsonDifference(a: unknown, b: unknown, path: Path = []): { path: Path; what: string } | undefined {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return { path, what: `is ${JSON.stringify(a)}, not ${JSON.stringify(b)}` };
    if (a.length !== b.length) return { path, what: `has ${a.length} items, not ${b.length}` };
    for (let i = 0; i < a.length; i++) {
      const d = jsonDifference(a[i], b[i], [...path, i]);
      if (d) return d;
    }
    return undefined;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    for (const k of Object.keys(x)) if (x[k] !== undefined && !(k in y)) return { path, what: `unknown key ${JSON.stringify(k)}` };
    for (const k of Object.keys(y)) if (x[k] === undefined) return { path, what: `missing key ${JSON.stringify(k)}` };
    for (const k of Object.keys(y)) {
      const d = jsonDifference(x[k], y[k], [...path, k]);
      if (d) return d;
    }
    return undefined;
  }
  return a === b ? undefined : { path, what: `is ${JSON.stringify(a)}, not ${JSON.stringify(b)} as accumulate.js writes it` };
}

function sameJson(v: unknown, form: (v: unknown) => unknown, what: string, ctx: z.RefinementCtx) {
  let want: unknown;
  try {
    want = form(v);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: `accumulate.js cannot read ${what}: ${(e as Error).message}` });
    return;
  }
  const d = jsonDifference(v, want);
  if (d) ctx.addIssue({ code: 'custom', path: d.path, message: d.what });
}

/** "chains[0].legs[1].execution" */
export function bundlePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path)
    out += typeof p === 'number' ? `[${p}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(String(p)) ? `${out ? '.' : ''}${String(p)}` : `[${JSON.stringify(String(p))}]`;
  return out || 'bundle';
}

/**
 * What makes `bundle` not of its version's shape (version 2's for any version but 1), one line per problem naming the path of the offending value
 * (`chains[0].legs[1].execution.block: unknown key "x"`); empty when it is of that shape.
 */
export function bundleSchemaProblems(bundle: unknown): string[] {
  // the schema of the version the bundle states (another version is refused by the verifier's bundle.version)
  const version = (bundle as { version?: unknown } | null)?.version;
  const r = (version === BUNDLE_VERSION_1 ? v1 : v2).bundle.safeParse(bundle, { reportInput: true });
  if (r.success) return [];
  return r.error.issues.map((i) => {
    const at = bundlePath(i.path);
    if (i.code === 'unrecognized_keys') return `${at}: unknown key${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    if (i.code === 'invalid_type')
      return i.input === undefined
        ? `${at}: missing (${i.expected} expected)`
        : `${at}: must be ${i.expected === 'array' ? 'an' : 'a'} ${i.expected}, got ${JSON.stringify(i.input)?.slice(0, 80)}`;
    return `${at}: ${i.message}${i.input !== undefined && typeof i.input === 'string' ? `, got ${JSON.stringify(i.input.length > 80 ? `${i.input.slice(0, 77)}...` : i.input)}` : ''}`;
  });
}

// ------------------------------------------------------------------------------------------------ hashing

/** 0x SHA-256 of the canonical JSON of the bundle without its bundle_hash. */
export function bundleHash(bundle: UnsealedBundle | ProofBundle): Hex {
  const { bundle_hash: _drop, ...body } = bundle as ProofBundle;
  return sha256(stringToBytes(canonicalJson(body)));
}

/** The bundle with its bundle_hash (re)computed. */
export function sealBundle(bundle: UnsealedBundle | ProofBundle): ProofBundle {
  const { bundle_hash: _drop, ...body } = bundle as ProofBundle;
  return { ...body, bundle_hash: bundleHash(body) };
}

/** The canonical serialization (what verifyBundle checks byte for byte). */
export function serializeBundle(bundle: ProofBundle): string {
  return canonicalJson(bundle);
}
