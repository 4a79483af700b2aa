/**
 * The API conventions (docs/api-conventions.md) as checks: over a JSON answer (a REST body, an event, a proof
 * artifact or bundle) and over a JSON schema of the OpenAPI document or the event catalogue. Each check returns the
 * deviations it finds as `<path>: <problem>` lines, so a test can show every one of them at once.
 */

/** Names the conventions replaced: each concept has one name (see the table in docs/api-conventions.md). */
export const RETIRED_NAMES: Record<string, string> = {
  ledger_tx_hash: 'tx_hash',
  key_book_url: 'book_url',
  governance_id: 'governance_op_id',
  ledger_hash: 'tx_hash',
};

/** Fields that are JSON numbers wherever they appear. */
export const NUMBER_FIELDS = new Set([
  'collected_signatures',
  'required_signatures',
  'total_authorities',
  'signature_count',
  'key_page_version',
  'signer_version',
  'threshold',
  'accept_threshold',
  'credit_balance',
  'evm_chain_id',
  'total',
  'limit',
  'offset',
  'leaf_count',
  'leaf_index',
  'block_number',
  'gas_used',
  'log_index',
  'confirmations',
]);

/** Ledger hashes: 64 lowercase hex, no 0x. */
export const LEDGER_HASH = /^[0-9a-f]{64}$/;
/** EVM hashes: 0x + 64 lowercase hex. */
export const EVM_HASH = /^0x[0-9a-f]{64}$/;
export const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const LEDGER_HASH_FIELDS = new Set(['hash_to_sign', 'transaction_hash', 'accum_tx_hash', 'public_key_hash']);
const EVM_TX_FIELDS = new Set(['deployment_tx', 'execution_tx', 'create_anchor', 'execute_comprehensive_proof', 'block_hash']);
const ADDRESS_FIELDS = new Set(['address', 'account_address', 'proof_anchor_address', 'account_factory_address']);

/** The one pagination object of every list. */
export const PAGINATION_KEYS = ['has_more', 'limit', 'next_cursor', 'offset', 'total'];

/** camelCase names the gateway writes on purpose: Certen's `chainId` on a chain of GET /v1/chains. */
const CAMEL_CASE_ALLOWED = new Set(['chainId']);

/**
 * Subtrees that are not the gateway's own writing and keep their own conventions: the client's intent as sent
 * (the contract's camelCase input format), the ledger's JSON inside a proof bundle (hashed as the ledger holds it),
 * the ledger's Merkle receipt and an EVM block header (the names of the chain's JSON-RPC, re-hashed by verifiers).
 */
