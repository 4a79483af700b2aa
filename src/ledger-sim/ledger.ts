/**
 * The simulated Accumulate ledger: accounts, key books/pages, signatures, votes, credits, data, chains.
 * Rules follow the Go executor v2 of Accumulate (docs/ledger.md says which). Every hash comes from accumulate.js.
 *
 * Lifecycle: submit() checks the envelope against current state (like CheckTx) and queues it;
 * step() (the block clock) delivers queued messages, then synthetic messages produced by the previous
 * block (credit and token deposits) land one block later, then pending transactions past expiry fail.
 */
import { TxID, core, messaging } from 'accumulate.js';
import { encode } from 'accumulate.js/encoding';
import { sha256 } from '../ledger/sha256.js';
import { isLiteAuthority, isValidAdiRoot, liteAuthorityValid, liteIdentityUrl, normUrl, parentUrl, parseAccUrl } from '../ledger/urls.js';
import { metadataHash, toHex, unwrapSignature, verifySignature } from '../ledger/signing.js';
import { LedgerInputError, STATUS, type StatusLabel } from '../ledger/errors.js';
import { MerkleChain } from './merkle.js';
import type { Receipt } from '../ledger/receipt.js';

// ---------------------------------------------------------------- state types

export interface AuthorityEntry {
  url: string;
  disabled?: boolean;
}
export interface KeyEntry {
  publicKeyHash?: string;
  delegate?: string;
  lastUsedOn?: number;
}
export type SimAccount =
  | { type: 'liteIdentity'; url: string; creditBalance: number; lastUsedOn: number }
  | { type: 'liteTokenAccount'; url: string; tokenUrl: string; balance: string }
  | { type: 'identity'; url: string; authorities: AuthorityEntry[] }
  | { type: 'keyBook'; url: string; authorities: AuthorityEntry[]; pageCount: number }
  | {
      type: 'keyPage';
      url: string;
      creditBalance: number;
      acceptThreshold: number;
      rejectThreshold: number;
      responseThreshold: number;
      version: number;
      keys: KeyEntry[];
    }
  | { type: 'dataAccount'; url: string; authorities: AuthorityEntry[] }
  | { type: 'tokenAccount'; url: string; authorities: AuthorityEntry[]; tokenUrl: string; balance: string };

type Vote = 'accept' | 'reject' | 'abstain';

interface SetEntry {
  /** key hash hex, or `delegate:<book>` for a delegate book voting as a bloc */
  key: string;
  path: string;
  vote: Vote;
  version: number;
}
interface SigRecord {
  id: string;
  signer: string;
  signature: unknown;
  vote: Vote;
  received: number;
}
interface AuthorityVote {
  vote: Vote;
  origin: string;
  block: number;
}
export interface TxRecord {
  hash: string;
  txid: string;
  principal: string;
  transaction: core.TransactionArgs; // JSON form
  status: StatusLabel;
  error?: { message: string; code: string };
  result?: unknown;
  received: number;
  receivedAt: number;
  initiated: boolean;
  payer?: string;
  paid: number;
  /** header.expire.atTime (ms) */
  expireAt?: number;
  /** major block on which the pending transaction expires */
  expireMajor?: number;
  sets: Record<string, { version: number; entries: SetEntry[] }>;
  authorityVotes: Record<string, AuthorityVote>;
  signatures: SigRecord[];
  produced: string[];
  executedBlock?: number;
  /** synthetic deposit produced by another transaction */
  synthetic?: boolean;
}
interface Synthetic {
  /** hash of the synthetic transaction record (queryable, listed in the cause's `produced`) */
  hash?: string;
  kind: 'depositCredits' | 'depositTokens';
  to: string;
  amount: string; // credits units or token base units
  cause: string; // txid
  refundTo?: string;
}
interface AnchorRecord {
  height: number;
  rootIndex: number;
  block: number;
}
export interface DataEntryRecord {
  entryHash: string;
  txHash: string;
  data: string[];
}

export interface LedgerState {
  version: 1;
  block: number;
  majorBlock?: number;
  blockTime: number;
  accounts: Record<string, SimAccount>;
  txns: Record<string, TxRecord>;
  chains: Record<string, string[]>; // account -> main chain leaves
  anchors: Record<string, AnchorRecord[]>;
  root: string[];
  rootBlocks: number[];
  data: Record<string, DataEntryRecord[]>;
  synthetic: Synthetic[];
  /** signature messages by hash (failed ones too, like the Go node records them) */
  sigs: Record<string, SigMessage>;
}
export interface SigMessage {
  id: string;
  txID?: string;
  signature: unknown;
  status: StatusLabel;
  error?: { message: string; code: string };
  received: number;
}

export interface SimGlobals {
  /** credit units per 1 ACME (= USD/ACME × 1e4). Go -tags testnet default 5e7. */
  oraclePrice: number;
  /** faucet grant in ACME base units (1e-8); Go simulator grants 10 ACME */
  faucetAmount: bigint;
  /** major block interval; the network schedule is every 12 h (cron 0 0,12), aligned to the epoch */
  majorBlockIntervalMs: number;
  /** pending transactions without expire.atTime expire after this many major blocks (network default 14) */
  pendingMajorBlocks: number;
  /** createIdentity fee by label length (index = length-1), units; beyond the table: base */
  createIdentitySliding: number[];
  createIdentityBase: number;
  createSubIdentity: number;
}

export const DEFAULT_GLOBALS: SimGlobals = {
  oraclePrice: 50_000_000,
  faucetAmount: 1_000_000_000n,
  majorBlockIntervalMs: 12 * 3600 * 1000,
  pendingMajorBlocks: 14,
  createIdentitySliding: Array.from({ length: 12 }, (_, i) => 50000 * 2 ** (13 - (i + 1))),
  createIdentityBase: 50000,
  createSubIdentity: 10000,
};

// Fees in credit units (1 credit = 100 units) [go protocol/fee_schedule.go]
const FEE = {
  signature: 1,
  createKeyBook: 10000,
  createKeyPage: 10000,
  createKeyPagePerKey: 100,
  updateKeyPage: 300,
  updateKeyPagePerOp: 100,
  createDataAccount: 2500,
  createTokenAccount: 2500,
  sendTokens: 300,
  sendTokensPerOutput: 100,
  writeDataPer256: 10,
  scratchPer256: 1,
  sizePer256: 10,
  minPurchase: 100,
  refundFloor: 100,
};

export class SimError extends Error {
  constructor(
    readonly code: StatusLabel,
    message: string,
  ) {
    super(message);
    this.name = 'SimError';
  }
}

export interface Submission {
  status: { txID?: string; code: StatusLabel; codeNum?: number; error?: { message: string; code: string } };
  success: boolean;
  message?: string;
}

const ACME = 'acc://ACME';
const isAcme = (u: string) => u.toLowerCase() === 'acc://acme';

/** Display form of a URL (case preserved, as the Go node returns it). */
function disp(u: unknown, field = 'url'): string {
  try {
    return parseAccUrl(String(u), field).toString().replace(/\/+$/, '');
  } catch (e) {
    throw new SimError('badRequest', (e as Error).message);
  }
}

function emptyState(): LedgerState {
  return {
    version: 1,
    block: 0,
    blockTime: Date.now(),
    accounts: {},
    txns: {},
    chains: {},
    anchors: {},
    root: [],
    rootBlocks: [],
    data: {},
    synthetic: [],
    sigs: {},
  };
}

