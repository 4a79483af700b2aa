/**
 * Proof of effect against a validator's own EVM RPC: block header re-hashed to its block hash, the receipt
 * of a transaction proven by the receipts trie against receiptsRoot, the transaction by the transactions
 * trie against transactionsRoot, and storage values by eth_getProof against stateRoot.
 */
import {
  concatHex,
  fromRlp,
  getAddress,
  hexToBigInt,
  hexToBytes,
  keccak256,
  numberToHex,
  pad,
  stringToHex,
  toRlp,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { buildTrie, EMPTY_TRIE_ROOT, rlpIndexKey, rlpInt, verifyMptProof, type Trie } from './mpt.js';
import type { ResultLog } from '../formulas.js';

/** The RPC's data does not prove what it claims (a root or hash does not match): final for this block. */
export class EffectProofError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EffectProofError';
  }
}

/**
 * The RPC did not give the data a proof needs (null, missing or incomplete: a lagging or pruning node, a load
 * balancer behind): another attempt, or another node, may have it. Never a verdict on the execution.
 */
export class EffectDataUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EffectDataUnavailable';
  }
}

type Rpc = Pick<PublicClient, 'request'>;

export interface RawBlock {
  hash: Hex;
  number: Hex;
  parentHash: Hex;
  sha3Uncles: Hex;
  miner: Hex;
  stateRoot: Hex;
  transactionsRoot: Hex;
  receiptsRoot: Hex;
  logsBloom: Hex;
  difficulty: Hex;
  gasLimit: Hex;
  gasUsed: Hex;
  timestamp: Hex;
  extraData: Hex;
  mixHash: Hex;
  nonce: Hex;
  baseFeePerGas?: Hex;
  withdrawalsRoot?: Hex;
  blobGasUsed?: Hex;
  excessBlobGas?: Hex;
  parentBeaconBlockRoot?: Hex;
  requestsHash?: Hex;
  transactions: Hex[];
}

const OPTIONAL_HEADER_FIELDS = [
  ['baseFeePerGas', true],
  ['withdrawalsRoot', false],
  ['blobGasUsed', true],
  ['excessBlobGas', true],
  ['parentBeaconBlockRoot', false],
  ['requestsHash', false],
] as const;

/** keccak256(rlp(header)) for London..Prague headers (15 base fields + the optional ones present). */
export function headerHash(b: RawBlock): Hex {
  const fields: Hex[] = [
    b.parentHash,
    b.sha3Uncles,
    b.miner,
    b.stateRoot,
    b.transactionsRoot,
    b.receiptsRoot,
    b.logsBloom,
    rlpInt(b.difficulty),
    rlpInt(b.number),
    rlpInt(b.gasLimit),
    rlpInt(b.gasUsed),
    rlpInt(b.timestamp),
    b.extraData,
    b.mixHash,
    b.nonce,
  ];
  for (const [k, isInt] of OPTIONAL_HEADER_FIELDS) {
    const v = b[k];
    if (v === undefined || v === null) break;
    fields.push(isInt ? rlpInt(v) : v);
  }
  return keccak256(toRlp(fields));
}

/** Reads a block by number or hash and checks that its header hashes to its hash. */
export async function fetchVerifiedBlock(rpc: Rpc, at: { number: bigint } | { hash: Hex }): Promise<RawBlock> {
  const b = (
    'number' in at
      ? await rpc.request({ method: 'eth_getBlockByNumber', params: [numberToHex(at.number), false] } as never)
      : await rpc.request({ method: 'eth_getBlockByHash', params: [at.hash, false] } as never)
  ) as RawBlock | null;
  if (!b) throw new EffectDataUnavailable(`block ${'number' in at ? at.number : at.hash} not found`);
  const h = headerHash(b);
  if (h.toLowerCase() !== b.hash.toLowerCase()) throw new EffectProofError(`block header does not hash to ${b.hash} (got ${h})`);
  const sync = borStateSyncTxHash(b);
  const last = b.transactions.at(-1);
  return last && last.toLowerCase() === sync ? { ...b, transactions: b.transactions.slice(0, -1) } : b;
}

