/**
 * The ledger client's reads: accounts and key pages, transactions (with their signatures), an account's pending
 * transactions, receipts, data entries and the network's oracle price. Every read is a `query` (or
 * `network-status`) call, retried by the transport when it failed in transit.
 */
import { LedgerError, isNotFound } from './errors.js';
import { dataEntry, parseMessageRecord, splitTxId } from './records.js';
import { verifyReceipt, type Receipt } from './receipt.js';
import type { LedgerRpc } from './rpc.js';
import { bytesArg, toHex } from './signing.js';
import type { AccountInfo, DataEntryInfo, KeyPageInfo, LedgerClient, NetworkInfo, PendingTx, ReceiptInfo, TxStatus } from './types.js';
import { parseAccUrl } from './urls.js';

export type LedgerQueries = Pick<
  LedgerClient,
  | 'networkStatus'
  | 'queryAccount'
  | 'tryQueryAccount'
  | 'queryKeyPage'
  | 'getTransaction'
  | 'listPending'
  | 'getReceipt'
  | 'readDataEntries'
  | 'readLatestDataEntry'
  | 'acmeForCredits'
>;

export function ledgerQueries({ call }: LedgerRpc): LedgerQueries {
  async function queryAccount(u: string): Promise<AccountInfo> {
    const scope = parseAccUrl(u, 'url').toString();
    const r = await call<any>('query', { scope, query: { queryType: 'default' } });
    const a = r?.account ?? {};
    return {
      url: String(a.url ?? scope),
      type: String(a.type ?? 'unknown'),
      authorities: (a.authorities ?? []).map((x: any) => ({ url: String(x.url), disabled: !!x.disabled })),
      creditBalance: a.creditBalance !== undefined || a.type === 'keyPage' || a.type === 'liteIdentity' ? Number(a.creditBalance ?? 0) : undefined,
      balance: a.balance !== undefined ? String(a.balance) : undefined,
      raw: a,
      pending: (r?.pending?.records ?? []).map((x: any) => String(x.value)),
    };
  }

  async function queryKeyPage(u: string): Promise<KeyPageInfo> {
    const a = await queryAccount(u);
    if (a.type !== 'keyPage') throw new LedgerError(`${a.url} is a ${a.type}, not a key page`, 'badRequest');
    const raw = a.raw;
    return {
      url: a.url,
      version: Number(raw.version ?? 0),
      acceptThreshold: Number(raw.acceptThreshold ?? raw.threshold ?? 1),
      rejectThreshold: Number(raw.rejectThreshold ?? 0),
      responseThreshold: Number(raw.responseThreshold ?? 0),
      creditBalance: Number(raw.creditBalance ?? 0),
      keys: (raw.keys ?? []).map((k: any) => ({ publicKeyHash: k.publicKeyHash, delegate: k.delegate, lastUsedOn: Number(k.lastUsedOn ?? 0) })),
    };
  }

  async function getTransaction(txIdOrHash: string, principal?: string): Promise<TxStatus> {
    const { txId } = splitTxId(txIdOrHash, principal);
    const r = await call<any>('query', { scope: txId, query: { queryType: 'default' } });
    return parseMessageRecord(r);
  }

  /**
   * The account's pending transactions from `start`: all of them (up to `count` when given), read a page of at most
   * 100 at a time until the node's `total`. Each page is one query with the client's timeout and read retries. More
   * than 10,000 is refused (a LedgerError, not a silently shortened list: pending discovery must not take it as
   * complete). A transaction that leaves the list between two pages can shift a later one past the next page's start.
   */
  async function listPending(account: string, o: { start?: number; count?: number } = {}): Promise<PendingTx[]> {
    const PAGE = 100;
    const MAX = 10_000;
    const scope = parseAccUrl(account, 'account').toString();
    const want = o.count ?? Infinity;
    const out: PendingTx[] = [];
    let start = o.start ?? 0;
    while (out.length < want) {
      const count = Math.min(PAGE, want - out.length);
      const r = await call<any>('query', { scope, query: { queryType: 'pending', range: { start, count, expand: true } } });
      const records: any[] = r?.records ?? [];
      for (const rec of records) {
        if (rec?.recordType === 'message') out.push(parseMessageRecord(rec));
        else if (rec?.recordType === 'txID' && rec.value) out.push(await getTransaction(String(rec.value)));
      }
      start += records.length;
      const total = Number(r?.total ?? 0);
      // an empty page ends it too (a node that reports more than it gives would otherwise be asked forever)
      if (records.length === 0 || !(start < total)) break;
      if (out.length >= MAX && want > MAX) throw new LedgerError(`${scope} has ${total} pending transactions; more than ${MAX} are not listed`, 'badRequest');
    }
    return out.length > want ? out.slice(0, want) : out;
  }

  async function getReceipt(account: string, txHash: string): Promise<ReceiptInfo> {
    const scope = parseAccUrl(account, 'account').toString();
    const hash = toHex(bytesArg(txHash, 'txHash', 32));
    const r = await call<any>('query', { scope, query: { queryType: 'chain', name: 'main', entry: hash, includeReceipt: { forAny: true } } });
    const rc = r?.receipt;
    if (!rc) throw new LedgerError(`no receipt for ${hash} on ${scope}`, 'notFound');
    const receipt: Receipt = { ...rc, entries: (rc.entries ?? []).map((e: any) => ({ hash: String(e.hash), right: !!e.right })) };
    return {
      account: scope,
      txHash: hash,
      index: Number(r.index ?? 0),
      receipt,
      verified: verifyReceipt(receipt, { expectStart: hash }),
      simulated: typeof r.simulated === 'string' ? r.simulated : undefined,
    };
  }

  async function readDataEntries(account: string, o: { start?: number; count?: number } = {}): Promise<DataEntryInfo[]> {
    const scope = parseAccUrl(account, 'account').toString();
    const r = await call<any>('query', { scope, query: { queryType: 'data', range: { start: o.start ?? 0, count: o.count ?? 100, expand: true } } });
    return (r?.records ?? []).map(dataEntry);
  }

  async function readLatestDataEntry(account: string): Promise<DataEntryInfo> {
    const scope = parseAccUrl(account, 'account').toString();
    return dataEntry(await call<any>('query', { scope, query: { queryType: 'data' } }));
  }

  async function networkStatus(): Promise<NetworkInfo> {
    const r = await call<any>('network-status', { partition: 'Directory' });
    const price = Number(r?.oracle?.price);
    if (!Number.isSafeInteger(price) || price <= 0) throw new LedgerError('network-status: no oracle price', 'badRequest');
    return { oraclePrice: price, executorVersion: r?.executorVersion, raw: r };
  }

  return {
    networkStatus,
    queryAccount,
    async tryQueryAccount(u: string) {
      try {
        return await queryAccount(u);
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    queryKeyPage,
    getTransaction,
    listPending,
    getReceipt,
    readDataEntries,
    readLatestDataEntry,
    async acmeForCredits(credits: bigint | number) {
      const { oraclePrice } = await networkStatus();
      const c = BigInt(credits);
      const num = c * 100n * 100_000_000n;
      const den = BigInt(oraclePrice);
      return { amount: (num + den - 1n) / den, oracle: oraclePrice };
    },
  };
}