function nUrl(u: unknown, field = 'url'): string {
  try {
    return normUrl(String(u), field);
  } catch (e) {
    throw new SimError('badRequest', (e as Error).message);
  }
}

function bookOfPage(pageUrl: string): string {
  const p = parentUrl(pageUrl);
  if (!p) throw new SimError('badRequest', `${pageUrl} is not a key page URL`);
  return p;
}

function pageIndex(pageUrl: string): number {
  const n = Number(pageUrl.slice(pageUrl.lastIndexOf('/') + 1));
  return Number.isInteger(n) ? n : 0;
}

function sizeChunks(bytes: number): number {
  return Math.max(0, Math.ceil(bytes / 256) - 1);
}

interface Queued {
  txn?: core.Transaction;
  txHash: string;
  signature?: core.Signature;
}

export class SimLedger {
  state: LedgerState;
  readonly globals: SimGlobals;
  private queue: Queued[] = [];
  private dirty = false;

  constructor(opts: { state?: LedgerState; globals?: Partial<SimGlobals> } = {}) {
    this.state = opts.state ?? emptyState();
    this.state.sigs ??= {};
    this.globals = { ...DEFAULT_GLOBALS, ...opts.globals };
  }

  get isDirty() {
    return this.dirty;
  }
  markClean() {
    this.dirty = false;
  }

  // ------------------------------------------------------------ helpers

  get(url: string): SimAccount | undefined {
    return this.state.accounts[url];
  }

  private must(url: string, what = 'account'): SimAccount {
    const a = this.state.accounts[url];
    if (!a) throw new SimError('notFound', `${what} ${url} not found`);
    return a;
  }

  private put(a: SimAccount) {
    this.state.accounts[normUrl(a.url)] = a;
    this.dirty = true;
  }

  private txid(hash: string, principal: string): string {
    return `acc://${hash}@${principal.slice('acc://'.length)}`;
  }

  // ------------------------------------------------------------ faucet

  faucet(account: string): Submission {
    const url = nUrl(account, 'account');
    const auth = url.slice('acc://'.length).split('/')[0]!;
    if (!isLiteAuthority(auth) || !liteAuthorityValid(auth) || url !== `acc://${auth}/acme`) {
      throw new SimError('badRequest', `faucet: ${account} is not a lite ACME token account (acc://<lite identity>/ACME)`);
    }
    const lid = `acc://${auth}`;
    if (!this.get(lid)) this.put({ type: 'liteIdentity', url: lid, creditBalance: 0, lastUsedOn: 0 });
    const lta = this.get(url) as Extract<SimAccount, { type: 'liteTokenAccount' }> | undefined;
    const bal = BigInt(lta?.balance ?? '0') + this.globals.faucetAmount;
    this.put({ type: 'liteTokenAccount', url: lta?.url ?? disp(account), tokenUrl: ACME, balance: bal.toString() });
    const hash = toHex(sha256(Buffer.from(`faucet:${url}:${this.state.block}:${bal}`)));
    return { status: { txID: this.txid(hash, disp(account)), code: 'delivered' }, success: true };
  }

  // ------------------------------------------------------------ submit / check

  /** Check an envelope against current state and queue it for the next block. */
  submit(envelopeJson: unknown, opts: { checkOnly?: boolean } = {}): Submission[] {
    let env: messaging.Envelope;
    try {
      if (!envelopeJson || typeof envelopeJson !== 'object') throw new Error('envelope must be an object');
      env = new messaging.Envelope(envelopeJson as messaging.EnvelopeArgs);
    } catch (e) {
      throw new SimError('badRequest', `malformed envelope: ${(e as Error).message}`);
    }
    const txns = (env.transaction ?? []).filter((t): t is core.Transaction => !!t);
    const sigs = (env.signatures ?? []).filter((x): x is core.Signature => !!x);
    if (sigs.length === 0) throw new SimError('badRequest', 'envelope has no signatures (every transaction must be signed)');
    const byHash = new Map<string, core.Transaction>();
    for (const t of txns) {
      let h: string;
      try {
        h = toHex(t.hash());
      } catch (e) {
        throw new SimError('badRequest', `malformed transaction: ${(e as Error).message}`);
      }
      byHash.set(h, t);
    }
    for (const h of byHash.keys()) {
      const signed = sigs.some((x) => {
        try {
          const k = unwrapSignature(x).key;
          const th = k.transactionHash ? toHex(k.transactionHash) : env.txHash ? toHex(env.txHash) : byHash.size === 1 ? h : undefined;
          return th === h;
        } catch {
          return false;
        }
      });
      if (!signed) throw new SimError('badRequest', `transaction ${h.slice(0, 8).toUpperCase()} is not signed`);
    }
    const out: Submission[] = [];
    const queued: Queued[] = [];
    const finished = new Set<string>();
    for (const [h, t] of byHash) {
      const existing = this.state.txns[h];
      if (existing && existing.status !== 'pending') {
        // like the Go node: resubmitting a finished transaction reports its status and ignores its signatures
        const message = `transaction ${h.slice(0, 8).toUpperCase()} (${(t.body?.asObject() as { type?: string })?.type}) has been ${existing.status === 'delivered' ? 'delivered' : existing.status}`;
        out.push({ status: { txID: existing.txid, code: existing.status, error: { message, code: existing.status } }, success: true, message });
        finished.add(h);
        continue;
      }
      try {
        const principal = nUrl(t.header?.principal, 'principal');
        this.checkTransaction(t, principal);
        out.push({ status: { txID: this.txid(h, disp(t.header!.principal)), code: 'ok' }, success: true });
        queued.push({ txn: t, txHash: h });
      } catch (e) {
        out.push(this.failure(undefined, e));
      }
    }
    for (const s of sigs) {
      let txHash: string | undefined;
      try {
        const { key } = unwrapSignature(s);
        if (key.transactionHash) txHash = toHex(key.transactionHash);
        else if (env.txHash) txHash = toHex(env.txHash);
        else if (byHash.size === 1) txHash = [...byHash.keys()][0];
        if (!txHash) throw new SimError('badRequest', 'signature has no transactionHash and the envelope has no single transaction');
        if (finished.has(txHash)) continue;
        const done = this.state.txns[txHash];
        if (done && done.status !== 'pending')
          throw new SimError(done.status === 'delivered' ? 'conflict' : done.status, `transaction ${txHash} has already been ${done.status}`);
        const txn = byHash.get(txHash) ?? this.knownTransaction(txHash);
        if (!txn) throw new SimError('notFound', `transaction ${txHash} not found (signature-only envelope for an unknown transaction)`);
        const sigId = this.sigId(s);
        try {
          this.checkSignature(s, txn, txHash, false);
        } catch (e) {
          if (!opts.checkOnly && e instanceof SimError) this.recordSig(s, txHash, e.code, e.message);
          out.push(this.failure(sigId, e));
          continue;
        }
        out.push({ status: { txID: sigId, code: 'ok' }, success: true });
        queued.push({ txHash, signature: s });
      } catch (e) {
        out.push(this.failure(undefined, e));
      }
    }
    if (!opts.checkOnly) this.queue.push(...queued);
    return out;
  }

  private recordSig(s: core.Signature, txHash: string, code: StatusLabel, message?: string) {
    const id = this.sigId(s);
    const rec = this.state.txns[txHash];
    this.state.sigs[id.slice('acc://'.length, 'acc://'.length + 64)] = {
      id,
      txID: rec?.txid,
      signature: s.asObject(),
      status: code,
      error: message ? { message, code } : undefined,
      received: this.state.block,
    };
    this.dirty = true;
  }

