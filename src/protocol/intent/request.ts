/**
 * From the API's intent shapes to the canonical intent's input: every leg checked against the chain
 * registry and the identity's accounts, with a message naming the leg and the field in one form:
 * `intent.legs[<i>].<field> (leg "<legId>"): <message>`, the field path (`intent.legs[<i>].<field>`) in the error.
 *
 *   multi-leg        { adiUrl, legs: [{ legId, chain, chainId?, fromAddress, toAddress, amount, contractCall? }] }
 *   single transfer  { fromChain, toChain, fromAddress, toAddress, amount (native units, e.g. "0.01"), tokenSymbol }
 *                    → one native-transfer leg on toChain
 */
import { parseEther, type Address } from 'viem';
import { ADDRESS_RULE, checkedAddress, UINT } from './fields.js';
import type { ContractCallInput, LegInput } from './model.js';

export class IntentRequestError extends Error {
  constructor(
    message: string,
    readonly field: string,
    readonly code = 'VALIDATION_ERROR',
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'IntentRequestError';
  }
}

export interface RequestChain {
  name: string;
  chainId: number;
  /** native currency symbol(s) accepted as tokenSymbol */
  symbols: readonly string[];
}

export interface RequestContext {
  adiUrl: string;
  /** chain name → the identity's abstract account there */
  accounts: ReadonlyMap<string, Address>;
  chains: readonly RequestChain[];
  /** allow-list of contract call targets (contract_addresses) */
  contractAddresses?: readonly Address[];
  /** the ledger network's names accepted as fromChain of a single transfer */
  ledgerNames: readonly string[];
}

export const MAX_LEGS = 16;

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Wei as a decimal string: a non-negative integer string, or a safe integer number. */
function weiField(v: unknown, field: string, label: string): string {
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new IntentRequestError(`${label}: must be an integer amount of wei, got ${v}`, field);
    if (v < 0) throw new IntentRequestError(`${label}: must not be negative, got ${v}`, field);
    if (!Number.isSafeInteger(v)) throw new IntentRequestError(`${label}: integers beyond 2^53 must be sent as strings`, field);
    return String(v);
  }
  if (typeof v !== 'string') throw new IntentRequestError(`${label}: required, a non-negative integer in wei as a decimal string`, field);
  if (v.startsWith('-')) throw new IntentRequestError(`${label}: must not be negative, got ${v}`, field);
  if (!UINT.test(v))
    throw new IntentRequestError(`${label}: must be a non-negative integer in wei (decimal string, no fraction), got ${JSON.stringify(v.slice(0, 80))}`, field);
  if (v.length > 78 || BigInt(v) >= 1n << 256n) throw new IntentRequestError(`${label}: does not fit in uint256`, field);
  return v;
}

function addressField(v: unknown, field: string, label: string): Address {
  const a = checkedAddress(v);
  if (!a) throw new IntentRequestError(`${label}: ${ADDRESS_RULE}`, field);
  return a;
}

function chainOf(ctx: RequestContext, name: unknown, field: string, label: string): RequestChain {
  const c = typeof name === 'string' ? ctx.chains.find((x) => x.name === name) : undefined;
  if (!c) {
    throw new IntentRequestError(
      `${label}: unknown chain ${JSON.stringify(name)}; known chains: ${ctx.chains.map((x) => x.name).join(', ')}`,
      field,
      'UNKNOWN_CHAIN',
      {
        known_chains: ctx.chains.map((x) => x.name),
      },
    );
  }
  return c;
}

function accountOn(ctx: RequestContext, chain: RequestChain, from: Address, field: string, label: string) {
  const account = ctx.accounts.get(chain.name);
  if (!account) throw new IntentRequestError(`${label}: the identity has no abstract account on ${chain.name}`, field, 'NO_ACCOUNT_ON_CHAIN');
  if (account.toLowerCase() !== from.toLowerCase()) {
    throw new IntentRequestError(`${label}: must be the identity's abstract account ${account}, got ${from}`, field, 'VALIDATION_ERROR', { expected: account });
  }
}

