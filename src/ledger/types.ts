/**
 * What the ledger client answers and takes: the node's accounts, transactions, signatures and receipts as the
 * gateway reads them, the keys it holds, a prepared external signature, and the LedgerClient interface itself.
 */
import type { core, messaging } from 'accumulate.js';
import type { Receipt } from './receipt.js';
import type { TxOptions, Vote } from './signing.js';

export type FetchLike = (
  input: string,
  init: { method: string; headers: Record<string, string>; body: string; signal?: AbortSignal },
) => Promise<{ ok: boolean; status: number; text(): Promise<string> }>;

export interface LedgerClientOptions {
  /** Node base URL (e.g. http://127.0.0.1:26660) or the full v3 endpoint ending in /v3 */
  url: string;
  fetch?: FetchLike;
  /** per-request timeout, default 15 s */
  timeoutMs?: number;
  /**
   * recentKeyPage (./page-cache.ts) answers from reads of a key page at most this old (milliseconds; default 0: read
   * each time); every submission through the client drops them. Signatures are always prepared from live reads.
   */
  signerCacheMs?: number;
  /** first poll interval of waitForTransaction (then ×1.5 per poll up to 500 ms), default 25 ms */
  pollIntervalMs?: number;
  /**
   * Pauses before retrying a read (`query`, `network-status`) that failed in transit: connection refused or reset,
   * or an HTTP 5xx/429 that is not a JSON-RPC answer. Default [50, 200] (two retries); [] turns retries off.
   * Timeouts, JSON-RPC errors and submissions are never retried here.
   */
  readRetryDelaysMs?: readonly number[];
}

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
  /**
   * Poll until the transaction is final (delivered or failed), or with until 'recorded' until it is at least pending.
   * `waitProduced`: after delivery also wait for the synthetic transactions it produced (credit/token deposits),
   * so e.g. the credits of an AddCredits are spendable when this returns. `signature`: the id of the signature
   * message this caller submitted (signatureMessageId); when its block refuses it, the transaction stays pending
   * without it, so the wait ends at once with LedgerTxFailedError (the signature's error code) instead of at the
   * timeout.
   */
  waitForTransaction(
    txId: string,
    opts?: { timeoutMs?: number; until?: 'final' | 'recorded'; throwOnFailure?: boolean; waitProduced?: boolean; signature?: string },
  ): Promise<TxStatus>;
  listPending(account: string, opts?: { start?: number; count?: number }): Promise<PendingTx[]>;
  getReceipt(account: string, txHash: string): Promise<ReceiptInfo>;
  readDataEntries(account: string, opts?: { start?: number; count?: number }): Promise<DataEntryInfo[]>;
  readLatestDataEntry(account: string): Promise<DataEntryInfo>;
  /** ACME base units needed for `credits` whole credits at the live oracle */
  acmeForCredits(credits: bigint | number): Promise<{ amount: bigint; oracle: number }>;
  /** a timestamp strictly above the key's lastUsedOn and every timestamp this client issued (the clock in milliseconds, or above) */
  nextTimestamp(signerUrl: string, publicKey: Uint8Array | string): Promise<number>;
}
