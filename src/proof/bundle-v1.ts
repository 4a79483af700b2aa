/**
 * Bundles of version 1 (pgw-proof-bundle/1), handed out before version 2, read in version 2's form: the verifier's
 * checks and the proof artifact read that form only. Version 1's schema is in ./bundle.ts beside version 2's.
 */
import { BUNDLE_VERSION_1, HEADER_NUMBER_FIELDS, type ProofBundle, type ProofBundleV1 } from './bundle.js';

const asObject = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...(v as Record<string, unknown>) } : undefined;
/** `v` with `f` applied when it is an object (anything else as it is: the schema check reports it) */
const edit = (v: unknown, f: (o: Record<string, unknown>) => void): unknown => {
  const o = asObject(v);
  if (!o) return v;
  f(o);
  return o;
};
const each = (v: unknown, f: (x: unknown) => unknown): unknown => (Array.isArray(v) ? v.map(f) : v);
/** a version 1 decimal string as the number version 2 writes (left as it is when it is not a safe integer's) */
const num = (v: unknown): unknown => (typeof v === 'string' && /^(0|[1-9][0-9]*)$/.test(v) && Number.isSafeInteger(Number(v)) ? Number(v) : v);
/** a version 1 ledger hash (0x + hex) as version 2 writes it (bare hex) */
const bare = (v: unknown): unknown => (typeof v === 'string' && /^0x[0-9a-fA-F]{64}$/.test(v) ? v.slice(2) : v);
/** sets each key of `keys` present in `o` to f(value); absent keys stay absent */
const map = (o: Record<string, unknown>, keys: readonly string[], f: (v: unknown) => unknown) => {
  for (const k of keys) if (k in o) o[k] = f(o[k]);
};
const rename = (o: Record<string, unknown>, from: string, to: string, f: (v: unknown) => unknown) => {
  if (!(from in o)) return;
  o[to] = f(o[from]);
  delete o[from];
};

const receiptV2 = (r: unknown) =>
  edit(r, (o) => {
    map(o, ['start', 'anchor'], bare);
    map(o, ['local_block'], num);
    o.entries = each(o.entries, (e) => edit(e, (x) => map(x, ['hash'], bare)));
  });
const provenV2 = (p: unknown) =>
  edit(p, (o) => {
    map(o, ['tx_index'], num);
    o.block = edit(o.block, (h) => map(h, HEADER_NUMBER_FIELDS, num));
  });
const quorumV2 = (o: Record<string, unknown>) => (o.signers = each(o.signers, num));
const legV2 = (l: unknown) =>
  edit(l, (o) => {
    map(o, ['leaf_index'], num);
    o.execution = provenV2(o.execution);
    o.observation = edit(o.observation, (q) => {
      quorumV2(q);
      map(q, ['confirmations'], num);
      q.checks = edit(q.checks, (c) => map(c, ['expected_events', 'expected_state'], num));
    });
    o.result = edit(o.result, (r) => {
      map(r, ['tx_hash'], bare);
      map(r, ['written_by'], num);
      r.receipt = receiptV2(r.receipt);
    });
  });
const chainV2 = (c: unknown) =>
  edit(c, (o) => {
    rename(o, 'chain_id', 'evm_chain_id', num);
    o.validator_set = edit(o.validator_set, (s) => map(s, ['threshold_numerator', 'threshold_denominator'], num));
    o.anchor = edit(o.anchor, (a) => {
      rename(a, 'ledger_tx_hash', 'tx_hash', bare);
      map(a, ['leaf_count'], num);
    });
    o.attestation = edit(o.attestation, quorumV2);
    o.create_anchor = provenV2(o.create_anchor);
    o.prove = provenV2(o.prove);
    o.legs = each(o.legs, legV2);
  });

/**
 * The bundle in version 2's form: a version 1 bundle with its values written as version 2 writes them (numbers,
 * bare ledger hashes, `evm_chain_id`, the anchor's `tx_hash`), every other version as it is. The content is the
 * same, so every check of version 2's form holds for it exactly when it held for the version 1 bundle; its
 * `version` stays 1 and its bundle_hash is the one sent (bundleHash of the result is not: verify the bundle as
 * sent). Values not of version 1's form are left as they are (the schema check of the bundle as sent reports them).
 * The objects kept as the ledger's JSON are not touched.
 */
export function upgradeBundle(bundle: ProofBundle | ProofBundleV1 | unknown): ProofBundle {
  if ((bundle as { version?: unknown } | null)?.version !== BUNDLE_VERSION_1) return bundle as ProofBundle;
  return edit(bundle, (o) => {
    o.ledger = edit(o.ledger, (l) => {
      map(l, ['tx_hash'], bare);
      l.receipt = receiptV2(l.receipt);
      l.authority = edit(l.authority, (a) => map(a, ['key_page_version', 'threshold', 'signatures', 'delegated'], num));
      l.key_page = edit(l.key_page, (p) => {
        map(p, ['version', 'accept_threshold'], num);
        p.key_hashes = each(p.key_hashes, bare);
      });
    });
    o.chains = each(o.chains, chainV2);
  }) as ProofBundle;
}