  sigByHash(hash: string): SigMessage | undefined {
    return this.state.sigs[hash.toLowerCase()];
  }

  private failure(txid: string | undefined, e: unknown): Submission {
    const code: StatusLabel = e instanceof SimError ? e.code : e instanceof LedgerInputError ? 'badRequest' : 'internalError';
    const message = (e as Error).message;
    return { status: { txID: txid, code, codeNum: STATUS[code], error: { message, code } }, success: false, message };
  }

  private sigId(s: core.Signature): string {
    const { key } = unwrapSignature(s);
    const signer = key.signer ? nUrl(key.signer, 'signer') : 'acc://unknown';
    return `acc://${toHex(sha256(encode(s)))}@${signer.slice('acc://'.length)}`;
  }

  private knownTransaction(hash: string): core.Transaction | undefined {
    const r = this.state.txns[hash];
    return r ? new core.Transaction(r.transaction) : undefined;
  }

  private checkTransaction(t: core.Transaction, principal: string) {
    const body = t.body;
    if (!body) throw new SimError('badRequest', 'transaction has no body');
    const supported = [
      'createIdentity',
      'addCredits',
      'createDataAccount',
      'updateKeyPage',
      'updateAccountAuth',
      'createKeyPage',
      'writeData',
      'sendTokens',
      'createTokenAccount',
    ];
    const type = (body.asObject() as { type: string }).type;
    if (!supported.includes(type)) throw new SimError('badRequest', `unsupported transaction type ${type}`);
    // body checks the Go node makes at submission (CheckTx)
    if (type === 'createDataAccount' || type === 'createTokenAccount') {
      const u = nUrl((body as core.CreateDataAccount).url, 'url');
      if (parentUrl(u) !== principal)
        throw new SimError(
          'badRequest',
          `invalid principal: cannot create ${disp((body as core.CreateDataAccount).url)} as a child of ${disp(t.header!.principal)}`,
        );
    }
    if (!this.get(principal)) {
      const createsRoot = type === 'createIdentity' && nUrl((body as core.CreateIdentity).url, 'url') === principal;
      if (!createsRoot) throw new SimError('notFound', `principal ${principal} not found`);
    }
  }

  /** Resolve the signer account and the key entry; throws the Accumulate status for each failure. */
  private checkSignature(s: core.Signature, txn: core.Transaction, txHash: string, deliver: boolean) {
    const v = verifySignature(s, Buffer.from(txHash, 'hex'));
    if (!v.ok) throw new SimError(v.code, v.reason);
    const { key, delegators } = unwrapSignature(s);
    if (!key.signer) throw new SimError('badRequest', 'signature has no signer');
    const signerUrl = nUrl(key.signer, 'signer');
    const signer = this.get(signerUrl);
    if (!signer) throw new SimError('notFound', `signer ${signerUrl} not found`);
    const pkHash = toHex(sha256(key.publicKey!));
    let lastUsedOn: number;
    if (signer.type === 'liteIdentity') {
      if (liteIdentityUrl(key.publicKey!).toLowerCase() !== signerUrl) {
        throw new SimError('unauthorized', `key does not belong to signer ${signerUrl}`);
      }
      lastUsedOn = signer.lastUsedOn;
    } else if (signer.type === 'keyPage') {
      const entry = signer.keys.find((k) => k.publicKeyHash === pkHash);
      if (!entry) throw new SimError('unauthorized', `key does not belong to signer ${signerUrl}`);
      if (key.signerVersion !== signer.version) {
        throw new SimError('badSignerVersion', `invalid version: have ${signer.version}, got ${key.signerVersion ?? 0}`);
      }
      lastUsedOn = entry.lastUsedOn ?? 0;
    } else {
      throw new SimError('badRequest', `signer ${signerUrl} is a ${signer.type}, not a key page or lite identity`);
    }
    const ts = key.timestamp ?? 0;
    if (ts !== 0 && ts <= lastUsedOn) {
      throw new SimError('badTimestamp', `invalid timestamp: have ${lastUsedOn}, got ${ts}`);
    }
    const md = toHex(v.metadataHash);
    const header = txn.header!;
    const isInitiator = !!header.initiator && toHex(header.initiator) === md;
    const rec = this.state.txns[txHash];
    if (isInitiator) {
      if (!ts) throw new SimError('badTimestamp', 'initial signature does not have a timestamp');
      const vote = key.vote ?? core.VoteType.Accept;
      if (vote !== core.VoteType.Accept) throw new SimError('badRequest', 'the initiator must vote accept');
      if (delegators.length === 0 && signer.type === 'liteIdentity' && header.authorities?.length) {
        throw new SimError('badRequest', 'a lite identity initiator may not set header.authorities');
      }
    } else if (!rec?.initiated && !header.initiator) {
      throw new SimError('badRequest', 'transaction has no initiator');
    }
    // delegation: each delegator page must list the previous book as a delegate
    let prevBook = signer.type === 'keyPage' ? bookOfPage(signerUrl) : signerUrl;
    for (const d of delegators) {
      const du = nUrl(d, 'delegator');
      const dp = this.get(du);
      if (!dp) throw new SimError('notFound', `delegator ${du} not found`);
      if (dp.type !== 'keyPage') throw new SimError('badRequest', `delegator ${du} is not a key page`);
      if (!dp.keys.some((k) => k.delegate === prevBook)) {
        throw new SimError('unauthorized', `${prevBook} is not a delegate of ${du}`);
      }
      prevBook = bookOfPage(du);
    }
    // authority: the book at the end of the delegation path must be required (except anyone-may-sign cases)
    const principal = nUrl(header.principal, 'principal');
    const required = this.requiredAuthorities(txn, principal);
    if (required !== 'anyone' && !required.has(prevBook)) {
      throw new SimError('unauthorized', `${prevBook} is not an authority of ${principal} for this transaction`);
    }
    // page priority for UpdateKeyPage within the same book
    const bodyType = (txn.body!.asObject() as { type: string }).type;
    if (bodyType === 'updateKeyPage' && signer.type === 'keyPage' && delegators.length === 0) {
      if (bookOfPage(signerUrl) === parentUrl(principal) && pageIndex(signerUrl) > pageIndex(principal)) {
        throw new SimError('unauthorized', `signer ${signerUrl} has lower priority than ${principal} and may not modify it`);
      }
    }
    // credits
    const fee = this.signatureFee(s, delegators.length) + (isInitiator && !rec?.initiated ? this.transactionFee(txn) - FEE.signature : 0);
    // AddCredits signed directly by the principal's own lite identity only needs the token balance
    const free = bodyType === 'addCredits' && delegators.length === 0;
    const balance = signer.creditBalance;
    const fmt = (u: number) => (u / 100).toFixed(2);
    if (!free) {
      // CheckTx: at least 0.01 credits; delivery: the full fee, else 0.01 is taken and the signature fails
      if (balance < FEE.signature) throw new SimError('insufficientCredits', `insufficient credits: have ${fmt(balance)}, want ${fmt(FEE.signature)}`);
      if (deliver && balance < fee) {
        signer.creditBalance = balance - FEE.signature;
        this.dirty = true;
        throw new SimError('insufficientCredits', `${signerUrl} has insufficient credits: have ${fmt(balance)}, want ${fmt(fee)}`);
      }
    }
    return { key, delegators, signer, signerUrl, pkHash, ts, isInitiator, fee: free ? 0 : fee };
  }

