/**
 * Transaction body builders for the flows (accumulate.js core types). Inputs are validated here so that a
 * malformed URL or key hash fails before anything is hashed or sent.
 */
import { core } from 'accumulate.js';
import { LedgerInputError } from './errors.js';
import { bytesArg } from './signing.js';
import { parseAccUrl } from './urls.js';

const url = (u: string, field: string) => parseAccUrl(u, field);
const keyHash = (h: Uint8Array | string, field = 'publicKeyHash') => bytesArg(h, field, 32);

export function createIdentity(a: { url: string; keyBookUrl?: string; publicKeyHash?: Uint8Array | string; authorities?: string[] }): core.CreateIdentity {
  if (a.keyBookUrl && !a.publicKeyHash) throw new LedgerInputError('publicKeyHash: required with keyBookUrl', 'publicKeyHash');
  return new core.CreateIdentity({
    url: url(a.url, 'url'),
    keyBookUrl: a.keyBookUrl ? url(a.keyBookUrl, 'keyBookUrl') : undefined,
    keyHash: a.publicKeyHash ? keyHash(a.publicKeyHash) : undefined,
    authorities: a.authorities?.map((x) => url(x, 'authorities')),
  });
}

/** AddCredits paying `amount` ACME base units (1e-8) at the live oracle price. */
export function addCredits(a: { recipient: string; amount: bigint; oracle: number }): core.AddCredits {
  if (typeof a.amount !== 'bigint' || a.amount <= 0n) throw new LedgerInputError('amount: expected a positive bigint of ACME base units', 'amount');
  if (!Number.isSafeInteger(a.oracle) || a.oracle <= 0) throw new LedgerInputError('oracle: expected the positive oracle price', 'oracle');
  return new core.AddCredits({ recipient: url(a.recipient, 'recipient'), amount: a.amount, oracle: a.oracle });
}

/** ACME base units needed to buy `credits` whole credits at `oracle` (credit units per ACME): ceil(credits*100*1e8/oracle). */
export function acmeForCredits(credits: bigint | number, oracle: number): bigint {
  const c = BigInt(credits);
  if (c <= 0n) throw new LedgerInputError('credits: expected a positive integer', 'credits');
  const num = c * 100n * 100_000_000n;
  const den = BigInt(oracle);
  return (num + den - 1n) / den;
}

export function createDataAccount(a: { url: string; authorities?: string[] }): core.CreateDataAccount {
  return new core.CreateDataAccount({ url: url(a.url, 'url'), authorities: a.authorities?.map((x) => url(x, 'authorities')) });
}

export function createTokenAccount(a: { url: string; tokenUrl?: string }): core.CreateTokenAccount {
  return new core.CreateTokenAccount({ url: url(a.url, 'url'), tokenUrl: url(a.tokenUrl ?? 'acc://ACME', 'tokenUrl') });
}

export type KeyPageOp =
  | { type: 'addKey'; publicKeyHash: Uint8Array | string }
  | { type: 'removeKey'; publicKeyHash: Uint8Array | string }
  | { type: 'updateKey'; oldPublicKeyHash: Uint8Array | string; newPublicKeyHash: Uint8Array | string }
  | { type: 'addDelegate'; delegate: string }
  | { type: 'removeDelegate'; delegate: string }
  | { type: 'setThreshold'; threshold: number }
  | { type: 'setRejectThreshold'; threshold: number }
  | { type: 'setResponseThreshold'; threshold: number };

function threshold(n: number, field: string) {
  if (!Number.isSafeInteger(n) || n < 0) throw new LedgerInputError(`${field}: expected a non-negative integer`, field);
  return n;
}