/**
 * Polygon PoS (Bor) appends to a block that carries state-sync events a synthetic transaction and receipt that its
 * RPC returns but its transactions and receipts roots exclude: hash keccak256("matic-bor-receipt-" || uint64
 * number || block hash), as the Bor client computes it. It is dropped before a trie is built; on other chains no
 * transaction can have that hash, so nothing is dropped.
 */
export function borStateSyncTxHash(b: Pick<RawBlock, 'number' | 'hash'>): Hex {
  return keccak256(concatHex([stringToHex('matic-bor-receipt-'), numberToHex(hexToBigInt(b.number), { size: 8 }), b.hash])).toLowerCase() as Hex;
}

interface RawReceipt {
  transactionHash: Hex;
  transactionIndex: Hex;
  type: Hex;
  status: Hex;
  cumulativeGasUsed: Hex;
  gasUsed: Hex;
  logsBloom: Hex;
  logs: { address: Hex; topics: Hex[]; data: Hex }[];
}

export function encodeReceipt(r: Pick<RawReceipt, 'type' | 'status' | 'cumulativeGasUsed' | 'logsBloom' | 'logs'>): Hex {
  const body = toRlp([
    hexToBigInt(r.status) === 1n ? '0x01' : '0x',
    rlpInt(r.cumulativeGasUsed),
    r.logsBloom,
    r.logs.map((l) => [l.address, l.topics, l.data]),
  ] as never);
  const type = Number(hexToBigInt(r.type ?? '0x0'));
  return type === 0 ? body : concatHex([numberToHex(type, { size: 1 }), body]);
}

export interface ProvenReceipt {
  txIndex: number;
  status: number;
  cumulativeGasUsed: bigint;
  /** gas used by this transaction (cumulative minus the previous receipt's cumulative, both proven) */
  gasUsed: bigint;
  logs: ResultLog[];
  proof: Hex[];
}

/** Decodes a receipt trie value (typed or legacy). */
export function decodeReceipt(value: Hex): { status: number; cumulativeGasUsed: bigint; logs: ResultLog[] } {
  const bytes = hexToBytes(value);
  const body = bytes[0]! < 0x80 ? value.slice(0, 2) + value.slice(4) : value;
  const d = fromRlp(body as Hex, 'hex') as unknown as [Hex, Hex, Hex, [Hex, Hex[], Hex][]];
  if (!Array.isArray(d) || d.length !== 4) throw new EffectProofError('receipt is not a 4-item list');
  const status = d[0] === '0x01' ? 1 : d[0] === '0x' ? 0 : -1;
  if (status < 0) throw new EffectProofError(`receipt has a pre-Byzantium state root, not a status`);
  return {
    status,
    cumulativeGasUsed: d[1] === '0x' ? 0n : hexToBigInt(d[1]),
    logs: d[3].map(([address, topics, data]) => ({ address: getAddress(address), topics, data })),
  };
}

/**
 * The transactions and receipts tries of recent blocks, each built (and its root checked against the header)
 * once: executions that land in one block are proven from one trie, not one trie (and one fetch of every
 * transaction or receipt of the block) each. Keyed by block hash, so a reorged block is never mistaken for another.
 */
export interface BlockTrieCache {
  trie(kind: 'transactions' | 'receipts', block: RawBlock, build: () => Promise<Trie>): Promise<Trie>;
}

export function createBlockTrieCache(maxEntries = 64): BlockTrieCache {
  const tries = new Map<string, Promise<Trie>>();
  return {
    trie(kind, block, build) {
      const key = `${kind}:${block.hash.toLowerCase()}`;
      let p = tries.get(key);
      if (!p) {
        p = build();
        p.catch(() => tries.delete(key)); // a failed fetch is tried again next time
        if (tries.size >= maxEntries) tries.delete(tries.keys().next().value as string);
        tries.set(key, p);
      }
      return p;
    },
  };
}