  /** Go ComputeSignatureFee: 1 unit, 1 more per 256 B of the signature past the first, 1 more per delegation layer. */
  private signatureFee(s: core.Signature, delegations: number): number {
    return FEE.signature * (1 + sizeChunks(encode(s).length) + delegations);
  }

  transactionFee(txn: core.Transaction): number {
    const body = txn.body!.asObject() as Record<string, any>;
    const size = encode(txn).length;
    let fee = 0;
    switch (body.type) {
      case 'createIdentity': {
        const url = nUrl(body.url);
        const rest = url.slice('acc://'.length);
        if (rest.includes('/')) fee = this.globals.createSubIdentity;
        else {
          const label = Buffer.byteLength(rest.slice(0, -'.acme'.length));
          fee = this.globals.createIdentitySliding[label - 1] ?? this.globals.createIdentityBase;
        }
        break;
      }
      case 'addCredits':
        return 0;
      case 'createDataAccount':
        fee = FEE.createDataAccount;
        break;
      case 'createTokenAccount':
        fee = FEE.createTokenAccount;
        break;
      case 'createKeyPage':
        fee = FEE.createKeyPage + Math.max(0, (body.keys?.length ?? 1) - 1) * FEE.createKeyPagePerKey;
        break;
      case 'updateKeyPage':
        fee = FEE.updateKeyPage + Math.max(0, (body.operation?.length ?? 1) - 1) * FEE.updateKeyPagePerOp;
        break;
      case 'updateAccountAuth':
        fee = FEE.updateKeyPage + Math.max(0, (body.operations?.length ?? 1) - 1) * FEE.updateKeyPagePerOp;
        break;
      case 'sendTokens':
        fee = FEE.sendTokens + Math.max(0, (body.to?.length ?? 1) - 1) * FEE.sendTokensPerOutput;
        break;
      case 'writeData':
        // Go: every 256 B chunk of the whole transaction at the data (or scratch) rate, twice to write to state,
        // and no size surcharge on top
        return Math.ceil(size / 256) * (body.scratch ? FEE.scratchPer256 : FEE.writeDataPer256) * (body.writeToState ? 2 : 1);
    }
    return fee + sizeChunks(size) * FEE.sizePer256;
  }

  /** Authorities whose accept is required; 'anyone' for a root CreateIdentity whose principal is the new ADI. */
  requiredAuthorities(txn: core.Transaction, principal: string): Set<string> | 'anyone' {
    const body = txn.body!.asObject() as Record<string, any>;
    const acc = this.get(principal);
    const req = new Set<string>();
    if (!acc) {
      if (body.type === 'createIdentity' && nUrl(body.url) === principal) return 'anyone';
      return req;
    }
    const add = (list: AuthorityEntry[]) => {
      for (const a of list) if (!a.disabled) req.add(a.url);
    };
    switch (acc.type) {
      case 'liteIdentity':
        req.add(normUrl(acc.url));
        break;
      case 'liteTokenAccount':
        req.add(parentUrl(acc.url)!);
        break;
      case 'keyPage': {
        const book = this.get(bookOfPage(acc.url));
        if (book && 'authorities' in book) add(book.authorities);
        break;
      }
      default: {
        // an account without authorities of its own inherits its parent's
        let cur: SimAccount | undefined = acc;
        while (cur && 'authorities' in cur && cur.authorities.length === 0) {
          const parent = parentUrl(cur.url);
          cur = parent ? this.get(parent) : undefined;
        }
        if (cur && 'authorities' in cur) add(cur.authorities);
      }
    }
    for (const a of txn.header?.authorities ?? []) if (a) req.add(nUrl(a.toString()));
    if (body.type === 'updateKeyPage') {
      for (const op of body.operation ?? []) {
        const d = op?.entry?.delegate ?? op?.newEntry?.delegate;
        if ((op?.type === 'add' || op?.type === 'update') && d) req.add(nUrl(d));
      }
    }
    if (body.type === 'updateAccountAuth') {
      for (const op of body.operations ?? []) if (op?.type === 'addAuthority' && op.authority) req.add(nUrl(op.authority));
    }
    if (body.type === 'createIdentity') for (const a of body.authorities ?? []) req.add(nUrl(a));
    return req;
  }

  // ------------------------------------------------------------ block clock

  /** Produce one block: synthetic messages of the previous block, queued messages, expiry, anchors. */
  step(now = Date.now()): number {
    const st = this.state;
    st.block += 1;
    st.blockTime = Math.max(now, st.blockTime + 1);
    const touched = new Set<string>();
    // 1. synthetic messages produced last block
    const synth = st.synthetic;
    st.synthetic = [];
    for (const m of synth) this.guard('synthetic message', () => this.applySynthetic(m));
    // 2. queued user messages, in submission order
    const q = this.queue;
    this.queue = [];
    for (const m of q) this.guard(`message for ${m.txHash}`, () => this.deliver(m, touched));
    // 3. major block: pending transactions scheduled to expire on it fail (block_end.go)
    const interval = this.globals.majorBlockIntervalMs;
    const major = Math.floor(st.blockTime / interval);
    if (major > (st.majorBlock ?? major - 1)) {
      st.majorBlock = major;
      for (const r of Object.values(st.txns)) {
        if (r.status === 'pending' && r.expireMajor !== undefined && r.expireMajor <= major) {
          this.fail(r, 'expired', 'transaction expired', touched);
        }
      }
    }
    // 4. anchor touched account chains into the simulated root chain
    for (const acc of touched) {
      const leaves = st.chains[acc];
      if (!leaves?.length) continue;
      const chain = MerkleChain.of(leaves);
      st.root.push(chain.anchor());
      st.rootBlocks.push(st.block);
      (st.anchors[acc] ??= []).push({ height: leaves.length, rootIndex: st.root.length - 1, block: st.block });
    }
    if (q.length || synth.length || touched.size) this.dirty = true;
    return st.block;
  }

  /** Queue a synthetic deposit for the next block and record it as a queryable transaction. */
  private produce(cause: TxRecord, m: Synthetic) {
    const body =
      m.kind === 'depositCredits'
        ? { type: 'syntheticDepositCredits', amount: Number(m.amount) }
        : { type: 'syntheticDepositTokens', token: ACME, amount: m.amount };
    const transaction = { header: { principal: m.to }, body } as unknown as core.TransactionArgs;
    const hash = toHex(sha256(Buffer.from(`${cause.hash}:${m.kind}:${m.to}:${cause.produced.length}`)));
    const txid = this.txid(hash, m.to);
    this.state.txns[hash] = {
      hash,
      txid,
      principal: nUrl(m.to),
      transaction,
      status: 'pending',
      received: this.state.block,
      receivedAt: this.state.blockTime,
      initiated: false,
      paid: 0,
      sets: {},
      authorityVotes: {},
      signatures: [],
      produced: [],
      synthetic: true,
    };
    cause.produced.push(txid);
    this.state.synthetic.push({ ...m, hash });
  }

  /** A message that throws unexpectedly is dropped and logged; it never stops the block clock. */
  private guard(what: string, fn: () => void) {
    try {
      fn();
    } catch (e) {
      console.error(`ledger-sim: dropped ${what}: ${(e as Error).stack ?? e}`);
    }
  }