/** How an error names a leg's field: its path, and the leg's legId when it has one (`intent.legs[0].amount (leg "l1")`). */
export function legLabel(i: number, field: string, legId?: string): string {
  return `intent.legs[${i}]${field ? `.${field}` : ''}${legId ? ` (leg ${JSON.stringify(legId)})` : ''}`;
}

function leg(ctx: RequestContext, raw: unknown, i: number): LegInput {
  const f = `intent.legs[${i}]`;
  if (!isObj(raw)) throw new IntentRequestError(`${f}: must be an object`, f);
  const legId = typeof raw.legId === 'string' && raw.legId ? raw.legId : undefined;
  // every leg error reads `intent.legs[<i>].<field> (leg "<legId>"): <message>`, its field path in details.field
  const L = (field: string) => legLabel(i, field, legId);
  if (!legId) throw new IntentRequestError(`${L('legId')}: required, a non-empty string`, `${f}.legId`);
  const chain = chainOf(ctx, raw.chain, `${f}.chain`, L('chain'));
  if (raw.chainId !== undefined) {
    const id = typeof raw.chainId === 'string' && UINT.test(raw.chainId) ? Number(raw.chainId) : raw.chainId;
    if (id !== chain.chainId)
      throw new IntentRequestError(`${L('chainId')}: ${String(raw.chainId)} does not match ${chain.name} (chain id ${chain.chainId})`, `${f}.chainId`);
  }
  const from = addressField(raw.fromAddress, `${f}.fromAddress`, L('fromAddress'));
  accountOn(ctx, chain, from, `${f}.fromAddress`, L('fromAddress'));
  const to = addressField(raw.toAddress, `${f}.toAddress`, L('toAddress'));
  const amount = weiField(raw.amount, `${f}.amount`, L('amount'));
  const out: LegInput = { legId, chain: chain.name, chainId: chain.chainId, fromAddress: from, toAddress: to, amount };
  if (raw.contractCall === undefined || raw.contractCall === null) {
    if (BigInt(amount) === 0n) throw new IntentRequestError(`${L('amount')}: a native transfer (no contractCall) must send more than 0 wei`, `${f}.amount`);
    return out;
  }
  const cf = `${f}.contractCall`;
  const c = raw.contractCall;
  if (!isObj(c)) throw new IntentRequestError(`${L('contractCall')}: must be an object`, cf);
  if (typeof c.functionSignature !== 'string' || !c.functionSignature.trim()) {
    throw new IntentRequestError(
      `${L('contractCall.functionSignature')}: required, a human-readable signature such as "transfer(address,uint256)" (not a selector)`,
      `${cf}.functionSignature`,
    );
  }
  if (/^0x[0-9a-fA-F]{8}$/.test(c.functionSignature.trim())) {
    throw new IntentRequestError(`${L('contractCall.functionSignature')}: a selector is not accepted; give name(type,...)`, `${cf}.functionSignature`);
  }
  const target = addressField(c.target ?? raw.toAddress, `${cf}.target`, L('contractCall.target'));
  if (target !== to) throw new IntentRequestError(`${L('contractCall.target')}: ${target} differs from toAddress ${to}`, `${cf}.target`);
  if (ctx.contractAddresses?.length && !ctx.contractAddresses.some((a) => a.toLowerCase() === target.toLowerCase())) {
    throw new IntentRequestError(`${L('contractCall.target')}: ${target} is not in contract_addresses`, `${cf}.target`);
  }
  const value = weiField(c.value ?? '0', `${cf}.value`, L('contractCall.value'));
  if (BigInt(value) !== BigInt(amount)) {
    throw new IntentRequestError(
      `${L('amount')}: ${amount} must equal contractCall.value ${value} (the wei forwarded with the call; '0' for a pure call)`,
      `${f}.amount`,
    );
  }
  if (c.args !== undefined && !Array.isArray(c.args)) throw new IntentRequestError(`${L('contractCall.args')}: must be an array`, `${cf}.args`);
  for (const k of ['expectedEvents', 'expectedState'] as const) {
    if (c[k] !== undefined && !Array.isArray(c[k])) throw new IntentRequestError(`${L(`contractCall.${k}`)}: must be an array`, `${cf}.${k}`);
  }
  out.contractCall = {
    target,
    value,
    functionSignature: c.functionSignature,
    args: (c.args as unknown[] | undefined) ?? [],
    expectedEvents: c.expectedEvents as ContractCallInput['expectedEvents'],
    expectedState: c.expectedState as ContractCallInput['expectedState'],
    // range-checked by buildIntent, which names the field
    ...(c.gasLimit !== undefined && c.gasLimit !== null ? { gasLimit: c.gasLimit as ContractCallInput['gasLimit'] } : {}),
  };
  return out;
}