/** No memo: every call builds its trie. */
const NO_CACHE: BlockTrieCache = { trie: (_kind, _block, build) => build() };

/**
 * Proves the receipt at `txIndex` of `block`: builds the receipts trie from all of the block's receipts,
 * requires its root to equal the (header-verified) receiptsRoot, then verifies the inclusion proof of
 * the receipt and decodes the proven bytes. Nothing returned comes from the RPC's receipt JSON directly.
 */
export async function proveReceipt(rpc: Rpc, block: RawBlock, txIndex: number, cache: BlockTrieCache = NO_CACHE): Promise<ProvenReceipt> {
  const trie = await cache.trie('receipts', block, async () => {
    const sync = borStateSyncTxHash(block);
    const receipts = ((await rpc.request({ method: 'eth_getBlockReceipts', params: [block.number] } as never)) as RawReceipt[] | null)?.filter(
      (r) => r.transactionHash?.toLowerCase() !== sync,
    );
    if (!receipts || receipts.length !== block.transactions.length) {
      throw new EffectDataUnavailable(`block receipts unavailable or incomplete (${receipts?.length ?? 'none'} for ${block.transactions.length} transactions)`);
    }
    const t = buildTrie(receipts.map((r, i) => ({ key: rlpIndexKey(i), value: encodeReceipt(r) })));
    if (t.root.toLowerCase() !== block.receiptsRoot.toLowerCase()) {
      throw new EffectProofError(`receipts trie root ${t.root} != block receiptsRoot ${block.receiptsRoot}`);
    }
    return t;
  });
  const proof = trie.proof(rlpIndexKey(txIndex));
  const value = verifyMptProof(block.receiptsRoot, rlpIndexKey(txIndex), proof);
  if (!value) throw new EffectProofError(`no receipt at index ${txIndex}`);
  const r = decodeReceipt(value);
  let prev = 0n;
  if (txIndex > 0) {
    const pv = verifyMptProof(block.receiptsRoot, rlpIndexKey(txIndex - 1), trie.proof(rlpIndexKey(txIndex - 1)));
    if (!pv) throw new EffectProofError('previous receipt missing');
    prev = decodeReceipt(pv).cumulativeGasUsed;
  }
  return { txIndex, ...r, gasUsed: r.cumulativeGasUsed - prev, proof };
}

/**
 * Binds `txHash` to its index in `block`: builds the transactions trie from the raw (EIP-2718) encodings of
 * all the block's transactions, requires root == transactionsRoot and keccak256(raw) == txHash at the index.
 */
export async function proveTransaction(
  rpc: Rpc,
  block: RawBlock,
  txHash: Hex,
  cache: BlockTrieCache = NO_CACHE,
): Promise<{ txIndex: number; raw: Hex; proof: Hex[] }> {
  const idx = block.transactions.findIndex((h) => h.toLowerCase() === txHash.toLowerCase());
  if (idx < 0) throw new EffectProofError(`transaction ${txHash} is not in block ${block.hash}`);
  const trie = await cache.trie('transactions', block, async () => {
    const raws = await Promise.all(
      block.transactions.map(async (h) => {
        const raw = (await rpc.request({ method: 'eth_getRawTransactionByHash', params: [h] } as never)) as Hex | null;
        if (!raw) throw new EffectDataUnavailable(`raw transaction ${h} unavailable`);
        if (keccak256(raw).toLowerCase() !== h.toLowerCase()) throw new EffectProofError(`raw transaction ${h} does not hash to its id`);
        return raw;
      }),
    );
    const t = buildTrie(raws.map((raw, i) => ({ key: rlpIndexKey(i), value: raw })));
    if (t.root.toLowerCase() !== block.transactionsRoot.toLowerCase()) {
      throw new EffectProofError(`transactions trie root ${t.root} != block transactionsRoot ${block.transactionsRoot}`);
    }
    return t;
  });
  const proof = trie.proof(rlpIndexKey(idx));
  const value = verifyMptProof(block.transactionsRoot, rlpIndexKey(idx), proof);
  if (!value || keccak256(value).toLowerCase() !== txHash.toLowerCase()) throw new EffectProofError('transaction inclusion proof failed');
  return { txIndex: idx, raw: value, proof };
}

