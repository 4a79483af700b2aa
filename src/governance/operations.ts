/**
 * Governance operations: the API's operation objects → one ledger transaction body (UpdateKeyPage,
 * UpdateAccountAuth, CreateKeyPage or CreateTokenAccount), and the quorum-reachability guard that refuses an
 * operation leaving a page (or an account) unable to authorize again.
 * Pure: the caller reads the live key page / account and passes it in.
 */
import { LedgerInputError, tx, type AccountAuthOp, type KeyPageOp, type KeyPageInfo } from '../ledger/index.js';
import { normUrl, parentUrl } from '../ledger/urls.js';

export const OPERATION_KINDS = {
  add_delegate: 'key_page',
  remove_delegate: 'key_page',
  set_threshold: 'key_page',
  add_key: 'key_page',
  remove_key: 'key_page',
  add_authority: 'authority',
  remove_authority: 'authority',
  create_key_page: 'create_key_page',
  create_token_account: 'create_token_account',
} as const;
export type OperationType = keyof typeof OPERATION_KINDS;
export type OperationKind = (typeof OPERATION_KINDS)[OperationType];
export const OPERATION_TYPES = Object.keys(OPERATION_KINDS) as OperationType[];

export interface GovernanceOperation {
  type: OperationType;
  delegate_url?: string;
  threshold?: number;
  public_key_hash?: string;
  authority_url?: string;
  /** create_key_page: the keys of the new page */
  public_key_hashes?: string[];
  /** create_token_account: the ACME token account to create, an account of the identity's ADI (default <adi>/tokens) */
  url?: string;
}

export class GovernanceInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
    readonly code = 'VALIDATION_ERROR',
  ) {
    super(`${field}: ${message}`);
    this.name = 'GovernanceInputError';
  }
}

/** The one kind of every operation; mixing kinds is refused naming them. */
export function operationsKind(ops: GovernanceOperation[]): OperationKind {
  if (!ops.length) throw new GovernanceInputError('operations', 'at least one operation is required');
  const kinds = new Set<OperationKind>();
  ops.forEach((o, i) => {
    // own keys only: a prototype name ("toString", "constructor") is not an operation type
    const k = typeof o.type === 'string' && Object.hasOwn(OPERATION_KINDS, o.type) ? OPERATION_KINDS[o.type] : undefined;
    if (!k) throw new GovernanceInputError(`operations[${i}].type`, `unknown operation type ${JSON.stringify(o.type)}; one of ${OPERATION_TYPES.join(', ')}`);
    kinds.add(k);
  });
  if (kinds.size > 1) {
    throw new GovernanceInputError(
      'operations',
      `operations of different kinds cannot be mixed in one request: ${[...kinds].join(', ')} (send one request per kind)`,
      'MIXED_OPERATION_KINDS',
    );
  }
  return [...kinds][0]!;
}

function need<T>(v: T | undefined, field: string): T {
  if (v === undefined || v === null || v === '') throw new GovernanceInputError(field, 'required');
  return v;
}

function hex64(v: string | undefined, field: string): string {
  const s = need(v, field);
  if (typeof s !== 'string' || !/^[0-9a-fA-F]{64}$/.test(s))
    throw new GovernanceInputError(field, 'must be 64 hex characters (SHA-256 of the raw 32-byte public key)');
  return s.toLowerCase();
}

function accUrl(v: string | undefined, field: string): string {
  const s = need(v, field);
  try {
    return normUrl(s, field);
  } catch {
    throw new GovernanceInputError(field, `not an Accumulate URL: ${JSON.stringify(s)}`);
  }
}

/** Translate into the ledger's operation lists (validating each field, named by its path). */
export function keyPageOps(ops: GovernanceOperation[]): KeyPageOp[] {
  return ops.map((o, i): KeyPageOp => {
    const f = (name: string) => `operations[${i}].${name}`;
    switch (o.type) {
      case 'add_key':
        return { type: 'addKey', publicKeyHash: hex64(o.public_key_hash, f('public_key_hash')) };
      case 'remove_key':
        return { type: 'removeKey', publicKeyHash: hex64(o.public_key_hash, f('public_key_hash')) };
      case 'add_delegate':
        return { type: 'addDelegate', delegate: accUrl(o.delegate_url, f('delegate_url')) };
      case 'remove_delegate':
        return { type: 'removeDelegate', delegate: accUrl(o.delegate_url, f('delegate_url')) };
      case 'set_threshold': {
        const t = need(o.threshold, f('threshold'));
        if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 1) throw new GovernanceInputError(f('threshold'), 'must be an integer of at least 1');
        return { type: 'setThreshold', threshold: t };
      }
      default:
        throw new GovernanceInputError(f('type'), `${o.type} is not a key page operation`);
    }
  });
}