  private applySynthetic(m: Synthetic) {
    const srec = m.hash ? this.state.txns[m.hash] : undefined;
    if (srec) {
      srec.status = 'delivered';
      srec.executedBlock = this.state.block;
    }
    const to = this.get(m.to);
    if (m.kind === 'depositCredits') {
      if (to && (to.type === 'keyPage' || to.type === 'liteIdentity')) {
        to.creditBalance += Number(m.amount);
        this.dirty = true;
      }
      return;
    }
    if (!to) {
      const auth = m.to.slice('acc://'.length).split('/')[0]!;
      if (liteAuthorityValid(auth) && m.to === `acc://${auth}/acme`) {
        if (!this.get(`acc://${auth}`)) this.put({ type: 'liteIdentity', url: `acc://${auth}`, creditBalance: 0, lastUsedOn: 0 });
        this.put({ type: 'liteTokenAccount', url: m.to, tokenUrl: ACME, balance: m.amount });
        return;
      }
    }
    if (to && (to.type === 'liteTokenAccount' || to.type === 'tokenAccount')) {
      to.balance = (BigInt(to.balance) + BigInt(m.amount)).toString();
      this.dirty = true;
      return;
    }
    // refund the sender when the deposit cannot land
    if (m.refundTo) {
      const back = this.get(m.refundTo);
      if (back && (back.type === 'liteTokenAccount' || back.type === 'tokenAccount')) back.balance = (BigInt(back.balance) + BigInt(m.amount)).toString();
    }
  }

  private deliver(m: Queued, touched: Set<string>) {
    const st = this.state;
    if (m.txn) {
      if (st.txns[m.txHash]) return; // already known: signatures carry on
      let principal: string;
      try {
        principal = nUrl(m.txn.header!.principal, 'principal');
        this.checkTransaction(m.txn, principal);
      } catch {
        return;
      }
      const expire = m.txn.header?.expire?.atTime?.getTime();
      st.txns[m.txHash] = {
        hash: m.txHash,
        txid: this.txid(m.txHash, disp(m.txn.header!.principal)),
        principal,
        transaction: m.txn.asObject(),
        status: 'pending',
        received: st.block,
        receivedAt: st.blockTime,
        initiated: false,
        paid: 0,
        expireAt: expire,
        expireMajor: this.expireMajorFor(expire),
        sets: {},
        authorityVotes: {},
        signatures: [],
        produced: [],
      };
      this.dirty = true;
      return;
    }
    const rec = st.txns[m.txHash];
    if (rec?.status !== 'pending' || !m.signature) return;
    const txn = new core.Transaction(rec.transaction);
    let c: ReturnType<SimLedger['checkSignature']>;
    try {
      c = this.checkSignature(m.signature, txn, m.txHash, true);
    } catch (e) {
      // a signature failing at delivery is recorded as a failed signature message; the transaction is untouched
      this.recordSig(m.signature, m.txHash, e instanceof SimError ? e.code : 'internalError', (e as Error).message);
      return;
    }
    this.recordSig(m.signature, m.txHash, 'delivered');
    // pay, bump the key's nonce
    c.signer.creditBalance -= c.fee;
    if (c.signer.type === 'liteIdentity') {
      if (c.ts) c.signer.lastUsedOn = c.ts;
    } else {
      const e = c.signer.keys.find((k) => k.publicKeyHash === c.pkHash)!;
      if (c.ts) e.lastUsedOn = c.ts;
    }
    if (c.isInitiator && !rec.initiated) {
      rec.initiated = true;
      rec.payer = c.signerUrl;
      rec.paid = c.fee;
    }
    const vote: Vote = c.key.vote === core.VoteType.Reject ? 'reject' : c.key.vote === core.VoteType.Abstain ? 'abstain' : 'accept';
    rec.signatures.push({ id: this.sigId(m.signature), signer: c.signerUrl, signature: m.signature.asObject(), vote, received: st.block });
    (st.chains[`${c.signerUrl}#signature`] ??= []).push(toHex(sha256(encode(m.signature))));
    this.dirty = true;
    // record the vote in the signer's active set and evaluate
    const book = c.signer.type === 'keyPage' ? bookOfPage(c.signerUrl) : c.signerUrl;
    void book;
    this.addToSet(rec, c.signerUrl, {
      key: c.pkHash,
      path: c.delegators.map((d) => nUrl(d)).join(','),
      vote,
      version: c.signer.type === 'keyPage' ? c.signer.version : 1,
    });
    this.evaluatePage(
      rec,
      c.signerUrl,
      c.delegators.map((d) => nUrl(d)),
    );
    this.checkReady(rec, txn, touched);
  }

  /** Major block on which a pending transaction expires (Go block_end.go shouldExpireOn). */
  private expireMajorFor(atTime: number | undefined): number {
    const interval = this.globals.majorBlockIntervalMs;
    const max = this.globals.pendingMajorBlocks;
    const current = Math.floor(this.state.blockTime / interval);
    if (atTime === undefined) return current + max;
    let count = 1;
    let now = this.state.blockTime;
    const next = (t: number) => (Math.floor(t / interval) + 1) * interval;
    while (count < max && atTime > next(now)) {
      now = next(now);
      count++;
    }
    return current + count;
  }

  private addToSet(rec: TxRecord, signerUrl: string, e: SetEntry) {
    const signer = this.get(signerUrl);
    const version = signer?.type === 'keyPage' ? signer.version : 1;
    let set = rec.sets[signerUrl];
    if (!set || set.version < version) set = rec.sets[signerUrl] = { version, entries: [] }; // newer version discards the old set
    set.entries = set.entries.filter((x) => !(x.key === e.key && x.path === e.path));
    set.entries.push(e);
  }

  /** Page vote for one delegation path (SignerWillVote); propagates to the delegator or to the authority. */
  private evaluatePage(rec: TxRecord, signerUrl: string, path: string[]) {
    const signer = this.get(signerUrl);
    if (!signer) return;
    const pathKey = path.join(',');
    const set = rec.sets[signerUrl];
    if (!set) return;
    let vote: Vote | undefined;
    if (signer.type === 'liteIdentity') {
      vote = set.entries.find((e) => e.path === pathKey)?.vote;
    } else if (signer.type === 'keyPage') {
      const entries = set.entries.filter((e) => e.path === pathKey && e.version === signer.version);
      const tA = signer.acceptThreshold || 1;
      const tR = signer.rejectThreshold || tA;
      const tResp = signer.responseThreshold || 0;
      const accepts = entries.filter((e) => e.vote === 'accept').length;
      const rejects = entries.filter((e) => e.vote === 'reject').length;
      const responses = entries.length;
      if (responses < tResp) return;
      const undecided = signer.keys.length - responses;
      if (accepts >= tA) vote = 'accept';
      else if (rejects >= tR) vote = 'reject';
      else if (accepts + undecided < tA && rejects + undecided < tR) vote = 'abstain';
    } else return;
    if (!vote) return;
    const book = signer.type === 'keyPage' ? bookOfPage(signerUrl) : signerUrl;
    set.entries = set.entries.filter((e) => e.path !== pathKey);
    if (path.length === 0) {
      this.authorityVote(rec, book, vote, signerUrl);
      return;
    }
    const [delegator, ...rest] = path as [string, ...string[]];
    const dp = this.get(delegator);
    this.addToSet(rec, delegator, { key: `delegate:${book}`, path: rest.join(','), vote, version: dp?.type === 'keyPage' ? dp.version : 1 });
    this.evaluatePage(rec, delegator, rest);
  }

