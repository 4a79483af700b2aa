/**
 * LedgerClient: the gateway's view of an Accumulate network, over v3 JSON-RPC (POST `<url>/v3`) with fetch.
 * accumulate.js supplies types, encoding and hashes; transport is ours.
 */
import { core, messaging } from 'accumulate.js';
import { httpFetch } from '../net/fetch.js';
import {
  LedgerError,
  LedgerInputError,
  LedgerRpcError,
  LedgerSubmitError,
  LedgerTransportError,
  LedgerTxFailedError,
  STATUS,
  isNotFound,
} from './errors.js';
import {
  attachSignature,
  buildTransaction,
  bytesArg,
  hashToSign,
  metadataHash,
  keyFromSeed,
  prepareSigning,
  signHash,
  signatureMetadata,
  toHex,
  transactionHash,
  verifyExternalSignature,
  verifySignature,
  type TxOptions,
  type Vote,
} from './signing.js';
import { verifyReceipt, type Receipt } from './receipt.js';
import { liteIdentityUrl, normUrl, parseAccUrl } from './urls.js';

export type FetchLike = (input: string, init: { method: string; headers: Record<string, string>; body: string; signal?: AbortSignal }) => Promise<{ ok: boolean; status: number; text(): Promise<string> }>;

export interface LedgerClientOptions {
  /** Node base URL (e.g. http://127.0.0.1:26660) or the full v3 endpoint ending in /v3 */
  url: string;
  fetch?: FetchLike;
  /** per-request timeout, default 15 s */
  timeoutMs?: number;
  /** first poll interval of waitForTransaction (then ×1.5 per poll up to 500 ms), default 25 ms */
  pollIntervalMs?: number;
  /**
   * Pauses before retrying a read (`query`, `network-status`) that failed in transit: connection refused or reset,
   * or an HTTP 5xx/429 that is not a JSON-RPC answer. Default [50, 200] (two retries); [] turns retries off.
   * Timeouts, JSON-RPC errors and submissions are never retried here.
   */
  readRetryDelaysMs?: readonly number[];
}

/** Methods that only read, so sending them again cannot change the ledger. */
const READ_METHODS = new Set(['query', 'network-status']);

export interface KeyEntryInfo {
  publicKeyHash?: string;
  delegate?: string;
  lastUsedOn: number;
}
export interface KeyPageInfo {
  url: string;
  version: number;
  acceptThreshold: number;
  rejectThreshold: number;
  responseThreshold: number;
  /** credit units (1 credit = 100 units) */
  creditBalance: number;
  keys: KeyEntryInfo[];
}
export interface AccountInfo {
  url: string;
  type: string;
  authorities: { url: string; disabled: boolean }[];
  /** key pages and lite identities: credit units */
  creditBalance?: number;
  /** token accounts: base units as a decimal string */
  balance?: string;
  /** the account JSON exactly as the node returned it */
  raw: Record<string, any>;
  /** TxIDs listed as pending on the account */
  pending: string[];
}
export interface NetworkInfo {
  /** credit units per ACME (USD/ACME × 1e4) */
  oraclePrice: number;
  executorVersion?: string;
  raw: Record<string, any>;
}
export interface SubmitResult {
  txId: string;
  txHash: string;
  submissions: any[];
}
export interface SignatureInfo {
  type: string;
  signer: string;
  publicKey?: string;
  signerVersion?: number;
  timestamp?: number;
  vote: Vote;
  delegators: string[];
  id?: string;
  /** the signature JSON exactly as the node returned it (with delegation wrappers and the signature bytes) */
  raw: any;
}
export interface AuthorityVoteInfo {
  authority: string;
  origin?: string;
  vote: Vote;
}
export interface TxStatus {
  txId: string;
  txHash: string;
  principal: string;
  type: string;
  /** Accumulate status label: pending, delivered, rejected, expired, insufficientCredits ... */
  status: string;
  statusNo?: number;
  error?: { message: string; code: string };
  result?: any;
  received?: number;
  /** TxIDs of synthetic transactions this one produced (deposits) */
  produced: string[];
  delivered: boolean;
  pending: boolean;
  failed: boolean;
  transaction: any;
  signatures: SignatureInfo[];
  authorityVotes: AuthorityVoteInfo[];
}
export type PendingTx = TxStatus;
export interface DataEntryInfo {
  index: number;
  entryHash: string;
  txHash?: string;
  /** parts as hex */
  data: string[];
}
export interface ReceiptInfo {
  account: string;
  txHash: string;
  index: number;
  receipt: Receipt;
  /** true when the fold of entries from start reaches anchor and start == txHash */
  verified: boolean;
  /** set by ledger-sim: the receipt is not anchored to a real network */
  simulated?: string;
}

