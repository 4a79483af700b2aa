/**
 * The forms of event payloads (docs/api-conventions.md) and the reading of stored events written before them.
 * Writers build `data` with the helpers here; `currentEventData` turns a stored row of any earlier form into the
 * current one when an event is served (GET /v1/events, webhook deliveries), so a client sees one form only. On data
 * already in the current form it changes nothing.
 *
 * The earlier forms: `ledger_tx_hash` (now `tx_hash`), `key_book_url` (`book_url`), `governance_id`
 * (`governance_op_id`); inbox.action_pending's `threshold`, `signatures` and `kind` (`transaction` | `governance`),
 * now `required_signatures`, `collected_signatures` and `category` (`transactions` | `governance`) as in
 * GET /v1/pending; identity.active's `credit_balance` as a decimal string and its chain accounts as
 * `{chain, chain_id: "<EVM chain id>", address}`; transaction.completed's executions as
 * `{chain, chain_id: "<EVM chain id>", leg_id, tx_hash}`.
 */
import { getAddress, isAddress } from 'viem';

/** A ledger hash as payloads carry it: 64 lowercase hex without 0x. */
export function ledgerHashForm(h: string): string {
  return h.replace(/^0x/i, '').toLowerCase();
}

/** An EVM transaction hash as payloads carry it: 0x + lowercase hex. */
export function evmHashForm(h: string): string {
  return `0x${h.replace(/^0x/i, '').toLowerCase()}`;
}

/** An EVM address as payloads carry it: EIP-55 (a value that is no address is left as it is). */
export function evmAddressForm(a: string): string {
  const hex = `0x${a.replace(/^0x/i, '')}`;
  return isAddress(hex, { strict: false }) ? getAddress(hex) : a;
}

/** A chain account of a payload: the fields and forms of the REST identity view's `chain_accounts[]`. */
export function chainAccountPayload(a: { chain: string; evmChainId: number | bigint | string; address: string; deploymentTx: string | null }) {
  return {
    chain: a.chain,
    chain_id: a.chain,
    evm_chain_id: Number(a.evmChainId),
    address: evmAddressForm(a.address),
    deployment_tx: a.deploymentTx ? evmHashForm(a.deploymentTx) : null,
    deployed: true as const,
  };
}

export interface ExecutionPayload {
  leg_id: string;
  chain: string;
  evm_chain_id: number;
  tx_hash: string;
}

/** An executed leg of a payload: the chain by registry id and EVM chain id, the EVM transaction. */
export function executionPayload(l: { legId: string; chain: string; evmChainId: number | bigint | string; txHash: string }): ExecutionPayload {
  return { leg_id: l.legId, chain: l.chain, evm_chain_id: Number(l.evmChainId), tx_hash: evmHashForm(l.txHash) };
}

type Data = Record<string, unknown>;

const isObject = (v: unknown): v is Data => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A number written as a decimal string becomes the number; anything else stays as it is. */
const numberOf = (v: unknown): unknown => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v);

/** Retired names, per event type (`*`: every type), and the names that replaced them. */
const RENAMED: Record<string, Record<string, string>> = {
  '*': { ledger_tx_hash: 'tx_hash', key_book_url: 'book_url', governance_id: 'governance_op_id' },
  'inbox.action_pending': { threshold: 'required_signatures', signatures: 'collected_signatures', kind: 'category' },
};

/** `data` with retired names replaced in place (key order kept); a current name already present wins. */
function renamed(type: string, data: Data): Data {
  const names = { ...RENAMED['*'], ...RENAMED[type] };
  if (!Object.keys(data).some((k) => k in names)) return data;
  const out: Data = {};
  for (const [k, v] of Object.entries(data)) {
    const to = names[k];
    if (to === undefined) out[k] = v;
    else if (!(to in data)) out[to] = v;
  }
  return out;
}

/** A stored chain account (`chain_id` the EVM chain id as a decimal string, no deployment) in the current form. */
function chainAccountOf(a: unknown): unknown {
  if (!isObject(a) || typeof a.chain !== 'string' || typeof a.address !== 'string') return a;
  const evm = a.evm_chain_id ?? numberOf(a.chain_id);
  if (typeof evm !== 'number') return a;
  const tx = typeof a.deployment_tx === 'string' ? a.deployment_tx : null;
  return chainAccountPayload({ chain: a.chain, evmChainId: evm, address: a.address, deploymentTx: tx });
}

/** A stored execution (`chain_id` the EVM chain id as a decimal string) in the current form. */
function executionOf(x: unknown): unknown {
  if (!isObject(x) || typeof x.chain !== 'string' || typeof x.tx_hash !== 'string') return x;
  const evm = x.evm_chain_id ?? numberOf(x.chain_id);
  if (typeof evm !== 'number') return x;
  return executionPayload({ legId: String(x.leg_id ?? ''), chain: x.chain, evmChainId: evm, txHash: x.tx_hash });
}

/** The `data` of a stored event in the current form of its type. */
export function currentEventData(type: string, stored: Data): Data {
  const data = renamed(type, stored);
  const out: Data = { ...data };
  // ledger hashes at the top level of every payload
  for (const k of ['tx_hash', 'public_key_hash']) if (typeof out[k] === 'string') out[k] = ledgerHashForm(out[k] as string);
  for (const k of ['credit_balance', 'required_signatures', 'collected_signatures', 'remaining_needed']) {
    if (k in out) out[k] = numberOf(out[k]);
  }
  // inbox.action_pending's `kind` said `transaction` where GET /v1/pending's category says `transactions`
  if (type === 'inbox.action_pending' && out.category === 'transaction') out.category = 'transactions';
  if (Array.isArray(out.chain_accounts)) out.chain_accounts = out.chain_accounts.map(chainAccountOf);
  if (Array.isArray(out.executions)) out.executions = out.executions.map(executionOf);
  return out;
}