  private authorityVote(rec: TxRecord, authority: string, vote: Vote, origin: string) {
    if (rec.authorityVotes[authority]) return; // each authority votes once
    rec.authorityVotes[authority] = { vote, origin, block: this.state.block };
    // clear the active sets of that book's pages (direct path)
    for (const [url, set] of Object.entries(rec.sets)) {
      if (url === authority || parentUrl(url) === authority) set.entries = set.entries.filter((e) => e.path !== '');
    }
  }

  private checkReady(rec: TxRecord, txn: core.Transaction, touched: Set<string>) {
    // processing a transaction after its deadline fails it (transaction.go)
    if (rec.expireAt !== undefined && this.state.blockTime > rec.expireAt) {
      this.fail(rec, 'expired', 'transaction deadline exceeded', touched);
      return;
    }
    const required = this.requiredAuthorities(txn, rec.principal);
    if (required !== 'anyone') {
      // a required authority that does not exist can never vote: the network rejects the transaction
      for (const a of required) {
        const acc = this.get(a);
        if (!acc || (acc.type !== 'keyBook' && acc.type !== 'liteIdentity')) {
          this.fail(rec, 'rejected', 'rejected', touched);
          return;
        }
      }
      for (const a of required) {
        const v = rec.authorityVotes[a];
        if (v && v.vote !== 'accept') {
          this.fail(rec, 'rejected', `transaction ${v.vote === 'reject' ? 'rejected' : 'abstained'} by ${a}`, touched);
          return;
        }
      }
    }
    if (!rec.initiated) return;
    if (required === 'anyone') {
      if (Object.keys(rec.authorityVotes).length === 0 && rec.signatures.length === 0) return;
    } else {
      if (Object.keys(rec.authorityVotes).length === 0) return;
      for (const a of required) if (rec.authorityVotes[a]?.vote !== 'accept') return;
    }
    this.execute(rec, txn, touched);
  }

  private fail(rec: TxRecord, code: StatusLabel, message: string, touched: Set<string>) {
    rec.status = code;
    rec.error = { message, code };
    rec.executedBlock = this.state.block;
    if (rec.payer && rec.paid > FEE.refundFloor) {
      const p = this.get(rec.payer);
      if (p && (p.type === 'keyPage' || p.type === 'liteIdentity')) p.creditBalance += rec.paid - FEE.refundFloor;
    }
    this.record(rec, touched);
  }

  private record(rec: TxRecord, touched: Set<string>) {
    (this.state.chains[rec.principal] ??= []).push(rec.hash);
    touched.add(rec.principal);
    this.dirty = true;
  }

  private execute(rec: TxRecord, txn: core.Transaction, touched: Set<string>) {
    // apply on a snapshot so a failure leaves no partial state
    const snapshot = JSON.stringify(this.state.accounts);
    try {
      rec.result = this.apply(rec, txn);
      rec.status = 'delivered';
      rec.executedBlock = this.state.block;
      this.record(rec, touched);
    } catch (e) {
      this.state.accounts = JSON.parse(snapshot);
      const code = e instanceof SimError ? e.code : 'internalError';
      this.fail(rec, code, (e as Error).message, touched);
    }
  }

  // ------------------------------------------------------------ transaction bodies

  private apply(rec: TxRecord, txn: core.Transaction): unknown {
    const body = txn.body!.asObject() as Record<string, any>;
    const principal = rec.principal;
    switch (body.type) {
      case 'createIdentity':
        return this.createIdentity(principal, body);
      case 'addCredits':
        return this.addCredits(rec, principal, body);
      case 'createDataAccount':
        return this.createSubAccount(principal, body, 'dataAccount');
      case 'createTokenAccount':
        return this.createSubAccount(principal, body, 'tokenAccount');
      case 'createKeyPage':
        return this.createKeyPage(principal, body);
      case 'updateKeyPage':
        return this.updateKeyPage(principal, body);
      case 'updateAccountAuth':
        return this.updateAccountAuth(principal, body);
      case 'writeData':
        return this.writeData(rec, principal, txn);
      case 'sendTokens':
        return this.sendTokens(rec, principal, body);
    }
    throw new SimError('badRequest', `unsupported transaction type ${body.type}`);
  }

  private requireKeyHash(h: unknown, field: string): string {
    if (typeof h !== 'string' || !/^[0-9a-f]{64}$/i.test(h)) throw new SimError('badRequest', `${field}: expected a 32-byte key hash`);
    return h.toLowerCase();
  }

  private createIdentity(principal: string, body: Record<string, any>) {
    const url = nUrl(body.url, 'url');
    const rest = url.slice('acc://'.length);
    const [root, ...segs] = rest.split('/');
    if (segs.length === 0) {
      if (!isValidAdiRoot(root!)) throw new SimError('badRequest', `invalid ADI URL ${url}: the root must be <name>.acme (letters, digits, '-')`);
    } else {
      const parent = parentUrl(url)!;
      const p = this.get(parent);
      if (p?.type !== 'identity') throw new SimError('badRequest', `sub-ADI ${url}: parent ${parent} is not an identity`);
      if (principal !== parent) throw new SimError('badRequest', `sub-ADI ${url} must be created with its parent ${parent} as principal`);
    }
    if (this.get(url)) throw new SimError('conflict', `account ${url} already exists`);
    const authorities: AuthorityEntry[] = (body.authorities ?? []).map((a: string) => ({ url: nUrl(a) }));
    if (body.keyBookUrl) {
      const book = nUrl(body.keyBookUrl, 'keyBookUrl');
      if (parentUrl(book) !== url) throw new SimError('badRequest', `key book ${book} must be a direct child of ${url}`);
      if (this.get(book)) throw new SimError('conflict', `account ${book} already exists`);
      const keyHash = this.requireKeyHash(body.keyHash, 'keyHash');
      const bookDisp = disp(body.keyBookUrl);
      this.put({ type: 'keyBook', url: bookDisp, authorities: [{ url: book }], pageCount: 1 });
      this.put({
        type: 'keyPage',
        url: `${bookDisp}/1`,
        creditBalance: 0,
        acceptThreshold: 1,
        rejectThreshold: 0,
        responseThreshold: 0,
        version: 1,
        keys: [{ publicKeyHash: keyHash }],
      });
      authorities.unshift({ url: book });
    }
    if (authorities.length === 0) throw new SimError('badRequest', 'createIdentity: missing key book or authorities');
    for (const a of authorities)
      if (a.url !== nUrl(body.keyBookUrl ?? 'acc://none.acme') && this.get(a.url)?.type !== 'keyBook')
        throw new SimError('notFound', `authority ${a.url} is not a key book`);
    this.put({ type: 'identity', url: disp(body.url), authorities });
    return undefined;
  }