/** A key the gateway holds (sponsor, validators). */
export interface HeldKey {
  /** 32-byte Ed25519 seed (or 64-byte secret key), bytes or hex */
  privateKey: Uint8Array | string;
  /** key page URL, or the lite identity URL */
  signerUrl: string;
  /** read fresh from the ledger when omitted */
  signerVersion?: number;
  /** delegation path, innermost first */
  delegators?: string[];
}

export interface PrepareExternalArgs {
  /** new transaction: principal + body (+ header options) */
  principal?: string;
  body?: core.TransactionBody | core.TransactionBodyArgs;
  txOptions?: TxOptions;
  /** or an existing (pending) transaction to vote on, by hash or TxID */
  pendingTx?: string;
  /** key page (or lite identity) that signs */
  signerUrl: string;
  publicKey: Uint8Array | string;
  vote?: Vote;
  delegators?: string[];
  /** read fresh when omitted */
  signerVersion?: number;
  /** default: the clock in milliseconds, above the key's lastUsedOn and what this client issued for the key */
  timestamp?: number;
}

export interface PreparedSignature {
  /** undefined when voting on an existing transaction */
  transaction?: core.Transaction;
  transactionJson?: any;
  metadata: core.ED25519Signature | core.DelegatedSignature;
  metadataJson: any;
  metadataHash: string;
  txHash: string;
  txId: string;
  /** SHA-256(metadataHash || txHash), hex; the client signs these raw 32 bytes */
  hashToSign: string;
  signerUrl: string;
  signerVersion: number;
  timestamp: number;
  publicKey: string;
  vote: Vote;
  delegators: string[];
  initiator: boolean;
}

export interface LedgerClient {
  readonly url: string;
  readonly endpoint: string;
  /** raw JSON-RPC call; protocol errors become LedgerRpcError with the Accumulate status label */
  call<T = any>(method: string, params: unknown): Promise<T>;
  networkStatus(): Promise<NetworkInfo>;
  queryAccount(url: string): Promise<AccountInfo>;
  /** undefined when the account does not exist */
  tryQueryAccount(url: string): Promise<AccountInfo | undefined>;
  queryKeyPage(url: string): Promise<KeyPageInfo>;
  /** lite ACME token account faucet (simulators and test networks) */
  faucet(liteTokenAccount: string): Promise<{ txId: string }>;
  /** submit an envelope; throws LedgerSubmitError if any message is refused */
  submit(envelope: messaging.EnvelopeArgs | messaging.Envelope): Promise<SubmitResult>;
  /** build, sign with a held key and submit (initiates the transaction) */
  signAndSubmit(principal: string, body: core.TransactionBody | core.TransactionBodyArgs, key: HeldKey, opts?: TxOptions): Promise<SubmitResult>;
  /** add a held key's vote to an existing pending transaction */
  signPending(pendingTx: string, key: HeldKey, vote?: Vote): Promise<SubmitResult>;
  prepareExternalSignature(args: PrepareExternalArgs): Promise<PreparedSignature>;
  /** verify the raw Ed25519 signature over hashToSign, then submit; throws LedgerInputError (unauthenticated) on a bad signature */
  submitExternalSignature(prepared: PreparedSignature, signature: Uint8Array | string): Promise<SubmitResult>;
  getTransaction(txIdOrHash: string, principal?: string): Promise<TxStatus>;
  /** poll until the transaction is executed (delivered or failed); `pending` resolves once it is recorded as pending */
  /**
   * Poll until the transaction is final (delivered or failed), or with until 'recorded' until it is at least pending.
   * `waitProduced`: after delivery also wait for the synthetic transactions it produced (credit/token deposits),
   * so e.g. the credits of an AddCredits are spendable when this returns.
   */
  waitForTransaction(txId: string, opts?: { timeoutMs?: number; until?: 'final' | 'recorded'; throwOnFailure?: boolean; waitProduced?: boolean }): Promise<TxStatus>;
  listPending(account: string, opts?: { start?: number; count?: number }): Promise<PendingTx[]>;
  getReceipt(account: string, txHash: string): Promise<ReceiptInfo>;
  readDataEntries(account: string, opts?: { start?: number; count?: number }): Promise<DataEntryInfo[]>;
  readLatestDataEntry(account: string): Promise<DataEntryInfo>;
  /** ACME base units needed for `credits` whole credits at the live oracle */
  acmeForCredits(credits: bigint | number): Promise<{ amount: bigint; oracle: number }>;
  /** a timestamp strictly above the key's lastUsedOn and every timestamp this client issued (the clock in milliseconds, or above) */
  nextTimestamp(signerUrl: string, publicKey: Uint8Array | string): Promise<number>;
}