export function updateKeyPage(ops: KeyPageOp[]): core.UpdateKeyPage {
  if (!ops.length) throw new LedgerInputError('operations: at least one operation is required', 'operations');
  const operation = ops.map((op): core.KeyPageOperationArgs => {
    switch (op.type) {
      case 'addKey':
        return { type: 'add', entry: { keyHash: keyHash(op.publicKeyHash) } };
      case 'removeKey':
        return { type: 'remove', entry: { keyHash: keyHash(op.publicKeyHash) } };
      case 'updateKey':
        return {
          type: 'update',
          oldEntry: { keyHash: keyHash(op.oldPublicKeyHash, 'oldPublicKeyHash') },
          newEntry: { keyHash: keyHash(op.newPublicKeyHash, 'newPublicKeyHash') },
        };
      case 'addDelegate':
        return { type: 'add', entry: { delegate: url(op.delegate, 'delegate') } };
      case 'removeDelegate':
        return { type: 'remove', entry: { delegate: url(op.delegate, 'delegate') } };
      case 'setThreshold':
        if (op.threshold < 1) throw new LedgerInputError('threshold: must be at least 1', 'threshold');
        return { type: 'setThreshold', threshold: threshold(op.threshold, 'threshold') };
      case 'setRejectThreshold':
        return { type: 'setRejectThreshold', threshold: threshold(op.threshold, 'threshold') };
      case 'setResponseThreshold':
        return { type: 'setResponseThreshold', threshold: threshold(op.threshold, 'threshold') };
      default:
        throw new LedgerInputError(`operations: unknown key page operation ${(op as { type?: unknown }).type}`, 'operations');
    }
  });
  return new core.UpdateKeyPage({ operation });
}

export type AccountAuthOp =
  | { type: 'addAuthority'; authority: string }
  | { type: 'removeAuthority'; authority: string }
  | { type: 'enable'; authority: string }
  | { type: 'disable'; authority: string };

export function updateAccountAuth(ops: AccountAuthOp[]): core.UpdateAccountAuth {
  if (!ops.length) throw new LedgerInputError('operations: at least one operation is required', 'operations');
  return new core.UpdateAccountAuth({
    operations: ops.map((op) => {
      if (!['addAuthority', 'removeAuthority', 'enable', 'disable'].includes(op.type)) {
        throw new LedgerInputError(`operations: unknown account auth operation ${op.type}`, 'operations');
      }
      return { type: op.type, authority: url(op.authority, 'authority') } as core.AccountAuthOperationArgs;
    }),
  });
}

export function createKeyPage(publicKeyHashes: (Uint8Array | string)[]): core.CreateKeyPage {
  if (!publicKeyHashes.length) throw new LedgerInputError('keys: at least one key is required', 'keys');
  return new core.CreateKeyPage({ keys: publicKeyHashes.map((h) => ({ keyHash: keyHash(h) })) });
}

/** WriteData with a double-hash entry (the only kind the network accepts). Parts are raw bytes or UTF-8 strings. */
export function writeData(parts: (Uint8Array | string)[], opts: { scratch?: boolean; writeToState?: boolean } = {}): core.WriteData {
  if (!parts.length) throw new LedgerInputError('data: at least one part is required', 'data');
  if (parts.length > 100) throw new LedgerInputError('data: at most 100 parts', 'data');
  const data = parts.map((p) => (typeof p === 'string' ? new TextEncoder().encode(p) : p));
  return new core.WriteData({
    entry: new core.DoubleHashDataEntry({ data }),
    scratch: opts.scratch || undefined,
    writeToState: opts.writeToState || undefined,
  });
}

/** Entry hash of a double-hash data entry (accumulate.js). */
export function dataEntryHash(parts: (Uint8Array | string)[]): Uint8Array {
  return writeData(parts).entry!.hash();
}

export function sendTokens(to: { url: string; amount: bigint }[]): core.SendTokens {
  if (!to.length) throw new LedgerInputError('to: at least one recipient is required', 'to');
  return new core.SendTokens({
    to: to.map((t) => {
      if (typeof t.amount !== 'bigint' || t.amount <= 0n) throw new LedgerInputError('amount: expected a positive bigint', 'amount');
      return { url: url(t.url, 'to.url'), amount: t.amount };
    }),
  });
}