  private addCredits(rec: TxRecord, principal: string, body: Record<string, any>) {
    const from = this.must(principal, 'principal');
    if ((from.type !== 'liteTokenAccount' && from.type !== 'tokenAccount') || !isAcme(from.tokenUrl)) {
      throw new SimError('badRequest', `addCredits: ${principal} is not an ACME token account`);
    }
    if (Number(body.oracle) !== this.globals.oraclePrice) {
      throw new SimError('badRequest', `oracle doesn't match: want ${this.globals.oraclePrice}, got ${body.oracle}`);
    }
    const amount = BigInt(body.amount ?? 0);
    const units = (amount * BigInt(this.globals.oraclePrice)) / 100_000_000n;
    if (units < BigInt(FEE.minPurchase)) throw new SimError('badRequest', `amount is less than the minimum purchase of 1 credit`);
    if (BigInt(from.balance) < amount) throw new SimError('insufficientBalance', `insufficient balance: ${principal} has ${from.balance}, needs ${amount}`);
    let to = nUrl(body.recipient, 'recipient');
    const toAuth = to.slice('acc://'.length).split('/')[0]!;
    if (isLiteAuthority(toAuth) && to === `acc://${toAuth}/acme`) to = `acc://${toAuth}`;
    const target = this.get(to);
    if (!target) throw new SimError('notFound', `recipient ${to} not found`);
    if (target.type !== 'keyPage' && target.type !== 'liteIdentity') throw new SimError('badRequest', `recipient ${to} is not a key page or lite identity`);
    from.balance = (BigInt(from.balance) - amount).toString();
    this.produce(rec, { kind: 'depositCredits', to, amount: units.toString(), cause: rec.txid });
    return { type: 'addCredits', amount: amount.toString(), credits: Number(units), oracle: this.globals.oraclePrice };
  }

  private createSubAccount(principal: string, body: Record<string, any>, type: 'dataAccount' | 'tokenAccount') {
    const p = this.must(principal, 'principal');
    if (p.type !== 'identity') throw new SimError('badRequest', `principal ${principal} is not an identity`);
    const url = nUrl(body.url, 'url');
    if (parentUrl(url) !== principal) throw new SimError('badRequest', `${url} must be a direct child of ${principal}`);
    if (this.get(url)) throw new SimError('conflict', `account ${url} already exists`);
    // without explicit authorities the account has none of its own and inherits its parent's (as on the Go node)
    const authorities: AuthorityEntry[] = body.authorities?.length ? body.authorities.map((a: string) => ({ url: nUrl(a) })) : [];
    if (type === 'dataAccount') this.put({ type, url: disp(body.url), authorities });
    else {
      const tokenUrl = nUrl(body.tokenUrl ?? ACME, 'tokenUrl');
      if (!isAcme(tokenUrl)) throw new SimError('badRequest', 'only ACME token accounts are simulated');
      this.put({ type, url: disp(body.url), authorities, tokenUrl: ACME, balance: '0' });
    }
    return undefined;
  }

  private createKeyPage(principal: string, body: Record<string, any>) {
    const book = this.must(principal, 'principal');
    if (book.type !== 'keyBook') throw new SimError('badRequest', `principal ${principal} is not a key book`);
    const keys: KeyEntry[] = [];
    for (const k of body.keys ?? []) {
      if (k?.delegate) keys.push({ delegate: this.delegateBook(nUrl(k.delegate), principal) });
      else keys.push({ publicKeyHash: this.requireKeyHash(k?.keyHash, 'keys.keyHash') });
    }
    if (keys.length === 0) throw new SimError('badRequest', 'createKeyPage: no keys');
    if (book.pageCount >= 20) throw new SimError('badRequest', 'book has the maximum number of pages');
    book.pageCount += 1;
    this.put({
      type: 'keyPage',
      url: `${book.url}/${book.pageCount}`,
      creditBalance: 0,
      acceptThreshold: 1,
      rejectThreshold: 0,
      responseThreshold: 0,
      version: 1,
      keys: sortKeys(keys),
    });
    return undefined;
  }

  private delegateBook(d: string, ownBook: string): string {
    const acc = this.get(d);
    if (!acc) throw new SimError('notFound', `delegate ${d} not found`);
    if (acc.type !== 'keyBook') throw new SimError('badRequest', `delegate ${d} is a ${acc.type}, not a key book`);
    if (d === ownBook) throw new SimError('badRequest', 'a page cannot delegate to its own book');
    return d;
  }

  private updateKeyPage(principal: string, body: Record<string, any>) {
    const page = this.must(principal, 'principal');
    if (page.type !== 'keyPage') throw new SimError('badRequest', `principal ${principal} is not a key page`);
    const ownBook = bookOfPage(principal);
    const same = (k: KeyEntry, e: Record<string, any>) =>
      (e.keyHash && k.publicKeyHash === String(e.keyHash).toLowerCase()) || (e.delegate && k.delegate === nUrl(e.delegate));
    const ops = body.operation ?? [];
    if (ops.length === 0) throw new SimError('badRequest', 'updateKeyPage: no operations');
    for (const op of ops) {
      switch (op?.type) {
        case 'add': {
          const e = op.entry ?? {};
          if (!e.keyHash && !e.delegate) throw new SimError('badRequest', 'add: entry needs keyHash or delegate');
          if (page.keys.some((k) => same(k, e))) throw new SimError('badRequest', 'add: duplicate entry');
          const entry: KeyEntry = {};
          if (e.keyHash) entry.publicKeyHash = this.requireKeyHash(e.keyHash, 'entry.keyHash');
          if (e.delegate) entry.delegate = this.delegateBook(nUrl(e.delegate), ownBook);
          if (page.keys.length >= 100) throw new SimError('badRequest', 'page has the maximum number of entries');
          page.keys.push(entry);
          break;
        }
        case 'remove': {
          const e = op.entry ?? {};
          const i = page.keys.findIndex((k) => same(k, e));
          if (i < 0) throw new SimError('unknownError', 'entry to be removed not found on the key page');
          if (page.keys.length === 1 && pageIndex(principal) === 1) throw new SimError('badRequest', 'cannot remove the last key of page 1');
          page.keys.splice(i, 1);
          break;
        }
        case 'update': {
          const i = page.keys.findIndex((k) => same(k, op.oldEntry ?? {}));
          if (i < 0) throw new SimError('notFound', 'update: old entry not found on the page');
          const ne = op.newEntry ?? {};
          if (page.keys.some((k, j) => j !== i && same(k, ne))) throw new SimError('badRequest', 'update: duplicate entry');
          const entry: KeyEntry = {};
          if (ne.keyHash) entry.publicKeyHash = this.requireKeyHash(ne.keyHash, 'newEntry.keyHash');
          if (ne.delegate) entry.delegate = this.delegateBook(nUrl(ne.delegate), ownBook);
          if (!entry.publicKeyHash && !entry.delegate) throw new SimError('badRequest', 'update: newEntry needs keyHash or delegate');
          page.keys[i] = entry;
          break;
        }
        case 'setThreshold': {
          const t = Number(op.threshold);
          if (!Number.isInteger(t) || t < 1 || t > page.keys.length)
            throw new SimError('unknownError', `cannot require ${op.threshold} signatures on a key page with ${page.keys.length} keys`);
          page.acceptThreshold = t;
          break;
        }
        case 'setRejectThreshold':
        case 'setResponseThreshold': {
          const t = Number(op.threshold ?? 0);
          if (!Number.isInteger(t) || t < 0 || t >= page.keys.length)
            throw new SimError('badRequest', `${op.type}: threshold must be less than the number of keys (${page.keys.length})`);
          if (op.type === 'setRejectThreshold') page.rejectThreshold = t;
          else page.responseThreshold = t;
          break;
        }
        default:
          throw new SimError('badRequest', `updateKeyPage: unsupported operation ${op?.type}`);
      }
    }
    page.keys = sortKeys(page.keys);
    page.acceptThreshold = Math.min(page.acceptThreshold, page.keys.length);
    if (page.rejectThreshold >= page.keys.length) page.rejectThreshold = Math.max(0, page.keys.length - 1);
    if (page.responseThreshold >= page.keys.length) page.responseThreshold = Math.max(0, page.keys.length - 1);
    page.version += 1;
    for (const k of page.keys) delete k.lastUsedOn;
    return undefined;
  }