const VOTES: Record<string, Vote> = { accept: 'accept', reject: 'reject', abstain: 'abstain', '0': 'accept', '1': 'reject', '2': 'abstain' };

function txIdOf(hash: string, principal: string): string {
  const p = parseAccUrl(principal, 'principal').toString();
  return `acc://${hash}@${p.slice('acc://'.length)}`;
}

function splitTxId(s: string, principal?: string): { hash: string; txId: string } {
  const m = /^(?:acc:\/\/)?([0-9a-fA-F]{64})(?:@(.+))?$/.exec(s.trim());
  if (!m) throw new LedgerInputError(`txId: expected acc://<64 hex>@<account> or a 64-hex hash, got ${JSON.stringify(s)}`, 'txId');
  const hash = m[1]!.toLowerCase();
  if (m[2]) return { hash, txId: `acc://${hash}@${m[2]}` };
  if (!principal) throw new LedgerInputError('txId: a bare hash needs the principal account', 'txId');
  return { hash, txId: txIdOf(hash, principal) };
}

function parseSignature(sig: any, id?: string): SignatureInfo | undefined {
  if (!sig || typeof sig !== 'object') return undefined;
  const delegators: string[] = [];
  let s = sig;
  while (s?.type === 'delegated') {
    delegators.unshift(String(s.delegator));
    s = s.signature;
  }
  // delegators is innermost-first (same order as signatureMetadata)
  if (!s || (s.type !== 'ed25519' && s.type !== 'legacyED25519' && s.type !== 'rcd1')) return undefined;
  return {
    type: s.type,
    signer: String(s.signer),
    publicKey: s.publicKey,
    signerVersion: s.signerVersion,
    timestamp: s.timestamp,
    vote: VOTES[String(s.vote ?? 'accept')] ?? 'accept',
    delegators,
    id,
    raw: sig,
  };
}

function parseMessageRecord(r: any): TxStatus {
  const txn = r?.message?.transaction;
  const hash = String(r?.id ?? '').match(/[0-9a-fA-F]{64}/)?.[0]?.toLowerCase() ?? '';
  const status = String(r?.status ?? 'unknown');
  const statusNo = typeof r?.statusNo === 'number' ? r.statusNo : (STATUS as Record<string, number>)[status];
  const signatures: SignatureInfo[] = [];
  const authorityVotes: AuthorityVoteInfo[] = [];
  for (const set of r?.signatures?.records ?? []) {
    for (const m of set?.signatures?.records ?? []) {
      const sig = m?.message?.signature;
      if (m?.message?.type !== 'signature' || !sig) continue;
      if (sig.type === 'authority') {
        authorityVotes.push({ authority: String(sig.authority), origin: sig.origin, vote: VOTES[String(sig.vote ?? 'accept')] ?? 'accept' });
      } else {
        const info = parseSignature(sig, m.id);
        if (info) signatures.push(info);
      }
    }
  }
  return {
    txId: String(r?.id ?? ''),
    txHash: hash,
    principal: String(txn?.header?.principal ?? ''),
    type: String(txn?.body?.type ?? r?.message?.type ?? 'unknown'),
    status,
    statusNo,
    error: r?.error ? { message: String(r.error.message ?? ''), code: String(r.error.code ?? status) } : undefined,
    result: r?.result,
    received: r?.received,
    produced: (r?.produced?.records ?? []).map((x: any) => String(x?.value ?? '')).filter((x: string) => x),
    delivered: status === 'delivered',
    pending: status === 'pending' || status === 'remote',
    failed: (statusNo ?? 0) >= 400,
    transaction: txn,
    signatures,
    authorityVotes,
  };
}

