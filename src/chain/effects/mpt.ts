/**
 * A small Merkle-Patricia trie (Ethereum "modified MPT") over viem's RLP: build a trie from key/value pairs
 * (receipts and transactions tries of a block), produce an inclusion proof, and verify proofs (ours and
 * eth_getProof's). No key hashing here: callers pass the trie key bytes (rlp(index) for block tries,
 * keccak256(address) / keccak256(slot) for state and storage tries).
 */
import { bytesToHex, fromRlp, hexToBytes, keccak256, toRlp, type Hex } from 'viem';

type RlpItem = Hex | RlpItem[];

export class MptProofError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MptProofError';
  }
}

function toNibbles(key: Uint8Array): number[] {
  const out: number[] = [];
  for (const b of key) out.push(b >> 4, b & 15);
  return out;
}

/** Hex-prefix encoding of a nibble path (yellow paper, appendix C). */
function hexPrefix(nibbles: readonly number[], leaf: boolean): Hex {
  const flag = (leaf ? 2 : 0) + (nibbles.length % 2);
  const all = nibbles.length % 2 ? [flag, ...nibbles] : [flag, 0, ...nibbles];
  const bytes = new Uint8Array(all.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (all[2 * i]! << 4) | all[2 * i + 1]!;
  return bytesToHex(bytes);
}

function decodeHexPrefix(h: Hex): { nibbles: number[]; leaf: boolean } {
  const n = toNibbles(hexToBytes(h));
  if (!n.length) throw new MptProofError('empty hex-prefix path');
  const flag = n[0]!;
  if (flag > 3) throw new MptProofError('bad hex-prefix flag');
  return { leaf: flag >= 2, nibbles: flag % 2 ? n.slice(1) : n.slice(2) };
}

interface Built {
  item: RlpItem;
  encoded: Hex;
}

/** Reference to a child: the node itself if its RLP is shorter than 32 bytes, else its hash. */
function ref(b: Built): RlpItem {
  return hexToBytes(b.encoded).length < 32 ? b.item : keccak256(b.encoded);
}

function node(item: RlpItem): Built {
  return { item, encoded: toRlp(item as never) };
}

type Entry = { nibbles: number[]; value: Hex };

/**
 * The node of the entries that share their first `depth` nibbles. That prefix names the node, so `memo` (one per
 * trie) keeps each node built once: proofs walk the nodes the root was built from instead of rebuilding them.
 */
function build(entries: Entry[], depth: number, memo: Map<string, Built>): Built {
  const name = entries[0]!.nibbles
    .slice(0, depth)
    .map((n) => n.toString(16))
    .join('');
  const known = memo.get(name);
  if (known) return known;
  const built = buildNode(entries, depth, memo);
  memo.set(name, built);
  return built;
}

function buildNode(entries: Entry[], depth: number, memo: Map<string, Built>): Built {
  if (entries.length === 1) {
    const e = entries[0]!;
    return node([hexPrefix(e.nibbles.slice(depth), true), e.value]);
  }
  // common prefix beyond depth
  let cp = 0;
  for (;;) {
    const n = entries[0]!.nibbles[depth + cp];
    if (n === undefined || !entries.every((e) => e.nibbles[depth + cp] === n)) break;
    cp++;
  }
  if (cp > 0) {
    const child = build(entries, depth + cp, memo);
    return node([hexPrefix(entries[0]!.nibbles.slice(depth, depth + cp), false), ref(child)]);
  }
  const branch: RlpItem[] = Array.from({ length: 17 }, () => '0x' as Hex);
  for (let k = 0; k < 16; k++) {
    const group = entries.filter((e) => e.nibbles[depth] === k);
    if (group.length) branch[k] = ref(build(group, depth + 1, memo));
  }
  const terminal = entries.find((e) => e.nibbles.length === depth);
  if (terminal) branch[16] = terminal.value;
  return node(branch);
}

export const EMPTY_TRIE_ROOT: Hex = keccak256(toRlp('0x'));

export interface Trie {
  root: Hex;
  /** RLP-encoded nodes from the root along the path of `key` (hash-referenced nodes only) */
  proof(key: Uint8Array): Hex[];
}

/** Builds the trie of `entries` (distinct keys, non-empty values). */
export function buildTrie(entries: readonly { key: Uint8Array; value: Uint8Array | Hex }[]): Trie {
  if (!entries.length) return { root: EMPTY_TRIE_ROOT, proof: () => [] };
  const es: Entry[] = entries.map((e) => ({
    nibbles: toNibbles(e.key),
    value: typeof e.value === 'string' ? e.value : bytesToHex(e.value),
  }));
  const seen = new Set(es.map((e) => e.nibbles.join(',')));
  if (seen.size !== es.length) throw new Error('buildTrie: duplicate keys');
  const memo = new Map<string, Built>();
  const rootNode = build(es, 0, memo);
  const root = keccak256(rootNode.encoded);
  return {
    root,
    proof(key) {
      const nib = toNibbles(key);
      const out: Hex[] = [rootNode.encoded];
      // walk the same construction again, collecting hash-referenced nodes
      let group = es;
      let depth = 0;
      for (;;) {
        const b = build(group, depth, memo);
        const item = b.item as RlpItem[];
        let next: Entry[] | undefined;
        let nextDepth = depth;
        if (item.length === 17) {
          const k = nib[depth];
          if (k === undefined) break;
          next = group.filter((e) => e.nibbles[depth] === k);
          nextDepth = depth + 1;
        } else {
          const { nibbles, leaf } = decodeHexPrefix(item[0] as Hex);
          if (leaf) break;
          next = group;
          nextDepth = depth + nibbles.length;
        }
        if (!next.length) break;
        const child = build(next, nextDepth, memo);
        if (hexToBytes(child.encoded).length >= 32) out.push(child.encoded);
        group = next;
        depth = nextDepth;
      }
      return out;
    },
  };
}

/**
 * Verifies an MPT proof. Returns the value at `key` (RLP bytes as hex), or null for a valid proof of
 * absence. Throws MptProofError when the proof does not hash up to `root`.
 *
 * By default the nodes are looked up by hash, so a list with extra, repeated or reordered nodes is accepted.
 * With `exact`, the proof must be exactly the hash-referenced nodes of the path from the root, in path order
 * (what buildTrie's proof and eth_getProof give): one node list per proof, nothing else carried.
 */
export function verifyMptProof(root: Hex, key: Uint8Array, proof: readonly Hex[], opts: { exact?: boolean } = {}): Hex | null {
  if (!opts.exact) return walkMptProof(root, key, proof, []);
  const used: Hex[] = [];
  const value = walkMptProof(root, key, proof, used);
  if (used.length !== proof.length || used.some((n, j) => n !== proof[j])) {
    const j = used.findIndex((n, k) => n !== proof[k]);
    const at = j < 0 ? used.length : j;
    throw new MptProofError(
      `proof is not exactly the path: node ${at} of ${proof.length} is ${at < used.length ? 'not the path node at that depth' : 'not on the path'}`,
    );
  }
  return value;
}

function walkMptProof(root: Hex, key: Uint8Array, proof: readonly Hex[], used: Hex[]): Hex | null {
  const byHash = new Map<string, Hex>();
  for (const n of proof) byHash.set(keccak256(n).toLowerCase(), n);
  const nib = toNibbles(key);
  let i = 0;
  let cur: RlpItem = root;
  for (let steps = 0; steps < 200; steps++) {
    let item: RlpItem[];
    if (typeof cur === 'string') {
      if (cur === '0x') return null;
      const enc = byHash.get(cur.toLowerCase());
      if (!enc) {
        if (cur.toLowerCase() === EMPTY_TRIE_ROOT) return null;
        throw new MptProofError(`proof is missing node ${cur}`);
      }
      used.push(enc);
      const d = fromRlp(enc, 'hex') as RlpItem;
      if (!Array.isArray(d)) throw new MptProofError('node is not a list');
      item = d;
    } else item = cur;
    if (item.length === 17) {
      if (i === nib.length) {
        const v = item[16] as Hex;
        return v === '0x' ? null : v;
      }
      cur = item[nib[i]!]!;
      i++;
      continue;
    }
    if (item.length !== 2) throw new MptProofError(`bad node with ${item.length} items`);
    const { nibbles, leaf } = decodeHexPrefix(item[0] as Hex);
    const rest = nib.slice(i, i + nibbles.length);
    const match = rest.length === nibbles.length && rest.every((x, j) => x === nibbles[j]);
    if (leaf) return match && i + nibbles.length === nib.length ? (item[1] as Hex) : null;
    if (!match) return null;
    i += nibbles.length;
    cur = item[1]!;
  }
  throw new MptProofError('proof too deep');
}

/** Minimal big-endian RLP integer (0 -> empty string). */
export function rlpInt(x: bigint | number | Hex): Hex {
  const b = typeof x === 'string' ? BigInt(x) : BigInt(x);
  if (b === 0n) return '0x';
  const h = b.toString(16);
  return `0x${h.length % 2 ? '0' : ''}${h}` as Hex;
}

export function rlpIndexKey(i: number): Uint8Array {
  return hexToBytes(toRlp(rlpInt(i)));
}