/** The legs of an API intent (either shape) and its type; throws IntentRequestError naming leg and field. */
export function intentLegsFromRequest(ctx: RequestContext, intent: unknown): { type: 'multi_leg' | 'transfer'; legs: LegInput[] } {
  if (!isObj(intent)) throw new IntentRequestError('intent: required, an object', 'intent');
  if ('legs' in intent || 'adiUrl' in intent) {
    if (typeof intent.adiUrl !== 'string' || intent.adiUrl.toLowerCase() !== ctx.adiUrl.toLowerCase()) {
      throw new IntentRequestError(`intent.adiUrl: must be the identity's ADI ${ctx.adiUrl}`, 'intent.adiUrl');
    }
    if (!Array.isArray(intent.legs) || intent.legs.length === 0) throw new IntentRequestError('intent.legs: at least one leg is required', 'intent.legs');
    if (intent.legs.length > MAX_LEGS) throw new IntentRequestError(`intent.legs: at most ${MAX_LEGS} legs`, 'intent.legs');
    const legs = intent.legs.map((l, i) => leg(ctx, l, i));
    const dup = legs.findIndex((l, i) => legs.findIndex((m) => m.legId === l.legId) !== i);
    if (dup >= 0) {
      const first = legs.findIndex((m) => m.legId === legs[dup]!.legId);
      throw new IntentRequestError(
        `${legLabel(dup, 'legId', legs[dup]!.legId)}: duplicate leg id (intent.legs[${first}] has it too)`,
        `intent.legs[${dup}].legId`,
      );
    }
    return { type: 'multi_leg', legs };
  }
  if ('type' in intent) {
    throw new IntentRequestError(
      `intent.type: ${JSON.stringify(intent.type)} is not an intent type of this gateway; the typed shape it takes is the ledger token transfer {type: "sendTokens", to, amount}, besides a native transfer ({fromChain, toChain, fromAddress, toAddress, amount, tokenSymbol}) and a multi-leg intent`,
      'intent.type',
      'UNSUPPORTED_INTENT',
    );
  }
  const chain = chainOf(ctx, intent.toChain, 'intent.toChain', 'intent.toChain');
  if (intent.fromChain !== undefined && intent.fromChain !== chain.name && !ctx.ledgerNames.includes(String(intent.fromChain))) {
    throw new IntentRequestError(`intent.fromChain: must be ${chain.name} or the ledger network (${ctx.ledgerNames.join(', ')})`, 'intent.fromChain');
  }
  const from = addressField(intent.fromAddress, 'intent.fromAddress', 'intent.fromAddress');
  accountOn(ctx, chain, from, 'intent.fromAddress', 'intent.fromAddress');
  const to = addressField(intent.toAddress, 'intent.toAddress', 'intent.toAddress');
  if (intent.tokenSymbol !== undefined && !chain.symbols.includes(String(intent.tokenSymbol).toUpperCase())) {
    throw new IntentRequestError(
      `intent.tokenSymbol: ${String(intent.tokenSymbol)} is not the native token of ${chain.name} (${chain.symbols.join(' or ')})`,
      'intent.tokenSymbol',
    );
  }
  if (typeof intent.amount !== 'string' || !/^(0|[1-9][0-9]*)(\.[0-9]{1,18})?$/.test(intent.amount)) {
    throw new IntentRequestError('intent.amount: required, a positive decimal string in native units (e.g. "0.01")', 'intent.amount');
  }
  const wei = parseEther(intent.amount);
  if (wei === 0n) throw new IntentRequestError('intent.amount: must be greater than 0', 'intent.amount');
  return {
    type: 'transfer',
    legs: [{ legId: 'transfer', chain: chain.name, chainId: chain.chainId, fromAddress: from, toAddress: to, amount: wei.toString() }],
  };
}