export function createLedgerClient(opts: LedgerClientOptions): LedgerClient {
  let base: string;
  try {
    const u = new globalThis.URL(opts.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    base = opts.url.replace(/\/+$/, '');
  } catch {
    throw new LedgerInputError(`url: expected an http(s) node URL, got ${JSON.stringify(opts.url)}`, 'url');
  }
  const endpoint = base.endsWith('/v3') ? base : `${base}/v3`;
  const url = endpoint.slice(0, -'/v3'.length);
  const doFetch: FetchLike = opts.fetch ?? httpFetch;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const pollMs = opts.pollIntervalMs ?? 25;
  let rpcId = 0;
  const issued = new Map<string, number>();

  const readRetryDelaysMs = opts.readRetryDelaysMs ?? [50, 200];

  async function call<T = any>(method: string, params: unknown): Promise<T> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    const retries = READ_METHODS.has(method) ? readRetryDelaysMs : [];
    let text: string;
    for (let attempt = 0; ; attempt++) {
      let transient = false;
      try {
        const res = await doFetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await res.text();
        if (!res.ok && !text.startsWith('{')) {
          transient = res.status >= 500 || res.status === 429;
          throw new LedgerTransportError(`ledger ${endpoint}: HTTP ${res.status}`);
        }
        break;
      } catch (e) {
        const timedOut = (e as Error)?.name === 'TimeoutError' || (e as Error)?.name === 'AbortError';
        if (!(e instanceof LedgerError)) transient = !timedOut;
        if (transient && attempt < retries.length) {
          await sleep(retries[attempt]!);
          continue;
        }
        if (e instanceof LedgerError) throw e;
        throw new LedgerTransportError(`ledger ${endpoint} unreachable: ${(e as Error).message}`, { cause: e });
      }
    }
    let msg: any;
    try {
      msg = JSON.parse(text);
    } catch {
      throw new LedgerTransportError(`ledger ${endpoint}: response is not JSON`);
    }
    if (msg?.error) {
      const e = msg.error;
      const data = typeof e.data === 'string' ? safeJson(e.data) ?? e.data : e.data;
      const code = typeof data === 'object' && data?.code ? String(data.code) : e.code <= -33000 ? 'unknownError' : 'rpcError';
      throw new LedgerRpcError(String(e.message ?? 'JSON-RPC error'), code, Number(e.code), data);
    }
    return msg.result as T;
  }

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

  async function signerState(signerUrl: string, publicKey: Uint8Array): Promise<{ version: number; lastUsedOn: number }> {
    const a = await queryAccount(signerUrl);
    if (a.type === 'liteIdentity') {
      if (liteIdentityUrl(publicKey).toLowerCase() !== normUrl(signerUrl)) throw new LedgerInputError(`publicKey: does not belong to lite identity ${signerUrl}`, 'publicKey');
      return { version: 1, lastUsedOn: Number(a.raw.lastUsedOn ?? 0) };
    }
    if (a.type !== 'keyPage') throw new LedgerInputError(`signerUrl: ${a.url} is a ${a.type}, not a key page or lite identity`, 'signerUrl');
    const pkh = toHex(sha256Pk(publicKey));
    const entry = (a.raw.keys ?? []).find((k: any) => String(k.publicKeyHash ?? '').toLowerCase() === pkh);
    if (!entry) throw new LedgerInputError(`publicKey: not a key of ${a.url}`, 'publicKey');
    return { version: Number(a.raw.version ?? 1), lastUsedOn: Number(entry.lastUsedOn ?? 0) };
  }

  /**
   * A signature timestamp in milliseconds, as accumulate.js and the Go SDK use (Date.now(), UnixMilli), so that a
   * key the gateway signed with keeps working with the standard tools. Never at or below the key's lastUsedOn (a
   * key already used with a larger timestamp, e.g. microseconds, continues from there) nor at or below what this
   * client issued for the key before (two signatures in one millisecond still increase).
   */
  function issue(signerUrl: string, pk: Uint8Array, lastUsedOn: number): number {
    const k = `${normUrl(signerUrl)}|${toHex(pk)}`;
    const ts = Math.max(lastUsedOn + 1, Date.now(), (issued.get(k) ?? 0) + 1);
    issued.set(k, ts);
    return ts;
  }

  async function nextTimestamp(signerUrl: string, publicKey: Uint8Array | string): Promise<number> {
    const pk = bytesArg(publicKey, 'publicKey', 32);
    const st = await signerState(signerUrl, pk);
    return issue(signerUrl, pk, st.lastUsedOn);
  }

  async function submit(envelope: messaging.EnvelopeArgs | messaging.Envelope): Promise<SubmitResult> {
    const env = envelope instanceof messaging.Envelope ? envelope : new messaging.Envelope(envelope);
    const json = env.asObject();
    const res = await call<any[]>('submit', { envelope: json });
    const list = Array.isArray(res) ? res : [res];
    throwIfRefused(list, 'submission refused');
    const txn = env.transaction?.[0];
    let txHash: string;
    let txId: string;
    if (txn) {
      txHash = toHex(new core.Transaction(txn.asObject()).hash());
      txId = txIdOf(txHash, txn.header!.principal!.toString());
    } else {
      const first = list.find((s) => s?.status?.txID);
      const sig = env.signatures?.[0] as any;
      txHash = sig ? toHex(innerKey(sig).transactionHash ?? new Uint8Array()) : '';
      txId = first?.status?.txID ?? '';
    }
    return { txId, txHash, submissions: list };
  }

  async function getTransaction(txIdOrHash: string, principal?: string): Promise<TxStatus> {
    const { txId } = splitTxId(txIdOrHash, principal);
    const r = await call<any>('query', { scope: txId, query: { queryType: 'default' } });
    return parseMessageRecord(r);
  }

  /**
   * The transaction to vote on, as the node answered for it, once its body hashes to the requested hash: what a
   * signature commits to is computed here, never taken from the node. Refused when the answer is another
   * transaction, carries no full transaction (a remote reference), or the transaction is already final.
   */
  async function verifiedTransaction(pendingTx: string): Promise<TxStatus> {
    const { hash: want, txId } = splitTxId(pendingTx);
    const existing = await getTransaction(txId);
    const untrusted = (why: string) => new LedgerTransportError(`ledger ${endpoint}: the answer for transaction ${txId} ${why}; refusing to sign it`);
    if (existing.txHash !== want) throw untrusted(`names another transaction (${existing.txHash || 'none'})`);
    let got: string;
    try {
      const t = existing.transaction;
      if (!t?.header || !t?.body || t.body.type === 'remote') throw new Error('no full transaction');
      got = toHex(new core.Transaction(t).hash());
    } catch (e) {
      throw untrusted(`does not carry a transaction that can be hashed (${(e as Error).message})`);
    }
    if (got !== want) throw untrusted(`carries a transaction that hashes to ${got}`);
    if (existing.delivered || existing.failed) throw new LedgerError(`transaction ${existing.txId} is no longer pending (${existing.status})`, 'notAllowed');
    return existing;
  }

  async function prepareExternalSignature(a: PrepareExternalArgs): Promise<PreparedSignature> {
    const pk = bytesArg(a.publicKey, 'publicKey', 32);
    const signerUrl = parseAccUrl(a.signerUrl, 'signerUrl').toString();
    const st = await signerState(signerUrl, pk);
    const signerVersion = a.signerVersion ?? st.version;
    const timestamp = a.timestamp ?? issue(signerUrl, pk, st.lastUsedOn);
    const vote = a.vote ?? 'accept';
    const metadata = signatureMetadata({ publicKey: pk, signer: signerUrl, signerVersion, timestamp, vote, delegators: a.delegators });
    if (a.pendingTx) {
      if (a.body || a.principal) throw new LedgerInputError('pendingTx: give either pendingTx or principal+body', 'pendingTx');
      const existing = await verifiedTransaction(a.pendingTx);
      const hash = Uint8Array.from(Buffer.from(existing.txHash, 'hex'));
      const md = metadataHash(metadata);
      const p = { metadataHash: md, hashToSign: hashToSign(md, hash) };
      return {
        metadata,
        metadataJson: metadata.asObject(),
        metadataHash: toHex(p.metadataHash),
        txHash: existing.txHash,
        txId: existing.txId,
        hashToSign: toHex(p.hashToSign),
        signerUrl,
        signerVersion,
        timestamp,
        publicKey: toHex(pk),
        vote,
        delegators: a.delegators ?? [],
        initiator: false,
      };
    }
    if (!a.principal || !a.body) throw new LedgerInputError('principal and body are required for a new transaction', 'body');
    if (vote !== 'accept') throw new LedgerInputError('vote: the initiator of a new transaction must accept', 'vote');
    const txn = buildTransaction(a.principal, a.body, a.txOptions);
    const p = prepareSigning(txn, metadata, true);
    return {
      transaction: txn,
      transactionJson: txn.asObject(),
      metadata,
      metadataJson: metadata.asObject(),
      metadataHash: toHex(p.metadataHash),
      txHash: toHex(p.txHash),
      txId: txIdOf(toHex(p.txHash), txn.header!.principal!.toString()),
      hashToSign: toHex(p.hashToSign),
      signerUrl,
      signerVersion,
      timestamp,
      publicKey: toHex(pk),
      vote,
      delegators: a.delegators ?? [],
      initiator: p.initiator,
    };
  }

  async function submitExternalSignature(prepared: PreparedSignature, signature: Uint8Array | string): Promise<SubmitResult> {
    const sigBytes = bytesArg(signature, 'signature', 64);
    const v = verifyExternalSignature({ hashToSign: prepared.hashToSign, signature: sigBytes, publicKey: prepared.publicKey });
    if (!v.ok) {
      const e = new LedgerInputError(`signature: ${v.reason}`, 'signature');
      throw e;
    }
    const txHash = Uint8Array.from(Buffer.from(prepared.txHash, 'hex'));
    const sig = attachSignature(prepared.metadata, sigBytes, txHash);
    // server-side check from the envelope, exactly as the node will do it
    const check = verifySignature(sig, txHash);
    if (!check.ok) throw new LedgerInputError(`signature: ${check.reason}`, 'signature');
    const env = prepared.transaction
      ? new messaging.Envelope({ transaction: [new core.Transaction(prepared.transaction.asObject())], signatures: [sig] })
      : new messaging.Envelope({ signatures: [sig] });
    const r = await submit(env);
    return { ...r, txId: prepared.txId, txHash: prepared.txHash };
  }

  async function signAndSubmit(principal: string, body: core.TransactionBody | core.TransactionBodyArgs, key: HeldKey, txOpts?: TxOptions): Promise<SubmitResult> {
    const k = keyFromSeed(key.privateKey);
    const prepared = await prepareExternalSignature({
      principal,
      body,
      txOptions: txOpts,
      signerUrl: key.signerUrl,
      publicKey: k.address.publicKey,
      signerVersion: key.signerVersion,
      delegators: key.delegators,
    });
    return submitExternalSignature(prepared, signHash(k, Buffer.from(prepared.hashToSign, 'hex')));
  }

  async function signPending(pendingTx: string, key: HeldKey, vote: Vote = 'accept'): Promise<SubmitResult> {
    const k = keyFromSeed(key.privateKey);
    const prepared = await prepareExternalSignature({ pendingTx, signerUrl: key.signerUrl, publicKey: k.address.publicKey, signerVersion: key.signerVersion, delegators: key.delegators, vote });
    return submitExternalSignature(prepared, signHash(k, Buffer.from(prepared.hashToSign, 'hex')));
  }

  async function waitForTransaction(txId: string, o: { timeoutMs?: number; until?: 'final' | 'recorded'; throwOnFailure?: boolean; waitProduced?: boolean } = {}): Promise<TxStatus> {
    return waitUntilDeadline(txId, Date.now() + (o.timeoutMs ?? 30_000), o);
  }

  /**
   * Pause before poll n+1 of a wait: the configured interval for the first polls (a devnet block is tens of ms,
   * and most waits end within a few blocks), then ×1.5 each poll up to 500 ms (or the interval, if larger), so
   * a long wait on a real node costs a few requests a second rather than forty.
   */
  const FAST_POLLS = 4;
  const pollDelay = (n: number) => Math.min(Math.max(pollMs, 500), pollMs * 1.5 ** Math.max(0, n + 1 - FAST_POLLS));

  async function waitUntilDeadline(txId: string, deadline: number, o: { until?: 'final' | 'recorded'; throwOnFailure?: boolean; waitProduced?: boolean }): Promise<TxStatus> {
    const until = o.until ?? 'final';
    for (let n = 0; ; n++) {
      try {
        const st = await getTransaction(txId);
        if (st.delivered || st.failed || (until === 'recorded' && st.pending)) {
          if (st.failed && o.throwOnFailure) throw new LedgerTxFailedError(`transaction ${st.txId} ${st.status}: ${st.error?.message ?? ''}`, st.status, st.txId);
          if (o.waitProduced && st.delivered) {
            for (const p of st.produced) {
              // within the caller's deadline: the deposits are part of what it waits for
              await waitUntilDeadline(p, deadline, { throwOnFailure: o.throwOnFailure });
            }
          }
          return st;
        }
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new LedgerError(`timed out waiting for ${txId}`, 'timeout');
      await sleep(Math.min(pollDelay(n), left));
    }
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

  function dataEntry(rec: any): DataEntryInfo {
    const txn = rec?.value?.message?.transaction;
    const parts: string[] = (txn?.body?.entry?.data ?? []).map((d: any) => String(d ?? ''));
    const txHash = String(rec?.value?.id ?? '').match(/[0-9a-fA-F]{64}/)?.[0]?.toLowerCase();
    return { index: Number(rec?.index ?? 0), entryHash: String(rec?.entry ?? ''), txHash, data: parts };
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
    url,
    endpoint,
    call,
    networkStatus,
    queryAccount,
    async tryQueryAccount(u) {
      try {
        return await queryAccount(u);
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    queryKeyPage,
    async faucet(lta) {
      const account = parseAccUrl(lta, 'account').toString();
      const r = await call<any>('faucet', { account });
      // the faucet answers one submission, refused in the same shapes as submit's
      throwIfRefused([r], 'faucet refused');
      return { txId: String(r?.status?.txID ?? '') };
    },
    submit,
    signAndSubmit,
    signPending,
    prepareExternalSignature,
    submitExternalSignature,
    getTransaction,
    waitForTransaction,
    listPending,
    getReceipt,
    readDataEntries,
    readLatestDataEntry,
    async acmeForCredits(credits) {
      const { oraclePrice } = await networkStatus();
      const c = BigInt(credits);
      const num = c * 100n * 100_000_000n;
      const den = BigInt(oraclePrice);
      return { amount: (num + den - 1n) / den, oracle: oraclePrice };
    },
    nextTimestamp,
  };
}

/**
 * Throws LedgerSubmitError when a node's submission answer (submit, faucet) refuses a message: `success` not true
 * (the Go node omits it when false) or the status marked failed. Code and message from the refused one's status.
 */
function throwIfRefused(list: any[], fallbackMessage: string): void {
  const bad = list.find((s) => !s || s.success !== true || s.status?.failed === true);
  if (!bad) return;
  const code = String(bad.status?.error?.code ?? bad.status?.code ?? 'unknownError');
  throw new LedgerSubmitError(String(bad.message ?? bad.status?.error?.message ?? fallbackMessage), code, list);
}

function safeJson(s: string): any {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

function innerKey(sig: any): core.ED25519Signature {
  let s = sig;
  while (s instanceof core.DelegatedSignature) s = s.signature;
  return s as core.ED25519Signature;
}

import { sha256 as accSha256 } from 'accumulate.js/common';
import { sleep } from '../net/sleep.js';
function sha256Pk(pk: Uint8Array): Uint8Array {
  return accSha256(pk);
}

/** A PreparedSignature without its accumulate.js objects: what a flow persists between prepare and submit. */
export type StoredPreparedSignature = Omit<PreparedSignature, 'transaction' | 'metadata'>;

/** The JSON-safe part of a PreparedSignature (persist it; rebuild with revivePreparedSignature). */
export function storablePreparedSignature(p: PreparedSignature): StoredPreparedSignature {
  const { transaction: _t, metadata: _m, ...rest } = p;
  return JSON.parse(JSON.stringify(rest, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
}

/**
 * Rebuild a PreparedSignature from its stored form (signatureMetadata from the stored fields, the transaction from
 * transactionJson) and check that both still hash to what was signed, so a tampered or stale record is refused.
 */
export function revivePreparedSignature(s: StoredPreparedSignature): PreparedSignature {
  const metadata = signatureMetadata({
    publicKey: s.publicKey,
    signer: s.signerUrl,
    signerVersion: s.signerVersion,
    timestamp: s.timestamp,
    vote: s.vote,
    delegators: s.delegators,
  });
  if (toHex(metadataHash(metadata)) !== s.metadataHash) throw new LedgerInputError('prepared: signature metadata does not match its stored hash', 'prepared');
  let transaction: core.Transaction | undefined;
  if (s.transactionJson) {
    transaction = new core.Transaction(s.transactionJson);
    if (toHex(transactionHash(transaction)) !== s.txHash) throw new LedgerInputError('prepared: transaction does not match its stored hash', 'prepared');
  }
  return { ...s, transaction, metadata };
}