  private updateAccountAuth(principal: string, body: Record<string, any>) {
    const acc = this.must(principal, 'principal');
    if (!('authorities' in acc)) throw new SimError('badRequest', `principal ${principal} (${acc.type}) has no authorities to update`);
    for (const op of body.operations ?? []) {
      const a = nUrl(op?.authority, 'authority');
      const i = acc.authorities.findIndex((x) => x.url === a);
      switch (op?.type) {
        case 'addAuthority': {
          const b = this.get(a);
          if (!b) throw new SimError('notFound', `authority ${a} not found`);
          if (b.type !== 'keyBook') throw new SimError('badRequest', `authority ${a} is a ${b.type}, not a key book`);
          if (i >= 0) throw new SimError('badRequest', `${a} is already an authority of ${principal}`);
          if (acc.authorities.length >= 20) throw new SimError('badRequest', 'account has the maximum number of authorities');
          acc.authorities.push({ url: a });
          break;
        }
        case 'removeAuthority':
          if (i < 0) throw new SimError('notFound', `${a} is not an authority of ${principal}`);
          if (acc.authorities.filter((x) => !x.disabled).length <= 1 && !acc.authorities[i]!.disabled)
            throw new SimError('badRequest', 'cannot remove the last authority');
          acc.authorities.splice(i, 1);
          break;
        case 'enable':
        case 'disable':
          if (i < 0) throw new SimError('notFound', `${a} is not an authority of ${principal}`);
          if (op.type === 'disable') acc.authorities[i]!.disabled = true;
          else delete acc.authorities[i]!.disabled;
          break;
        default:
          throw new SimError('badRequest', `updateAccountAuth: unsupported operation ${op?.type}`);
      }
    }
    return undefined;
  }

  private writeData(rec: TxRecord, principal: string, txn: core.Transaction) {
    const acc = this.must(principal, 'principal');
    if (acc.type !== 'dataAccount') throw new SimError('badRequest', `principal ${principal} is not a data account`);
    const body = txn.body as core.WriteData;
    const entry = body.entry;
    if (!entry || !(entry instanceof core.DoubleHashDataEntry)) {
      throw new SimError(
        'badRequest',
        `writeData: only doubleHash data entries are accepted (got ${entry ? String((entry as { type?: unknown }).type) : 'none'})`,
      );
    }
    const parts = entry.data ?? [];
    if (parts.length > 100) throw new SimError('badRequest', 'writeData: more than 100 data entry parts');
    const entryHash = toHex(entry.hash());
    if (!body.scratch) {
      (this.state.data[principal] ??= []).push({ entryHash, txHash: rec.hash, data: parts.map((p) => toHex(p ?? new Uint8Array())) });
    }
    return { type: 'writeData', entryHash, accountUrl: principal, accountID: toHex(sha256(Buffer.from(principal))) };
  }

  private sendTokens(rec: TxRecord, principal: string, body: Record<string, any>) {
    const from = this.must(principal, 'principal');
    if (from.type !== 'liteTokenAccount' && from.type !== 'tokenAccount') throw new SimError('badRequest', `principal ${principal} is not a token account`);
    const outs = (body.to ?? []).map((o: any) => ({ url: nUrl(o?.url, 'to.url'), amount: BigInt(o?.amount ?? 0) }));
    if (outs.length === 0) throw new SimError('badRequest', 'sendTokens: no recipients');
    let total = 0n;
    for (const o of outs) {
      if (o.amount <= 0n) throw new SimError('badRequest', 'sendTokens: amount must be positive');
      total += o.amount;
    }
    if (BigInt(from.balance) < total) throw new SimError('insufficientBalance', `insufficient balance: ${principal} has ${from.balance}, needs ${total}`);
    from.balance = (BigInt(from.balance) - total).toString();
    for (const o of outs) this.produce(rec, { kind: 'depositTokens', to: o.url, amount: o.amount.toString(), cause: rec.txid, refundTo: principal });
    return undefined;
  }

  // ------------------------------------------------------------ queries

  accountJson(url: string): Record<string, unknown> {
    const a = this.must(url);
    const obj: Record<string, unknown> = { ...a, url: a.url };
    if (a.type === 'keyPage') {
      obj.keys = a.keys.map((k) => ({ publicKeyHash: k.publicKeyHash, lastUsedOn: k.lastUsedOn || undefined, delegate: k.delegate }));
      obj.rejectThreshold = a.rejectThreshold || undefined;
      obj.responseThreshold = a.responseThreshold || undefined;
    }
    if (a.type === 'liteIdentity') obj.lastUsedOn = a.lastUsedOn || undefined;
    // round-trip through accumulate.js so field names and encodings match the protocol types
    return core.Account.fromObject(obj as core.AccountArgs).asObject() as Record<string, unknown>;
  }

  pendingOf(url: string): TxRecord[] {
    return Object.values(this.state.txns)
      .filter((r) => r.status === 'pending' && r.initiated && !r.synthetic && r.principal === url)
      .sort((a, b) => a.received - b.received);
  }

  txByHash(hash: string): TxRecord | undefined {
    return this.state.txns[hash.toLowerCase()];
  }

  /** Sim-chain receipt: entry -> account main chain anchor -> simulated root chain anchor. */
  receipt(account: string, entryHash: string): { index: number; receipt: Receipt } {
    const leaves = this.state.chains[account];
    if (!leaves) throw new SimError('notFound', `account ${account} has no main chain entries`);
    const chain = MerkleChain.of(leaves);
    const index = chain.indexOf(entryHash);
    if (index < 0) throw new SimError('notFound', `entry ${entryHash} not found on the main chain of ${account}`);
    const anchorRec = (this.state.anchors[account] ?? []).find((a) => a.height > index);
    if (!anchorRec) {
      const r = chain.receipt(index);
      return { index, receipt: { ...r, localBlock: this.state.block, localBlockTime: new Date(this.state.blockTime).toISOString() } };
    }
    const r1 = chain.receipt(index, anchorRec.height);
    const root = MerkleChain.of(this.state.root);
    const r2 = root.receipt(anchorRec.rootIndex);
    return {
      index,
      receipt: {
        start: r1.start,
        startIndex: index,
        end: r1.end,
        endIndex: index,
        anchor: r2.anchor,
        entries: [...r1.entries, ...r2.entries],
        localBlock: this.state.rootBlocks[this.state.root.length - 1],
        localBlockTime: new Date(this.state.blockTime).toISOString(),
      },
    };
  }

  chainLeaves(account: string): string[] {
    return this.state.chains[account] ?? [];
  }

  /** Reset memoised signature-id helper for callers (exposed for the RPC layer). */
  signatureId(sig: core.Signature) {
    return this.sigId(sig);
  }

  metadataHashOf(sig: core.Signature) {
    return toHex(metadataHash(sig));
  }

  parseTxId(scope: string): { hash: string } | undefined {
    if (!scope.includes('@')) return undefined;
    try {
      const id = TxID.parse(scope);
      return { hash: toHex(id.hash).toLowerCase() };
    } catch {
      throw new SimError('badRequest', `malformed transaction ID ${scope}`);
    }
  }
}

function sortKeys(keys: KeyEntry[]): KeyEntry[] {
  return [...keys].sort((a, b) => {
    const x = a.publicKeyHash ?? `~${a.delegate ?? ''}`;
    const y = b.publicKeyHash ?? `~${b.delegate ?? ''}`;
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