function skipped(path: string, key: string, value: unknown, parentIsBundleLedger: boolean): boolean {
  if (key === 'legs' && Array.isArray(value) && value.some((l) => isObject(l) && 'legId' in l)) return true;
  if (key === 'intent_request' || key === 'request') return true;
  if (parentIsBundleLedger && (key === 'transaction' || key === 'signatures')) return true;
  if (key === 'block' && isObject(value) && 'parentHash' in value) return true;
  if (key === 'receipt' && isObject(value) && 'anchor' in value && 'start' in value) return true;
  return path.endsWith('.intent') && key === 'parts';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every deviation of one JSON answer from the conventions. */
export function answerDeviations(value: unknown, path = '$'): string[] {
  const out: string[] = [];
  const walk = (v: unknown, p: string, bundleLedger: boolean) => {
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walk(x, `${p}[${i}]`, false);
      return;
    }
    if (!isObject(v)) return;
    for (const [k, x] of Object.entries(v)) {
      const at = `${p}.${k}`;
      if (skipped(p, k, x, bundleLedger)) continue;
      if (k in RETIRED_NAMES) out.push(`${at}: retired name, the concept is named ${RETIRED_NAMES[k]}`);
      if (!/^[a-z][a-z0-9_]*$/.test(k) && !CAMEL_CASE_ALLOWED.has(k) && !/^[0-9a-f]{64}$|^0x/.test(k) && !/^[a-z]+:/.test(k) && !/^[a-z-]+$/.test(k))
        out.push(`${at}: not a snake_case name`);
      if (NUMBER_FIELDS.has(k) && x !== null && typeof x !== 'number') out.push(`${at}: ${JSON.stringify(x)} is not a JSON number`);
      if (typeof x === 'string') {
        if (LEDGER_HASH_FIELDS.has(k) && !LEDGER_HASH.test(x)) out.push(`${at}: ${x} is not a ledger hash (64 lowercase hex, no 0x)`);
        // a transaction's hash in its network's form: the ledger's bare, an EVM chain's 0x
        if (k === 'tx_hash' && !LEDGER_HASH.test(x) && !EVM_HASH.test(x)) out.push(`${at}: ${x} is neither a ledger hash nor an EVM hash`);
        if (EVM_TX_FIELDS.has(k) && !EVM_HASH.test(x)) out.push(`${at}: ${x} is not an EVM hash (0x + 64 lowercase hex)`);
        if (ADDRESS_FIELDS.has(k) && !EVM_ADDRESS.test(x)) out.push(`${at}: ${x} is not an EVM address`);
        if (k === 'chain_id' && !/^[a-z][a-z0-9-]*$/.test(x)) out.push(`${at}: ${x} is not a chain registry id`);
      }
      if (k === 'chain_id' && typeof x !== 'string') out.push(`${at}: ${JSON.stringify(x)}: chain_id is the chain's registry id (the EVM id is evm_chain_id)`);
      if (k === 'pagination') {
        const keys = isObject(x) ? Object.keys(x).sort() : [];
        if (keys.join() !== PAGINATION_KEYS.join()) out.push(`${at}: keys ${keys.join(',')} are not the pagination object ${PAGINATION_KEYS.join(',')}`);
      }
      walk(x, at, p === '$' && k === 'ledger');
    }
  };
  walk(value, path, false);
  return out;
}

type Schema = Record<string, any>;

/** Every deviation of one JSON schema (an OpenAPI response or an event's data) from the conventions. */
export function schemaDeviations(schema: unknown, resolve: (ref: string) => unknown, path = '#'): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  const types = (s: Schema): string[] => {
    if (s.$ref) return types(resolve(s.$ref) as Schema);
    const own = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
    const alt = [...(s.anyOf ?? []), ...(s.oneOf ?? [])].flatMap((x: Schema) => types(x));
    return [...own, ...alt];
  };
  const walk = (s: unknown, p: string) => {
    if (!isObject(s) || seen.has(s)) return;
    seen.add(s);
    if (typeof s.$ref === 'string') return walk(resolve(s.$ref), p);
    for (const [k, prop] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
      const at = `${p}.${k}`;
      if (k === 'legs' || k === 'intent_request') continue;
      if (k in RETIRED_NAMES) out.push(`${at}: retired name, the concept is named ${RETIRED_NAMES[k]}`);
      if (NUMBER_FIELDS.has(k)) {
        const t = types(prop).filter((x) => x !== 'null');
        if (t.length && !t.every((x) => x === 'integer' || x === 'number')) out.push(`${at}: declared ${t.join('|')}, not a number`);
      }
      if (k === 'pagination') {
        const r: Schema = prop.$ref ? (resolve(prop.$ref) as Schema) : prop;
        const keys = Object.keys(r.properties ?? {}).sort();
        if (keys.join() !== PAGINATION_KEYS.join()) out.push(`${at}: declares ${keys.join(',')}, not the pagination object`);
      }
      walk(prop, at);
    }
    for (const key of ['items', 'additionalProperties']) walk(s[key], `${p}[]`);
    for (const key of ['anyOf', 'oneOf', 'allOf']) for (const x of (s[key] ?? []) as unknown[]) walk(x, p);
  };
  walk(schema, path);
  return out;
}