export function accountAuthOps(ops: GovernanceOperation[]): AccountAuthOp[] {
  return ops.map((o, i): AccountAuthOp => {
    const field = `operations[${i}].authority_url`;
    if (o.type === 'add_authority') return { type: 'addAuthority', authority: accUrl(o.authority_url, field) };
    if (o.type === 'remove_authority') return { type: 'removeAuthority', authority: accUrl(o.authority_url, field) };
    throw new GovernanceInputError(`operations[${i}].type`, `${o.type} is not an authority operation`);
  });
}

export function createKeyPageHashes(ops: GovernanceOperation[]): string[][] {
  return ops.map((o, i) => {
    const list = need(o.public_key_hashes, `operations[${i}].public_key_hashes`);
    if (!Array.isArray(list) || !list.length) throw new GovernanceInputError(`operations[${i}].public_key_hashes`, 'at least one key hash is required');
    return list.map((h, j) => hex64(h, `operations[${i}].public_key_hashes[${j}]`));
  });
}

/** The token account a create_token_account makes: ACME, the only token the gateway sends. */
export const TOKEN_ACCOUNT_TOKEN = 'acc://ACME';

/**
 * create_token_account operations with their account URL resolved: `url` as given, or `<adi>/tokens` when absent.
 * The account is created by the ADI (the transaction's principal), so it must be a direct sub-account of the ADI.
 * One account per request. The operations are stored resolved, so the transaction prepared again later is the same.
 */
export function resolveTokenAccountOps(ops: GovernanceOperation[], adiUrl: string): GovernanceOperation[] {
  if (ops.length !== 1) throw new GovernanceInputError('operations', 'create_token_account: one account per request');
  const adi = normUrl(adiUrl);
  return ops.map((o, i) => {
    const field = `operations[${i}].url`;
    const u = o.url === undefined ? `${adi}/tokens` : accUrl(o.url, field);
    if (parentUrl(u) !== adi) throw new GovernanceInputError(field, `must be an account directly under the identity's ADI (${adi}/<name>)`);
    return { type: o.type, url: u };
  });
}

/** The account of each (resolved) create_token_account operation. */
export function createTokenAccountUrls(ops: GovernanceOperation[]): string[] {
  return ops.map((o, i) => accUrl(o.url, `operations[${i}].url`));
}

/** The message ending of an operation that would change nothing (refused alike for every operation type). */
export const CHANGES_NOTHING = 'the operation changes nothing';

/**
 * The first operation that would change nothing when applying `ops` in order to `page`, named by its index: adding
 * an entry (key or delegate) the page already holds, removing one it does not hold (both refused by the ledger after
 * the transaction was signed), or setting the threshold the page has at that point. Null when every step changes
 * something. Not a policy (force does not skip it).
 */
export function keyPageStepProblem(
  page: Pick<KeyPageInfo, 'keys'> & { acceptThreshold?: number },
  ops: KeyPageOp[],
): { field: string; message: string } | null {
  const entries = new Set(page.keys.map((k) => (k.publicKeyHash ? `k:${k.publicKeyHash.toLowerCase()}` : `d:${normUrl(k.delegate ?? '')}`)));
  let threshold = page.acceptThreshold === undefined ? undefined : Math.max(1, page.acceptThreshold);
  for (const [i, op] of ops.entries()) {
    const field = `operations[${i}]`;
    if (op.type === 'setThreshold') {
      if (threshold === op.threshold) return { field, message: `the key page's threshold is already ${threshold}: ${CHANGES_NOTHING}` };
      threshold = op.threshold;
      continue;
    }
    let entry: string;
    let what: string;
    if (op.type === 'addKey' || op.type === 'removeKey') {
      entry = `k:${String(op.publicKeyHash).toLowerCase()}`;
      what = `key ${String(op.publicKeyHash).toLowerCase()}`;
    } else if (op.type === 'addDelegate' || op.type === 'removeDelegate') {
      entry = `d:${normUrl(op.delegate)}`;
      what = `delegate ${normUrl(op.delegate)}`;
    } else continue;
    if (op.type === 'addKey' || op.type === 'addDelegate') {
      if (entries.has(entry)) return { field, message: `the ${what} is already on the key page: ${CHANGES_NOTHING}` };
      entries.add(entry);
    } else {
      if (!entries.has(entry)) return { field, message: `the ${what} is not on the key page: ${CHANGES_NOTHING}` };
      entries.delete(entry);
      // the ledger clamps the threshold to the entries left
      if (threshold !== undefined) threshold = Math.min(threshold, Math.max(1, entries.size));
    }
  }
  return null;
}