interface RawAccountProof {
  address: Hex;
  accountProof: Hex[];
  balance: Hex;
  codeHash: Hex;
  nonce: Hex;
  storageHash: Hex;
  storageProof: { key: Hex; value: Hex; proof: Hex[] }[];
}

/** eth_getProof output for some slots of one account: the nodes that prove them against a block's stateRoot. */
export interface StorageProof {
  account: Address;
  accountProof: Hex[];
  /** per slot (32-byte key, in the order asked) its storage-trie proof */
  slots: { slot: Hex; proof: Hex[] }[];
}

/** Reads eth_getProof for `slots` of `account` at `blockNumber` (unverified: see verifyStorageProof). */
export async function fetchStorageProof(rpc: Rpc, p: { account: Address; slots: readonly Hex[]; blockNumber: bigint }): Promise<StorageProof> {
  const keys = p.slots.map((s) => pad(s, { size: 32 }));
  const res = (await rpc.request({ method: 'eth_getProof', params: [p.account, keys, numberToHex(p.blockNumber)] } as never)) as RawAccountProof;
  return {
    account: p.account,
    accountProof: res.accountProof,
    slots: keys.map((k, i) => {
      const sp = res.storageProof.find((x) => pad(x.key, { size: 32 }).toLowerCase() === k.toLowerCase()) ?? res.storageProof[i];
      if (!sp) throw new EffectDataUnavailable(`no storage proof for slot ${k}`);
      return { slot: k, proof: sp.proof };
    }),
  };
}

/**
 * Verifies a storage proof against `stateRoot` (account proof -> storageRoot -> storage proof per slot) and
 * returns the proven 32-byte values (absent account or slot: 0). Throws when a proof does not hash up.
 * With `exact`, every node list must be exactly its path (verifyMptProof); an absent account's slot proofs are
 * then proofs in the empty storage trie (empty lists, as eth_getProof gives them).
 */
export function verifyStorageProof(stateRoot: Hex, p: StorageProof, opts: { exact?: boolean } = {}): Hex[] {
  const acct = verifyMptProof(stateRoot, hexToBytes(keccak256(p.account)), p.accountProof, opts);
  if (!acct && !opts.exact) return p.slots.map(() => pad('0x', { size: 32 }));
  let storageRoot: Hex = EMPTY_TRIE_ROOT;
  if (acct) {
    const fields = fromRlp(acct, 'hex') as unknown as Hex[];
    if (!Array.isArray(fields) || fields.length !== 4) throw new EffectProofError('account leaf is not [nonce, balance, storageRoot, codeHash]');
    storageRoot = fields[2]!;
  }
  return p.slots.map((s) => {
    const v = verifyMptProof(storageRoot, hexToBytes(keccak256(pad(s.slot, { size: 32 }))), s.proof, opts);
    if (!v) return pad('0x', { size: 32 });
    const inner = fromRlp(v, 'hex') as unknown as Hex;
    return pad(inner === '0x' ? '0x00' : inner, { size: 32 }).toLowerCase() as Hex;
  });
}

/**
 * Storage values of `account` at `blockNumber`, each proven by eth_getProof against `stateRoot`
 * (account proof -> storageRoot -> storage proof). Absent slots are 0. Returns 32-byte hex values.
 */
export async function proveStorage(rpc: Rpc, p: { account: Address; slots: readonly Hex[]; blockNumber: bigint; stateRoot: Hex }): Promise<Hex[]> {
  return verifyStorageProof(p.stateRoot, await fetchStorageProof(rpc, p));
}