/** An account's own authorities as the ledger holds them (empty: it inherits its parent's). */
export interface AccountAuthorities {
  url: string;
  authorities: { url: string; disabled: boolean }[];
}

/**
 * The first authority operation that would change nothing on `account` (its own authorities), named by its index:
 * adding a book that is already one of its authorities, removing (or enabling, disabling) one that is not. The ledger
 * refuses both after the transaction was signed. `inheritsFrom`: the account whose authorities it inherits, named in
 * the message when it has none of its own.
 */
export function authorityStepProblem(account: AccountAuthorities, ops: AccountAuthOp[], inheritsFrom?: string): { field: string; message: string } | null {
  const own = new Set(account.authorities.map((a) => normUrl(a.url)));
  const name = normUrl(account.url);
  for (const [i, op] of ops.entries()) {
    const field = `operations[${i}]`;
    const book = normUrl(op.authority);
    if (op.type === 'addAuthority') {
      if (own.has(book)) return { field, message: `${book} is already an authority of ${name}: ${CHANGES_NOTHING}` };
      own.add(book);
    } else {
      if (!own.has(book)) {
        const inherited = own.size === 0 && inheritsFrom ? ` (it has no authorities of its own: it inherits those of ${normUrl(inheritsFrom)})` : '';
        return { field, message: `${book} is not an authority of ${name}${inherited}: ${CHANGES_NOTHING}` };
      }
      if (op.type === 'removeAuthority') own.delete(book);
    }
  }
  return null;
}

/**
 * The operations to send for `ops` on `account` so that adding an authority keeps the one it inherits. An account
 * without authorities of its own (an identity's data account) inherits its parent's; the ledger makes the first
 * added book its only authority, which takes the inherited book (the identity's own) off it. So when the account
 * inherits and `ops` add a book, the inherited enabled books are added explicitly first, in the same transaction
 * (they must approve it anyway). Returns `ops` unchanged otherwise, and the books added.
 */
export function keepInheritedAuthorities(
  account: AccountAuthorities,
  inherited: { url: string; disabled: boolean }[],
  ops: GovernanceOperation[],
): { operations: GovernanceOperation[]; kept: string[] } {
  if (account.authorities.length > 0 || !ops.some((o) => o.type === 'add_authority')) return { operations: ops, kept: [] };
  const named = new Set(ops.filter((o) => typeof o.authority_url === 'string').map((o) => normUrl(o.authority_url!)));
  const kept = inherited.filter((a) => !a.disabled && !named.has(normUrl(a.url))).map((a) => normUrl(a.url));
  return { operations: [...kept.map((url): GovernanceOperation => ({ type: 'add_authority', authority_url: url })), ...ops], kept };
}

/**
 * The enabled authorities that will sign for `chain[0]` after `ops` change the own authorities of `principal`:
 * `chain` is the account followed by its ancestors (each with its own authorities, as the ledger holds them); the
 * first one with authorities of its own is the one whose authorities count (the ledger's inheritance).
 */
export function effectiveAuthoritiesAfter(chain: AccountAuthorities[], principal: string, ops: AccountAuthOp[]): Set<string> {
  const target = normUrl(principal);
  for (const acc of chain) {
    let list = acc.authorities.map((a) => ({ url: normUrl(a.url), disabled: a.disabled }));
    if (normUrl(acc.url) === target) {
      for (const op of ops) {
        const book = normUrl(op.authority);
        if (op.type === 'addAuthority') list.push({ url: book, disabled: false });
        else if (op.type === 'removeAuthority') list = list.filter((a) => a.url !== book);
        else list = list.map((a) => (a.url === book ? { ...a, disabled: op.type === 'disable' } : a));
      }
    }
    if (list.length > 0) return new Set(list.filter((a) => !a.disabled).map((a) => a.url));
  }
  return new Set();
}

/**
 * Whether the identity could still sign for the account its intents are written to (`chain[0]`, with its ancestors)
 * after authority operations on `principal`: the identity's book must remain one of its enabled authorities, or the
 * ledger refuses the identity's signature on the next intent. The problem, or null (also when the book is not one
 * already: the operations do not cause it).
 */
export function intentAccountProblem(chain: AccountAuthorities[], principal: string, ops: AccountAuthOp[], identityBook: string): string | null {
  const book = normUrl(identityBook);
  if (!effectiveAuthoritiesAfter(chain, principal, []).has(book)) return null;
  if (effectiveAuthoritiesAfter(chain, principal, ops).has(book)) return null;
  return `${book} would no longer be an authority of ${normUrl(chain[0]!.url)}, the account the identity's intents are written to: the identity could not sign its intents`;
}

/**
 * Quorum reachability of a key page after each of `ops` (applied in order, as the ledger does: removing an entry
 * clamps the threshold). Returns the problem, or null when the page can still reach its threshold.
 */
export function keyPageQuorumProblem(page: Pick<KeyPageInfo, 'acceptThreshold' | 'keys'>, ops: KeyPageOp[]): string | null {
  const entries = new Set(page.keys.map((k) => (k.publicKeyHash ? `k:${k.publicKeyHash.toLowerCase()}` : `d:${normUrl(k.delegate ?? '')}`)));
  let threshold = Math.max(1, page.acceptThreshold);
  for (const [i, op] of ops.entries()) {
    if (op.type === 'addKey') entries.add(`k:${String(op.publicKeyHash).toLowerCase()}`);
    else if (op.type === 'removeKey') entries.delete(`k:${String(op.publicKeyHash).toLowerCase()}`);
    else if (op.type === 'addDelegate') entries.add(`d:${normUrl(op.delegate)}`);
    else if (op.type === 'removeDelegate') entries.delete(`d:${normUrl(op.delegate)}`);
    else if (op.type === 'setThreshold') threshold = op.threshold;
    if (op.type === 'removeKey' || op.type === 'removeDelegate') threshold = Math.min(threshold, Math.max(1, entries.size));
    // the ledger checks each step (a threshold the page cannot meet at that point fails the transaction), not the end
    if (entries.size > 0 && threshold > entries.size) {
      return `threshold ${threshold} is above the ${entries.size} key(s) the page would hold after operations[${i}]: it could never reach its threshold`;
    }
  }
  if (entries.size === 0) return 'the operation removes the last key of the page: nobody could sign for it again';
  if (threshold > entries.size) return `threshold ${threshold} is above the ${entries.size} key(s) the page would hold: it could never reach its threshold`;
  return null;
}

/** Quorum reachability of an account after authority operations: at least one enabled authority must remain. */
export function authorityQuorumProblem(authorities: { url: string; disabled: boolean }[], ops: AccountAuthOp[]): string | null {
  const enabled = new Set(authorities.filter((a) => !a.disabled).map((a) => normUrl(a.url)));
  for (const op of ops) {
    if (op.type === 'addAuthority') enabled.add(normUrl(op.authority));
    if (op.type === 'removeAuthority') enabled.delete(normUrl(op.authority));
  }
  return enabled.size === 0 ? 'the operation removes the last authority of the account: nobody could sign for it again' : null;
}

/** The transaction body for `ops` of `kind` (validated). */
export function governanceBody(kind: OperationKind, ops: GovernanceOperation[]) {
  try {
    if (kind === 'key_page') return tx.updateKeyPage(keyPageOps(ops));
    if (kind === 'authority') return tx.updateAccountAuth(accountAuthOps(ops));
    if (kind === 'create_token_account') {
      const urls = createTokenAccountUrls(ops);
      if (urls.length !== 1) throw new GovernanceInputError('operations', 'create_token_account: one account per request');
      return tx.createTokenAccount({ url: urls[0]!, tokenUrl: TOKEN_ACCOUNT_TOKEN });
    }
    const pages = createKeyPageHashes(ops);
    if (pages.length !== 1) throw new GovernanceInputError('operations', 'create_key_page: one page per request');
    return tx.createKeyPage(pages[0]!);
  } catch (e) {
    if (e instanceof LedgerInputError) throw new GovernanceInputError(`operations.${e.field}`, e.message);
    throw e;
  }
}
