/**
 * One validator node. It holds its own keys and talks to its own ledger and chain endpoints; from a caller it
 * takes references only (ledger tx id, chain, anchor fields, execution tx hash) and recomputes everything
 * else itself, refusing with a reason (ValidatorRefusal) when anything does not hold.
 *
 *   attest   pre-execution: intent tx executed under the identity's book with a page's threshold met,
 *            intent recomputed from the stored bytes, legs of the chain, created_at not beyond now + CLOCK_SKEW_S,
 *            not expired, no conflicting anchor for the operation id (in this node's store, and none proven on
 *            chain since created_at) -> BLS signature over formulas.anchorMessage
 *   observe  post-execution: receipt + block read and proven (header hash, transactions and receipts tries),
 *            confirmations waited, status 1, the executed call is the committed one, expectedEvents from
 *            proven logs, expectedState by eth_getProof -> BLS signature over formulas.resultMessage
 *   writeResult  on a post-execution quorum (aggregate checked here): proof_result v2 to the protocol ADI's
 *            execution-results data account, once per (anchor, leaf)
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { core } from 'accumulate.js';
import {
  decodeAbiParameters,
  decodeFunctionData,
  getAddress,
  hexToBytes,
  keccak256,
  encodeAbiParameters,
  parseTransaction,
  toEventSelector,
  bytesToHex,
  type Address,
  type Hex,
} from 'viem';
import { abstractAccountAbi, proofAnchorAbi } from '../chain/abi/index.js';
import { predictAccountAddress } from '../chain/account.js';
import { readAnchorState, readValidatorSet } from '../chain/anchor.js';
import { blsAggregatePublicKeys, blsSign, blsVerify } from '../chain/bls.js';
import { createChainClients, type ChainClients } from '../chain/clients.js';
import { blockAtOrBefore, scanLogs } from '../chain/logs.js';
import { anchorMessage, eventsHash, meetsThreshold, resultHash, resultMessage, type ExecutionResult, type ResultLog } from '../chain/formulas.js';
import type { ChainEntry } from '../chain/registry.js';
import { dataEntryHash, tx as ledgerTx, type HeldKey, type LedgerClient, type TxStatus } from '../ledger/index.js';
import { INTENT_MEMO, IntentError, parseIntentEntries, planIntentAnchor, type CanonicalIntent, type IntentAnchorPlan } from '../protocol/intent/index.js';
import { expectedEventEmitted, findExecutedEvent } from '../chain/effects/events.js';
import { createBlockTrieCache, EffectDataUnavailable, EffectProofError, fetchVerifiedBlock, proveReceipt, proveStorage, proveTransaction } from '../chain/effects/evm-proofs.js';
import { MptProofError } from '../chain/effects/mpt.js';
import type { ValidatorKeys } from './keys.js';
import {
  PROOF_RESULT_ENTRY_TYPE,
  PROOF_RESULT_FIELDS,
  PROOF_RESULT_FORMAT,
  PROOF_RESULT_MEMO,
  PROOF_RESULT_VERSION,
  encodeProofResult,
  parseProofResult,
  resultIdOf,
  type ProofResultRecord,
} from '../protocol/result-record.js';
import type {
  AttestRequest,
  AttestResponse,
  AuthorityReport,
  ObserveRequest,
  ObserveResponse,
  ValidatorInfo,
  WriteResultRequest,
  WriteResultResponse,
} from '../protocol/validator-wire.js';
import { createValidatorStore, type ValidatorStore } from './store.js';

export class ValidatorRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ValidatorRefusal';
  }
}

const refuse = (code: string, reason: string): never => {
  throw new ValidatorRefusal(code, reason);
};

/**
 * Runs one proof step against the chain's RPC. Data that does not prove what it claims is PROOF_FAILED (final);
 * data the RPC did not give, or an RPC error (a lagging, pruning or failing node), is RPC_UNAVAILABLE, which the
 * gateway retries: an outage must never become a verdict on an execution.
 */
async function proofStep<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ValidatorRefusal) throw e;
    if (e instanceof EffectProofError || e instanceof MptProofError) refuse('PROOF_FAILED', `${what}: ${e.message}`);
    // viem's first line is generic ("Missing or invalid parameters."); its `details` carry the node's own words
    const rpcError = () => [String((e as Error)?.message ?? e).split('\n')[0], (e as { details?: string }).details].filter(Boolean).join(' ');
    const msg = e instanceof EffectDataUnavailable ? e.message : `RPC error: ${rpcError()}`;
    return refuse('RPC_UNAVAILABLE', `${what}: ${msg}`);
  }
}

/**
 * Clock skew tolerated between the gateway that stamps an intent's created_at, the validators and the chains.
 * No validator attests an intent before created_at - CLOCK_SKEW_S, so no anchor of its operation can have been
 * proven before then: the on-chain conflict search starts at a block from created_at - 2 * CLOCK_SKEW_S.
 */
export const CLOCK_SKEW_S = 300;

// ------------------------------------------------------------------------------------------------ node

export interface ValidatorNodeOptions {
  keys: ValidatorKeys;
  ledger: LedgerClient;
  /** chains with their system contracts */
  chains: readonly ChainEntry[];
  protocol: {
    /** key page of the protocol ADI that lists this validator's Ed25519 key */
    keyPage: string;
    /** execution-results data account */
    resultsAccount: string;
  };
  /** append-only log of attestations / written results (src/validator/store.ts; in memory when omitted) */
  storeFile?: string;
  store?: ValidatorStore;
  /** how long observe waits for the receipt and confirmations; default 60 s */
  observeTimeoutMs?: number;
  pollIntervalMs?: number;
  /** 'confirmations' (default): latest - block >= chain.confirmations; 'finalized': the finalized tag has passed the block */
  finality?: 'confirmations' | 'finalized';
  /** unix seconds; default wall clock */
  now?: () => number;
  /** validator-set cache lifetime; default 5 s */
  setCacheMs?: number;
}

export interface ValidatorNode {
  readonly index: number;
  info(): ValidatorInfo;
  attest(req: AttestRequest): Promise<AttestResponse>;
  observe(req: ObserveRequest): Promise<ObserveResponse>;
  writeResult(req: WriteResultRequest): Promise<WriteResultResponse>;
  /** Closes the node's store file (stopping it): recording an attestation or a result afterwards fails. */
  close(): void;
}

interface ChainCtx {
  entry: ChainEntry;
  clients: ChainClients;
  set?: { at: number; root: Hex; publicKeys: Hex[]; powers: bigint[]; thresholdNum: bigint; thresholdDen: bigint };
  /** the last blockAtOrBefore answer: a block at or before `at` is at or before any later time too */
  blockAt?: { at: bigint; block: bigint };
}

interface LoadedIntent {
  status: TxStatus;
  intent: CanonicalIntent;
  authority: AuthorityReport;
  txHash: Hex;
}

/** Map.set that evicts the oldest entry beyond `max` (bounded caches). */
function setBounded<K, V>(m: Map<K, V>, k: K, v: V, max = 10_000) {
  if (m.size >= max && !m.has(k)) m.delete(m.keys().next().value as K);
  m.set(k, v);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createValidatorNode(opts: ValidatorNodeOptions): ValidatorNode {
  const { keys, ledger } = opts;
  const index = keys.index;
  const sk = hexToBytes(keys.bls.secretKey);
  const myPk = keys.bls.publicKey.toLowerCase();
  const store = opts.store ?? createValidatorStore(opts.storeFile);
  const now = opts.now ?? (() => Math.floor(Date.now() / 1000));
  const poll = opts.pollIntervalMs ?? 100;
  const setCacheMs = opts.setCacheMs ?? 5_000;
  const held: HeldKey = { privateKey: keys.ed25519.seed.slice(2), signerUrl: opts.protocol.keyPage };
  const chains = new Map<string, ChainCtx>();
  for (const c of opts.chains) {
    const ctx: ChainCtx = { entry: c, clients: createChainClients({ rpcUrl: c.rpcUrl, chainId: c.chainId, name: c.name, pollingIntervalMs: 50 }) };
    chains.set(c.name, ctx);
    chains.set(String(c.chainId), ctx);
  }
  const intents = new Map<string, LoadedIntent>();
  // executions that share a block are proven from one transactions trie and one receipts trie
  const blockTries = createBlockTrieCache();
  const observations = new Map<string, ObserveResponse>();
  const writeLocks = new Map<string, Promise<WriteResultResponse>>();
  // BLS signatures are deterministic, so a message signed once is served from here (a retried round costs nothing)
  const signatures = new Map<string, Hex>();
  const signOnce = (message: Hex): Hex => {
    let sig = signatures.get(message);
    if (!sig) {
      sig = blsSign(sk, message);
      setBounded(signatures, message, sig);
    }
    return sig;
  };
  // identical requests arriving while one is being answered share its answer (a gateway retrying a slow round)
  const inflight = new Map<string, Promise<unknown>>();
  const shared = <Q, R>(kind: string, fn: (req: Q) => Promise<R>) => (req: Q): Promise<R> => {
    const key = `${kind}:${JSON.stringify(req)}`;
    let p = inflight.get(key) as Promise<R> | undefined;
    if (!p) {
      p = fn(req).finally(() => inflight.delete(key));
      inflight.set(key, p);
    }
    return p;
  };

  function chainCtx(name: string): ChainCtx {
    const c = chains.get(String(name));
    if (!c) refuse('UNKNOWN_CHAIN', `unknown chain ${name}`);
    if (!c!.entry.contracts) refuse('UNKNOWN_CHAIN', `chain ${name} has no system contracts configured`);
    return c!;
  }

  async function validatorSet(c: ChainCtx) {
    if (!c.set || Date.now() - c.set.at > setCacheMs) {
      const s = await readValidatorSet(c.clients, c.entry.contracts!.proofAnchor);
      c.set = { at: Date.now(), root: s.root, publicKeys: s.publicKeys.map((k) => k.toLowerCase() as Hex), powers: s.powers, thresholdNum: s.thresholdNum, thresholdDen: s.thresholdDen };
    }
    if (!c.set.publicKeys.includes(myPk as Hex)) refuse('NOT_IN_SET', `validator ${index} is not in the validator set of ${c.entry.name}`);
    return c.set;
  }

  /** Reads the intent transaction, checks execution + authority, parses and recomputes the intent. */
  async function loadIntent(intentTxId: string): Promise<LoadedIntent> {
    const cached = intents.get(intentTxId.toLowerCase());
    if (cached) return cached;
    let st: TxStatus;
    try {
      st = await ledger.getTransaction(intentTxId);
    } catch (e) {
      refuse('INTENT_NOT_FOUND', `intent transaction ${intentTxId}: ${(e as Error).message}`);
    }
    st = st!;
    if (st.pending) refuse('INTENT_PENDING', `intent transaction is pending: the signer threshold has not been met (${st.signatures.length} signature(s) so far)`);
    if (!st.delivered) refuse('INTENT_NOT_EXECUTED', `intent transaction did not execute (status ${st.status}${st.error ? `: ${st.error.message}` : ''})`);
    const txn = st.transaction;
    // the hash of the transaction as returned must be the id we asked for
    try {
      const h = bytesToHex(new core.Transaction(txn).hash()).slice(2);
      if (h !== st.txHash) refuse('INTENT_TAMPERED', `ledger transaction body hashes to ${h}, not ${st.txHash}`);
    } catch (e) {
      if (e instanceof ValidatorRefusal) throw e;
      refuse('INTENT_MALFORMED', `cannot hash the intent transaction: ${(e as Error).message}`);
    }
    if (st.type !== 'writeData' || txn?.body?.entry?.type !== 'doubleHash') refuse('NOT_AN_INTENT', `transaction is a ${st.type}, not a double-hash WriteData`);
    if (txn?.header?.memo !== INTENT_MEMO) refuse('NOT_AN_INTENT', `transaction memo is ${JSON.stringify(txn?.header?.memo)}, not ${INTENT_MEMO}`);
    const parts: string[] = txn.body.entry.data ?? [];
    let intent: CanonicalIntent;
    try {
      intent = parseIntentEntries(parts);
    } catch (e) {
      if (e instanceof IntentError) refuse('INTENT_INVALID', `intent does not recompute from its stored bytes: ${e.message}`);
      throw e;
    }
    const principal = String(st.principal);
    // a direct account of the identity: one further down lives under a sub-identity, which another party may own
    const rest = principal.toLowerCase().startsWith(`${intent!.adiUrl.toLowerCase()}/`) ? principal.slice(intent!.adiUrl.length + 1) : undefined;
    if (rest === undefined || !rest || rest.includes('/')) {
      refuse('INTENT_INVALID', `intent of ${intent!.adiUrl} was written to ${principal}, not to an account of that identity`);
    }
    const authority = await checkAuthority(st, intent!, principal);
    const loaded: LoadedIntent = { status: st, intent: intent!, authority, txHash: `0x${st.txHash}` as Hex };
    setBounded(intents, intentTxId.toLowerCase(), loaded);
    return loaded;
  }

  async function checkAuthority(st: TxStatus, intent: CanonicalIntent, principal: string): Promise<AuthorityReport> {
    const book = intent.keyBook.toLowerCase();
    const keyHash = (pub: string) => bytesToHex(sha256(hexToBytes(`0x${pub}`))).slice(2);
    const byPage = new Map<string, Set<string>>();
    // page of this book -> delegate book -> { the delegate's signing page, its keys that signed }
    const delegated = new Map<string, Map<string, { page: string; pubs: Set<string> }>>();
    for (const s of st.signatures) {
      if (s.vote !== 'accept' || !s.publicKey) continue;
      const signer = s.signer.toLowerCase();
      if (!s.delegators.length) {
        if (!signer.startsWith(`${book}/`)) continue;
        const set = byPage.get(signer) ?? new Set<string>();
        set.add(s.publicKey.toLowerCase());
        byPage.set(signer, set);
      } else if (s.delegators.length === 1) {
        const owner = s.delegators[0]!.toLowerCase();
        if (!owner.startsWith(`${book}/`)) continue;
        const dbook = signer.replace(/\/\d+$/, '');
        const m = delegated.get(owner) ?? new Map<string, { page: string; pubs: Set<string> }>();
        const e = m.get(dbook) ?? { page: signer, pubs: new Set<string>() };
        if (e.page === signer) e.pubs.add(s.publicKey.toLowerCase());
        m.set(dbook, e);
        delegated.set(owner, m);
        if (!byPage.has(owner)) byPage.set(owner, new Set());
      }
      // deeper delegation chains are not counted
    }
    // The reads below depend on the transaction only: they go out together (one ledger round trip instead of three
    // after another), and each is awaited where it is needed, so the checks still fail in the order written. A read
    // that is never awaited (a key page, after an earlier refusal) must not fail unhandled.
    const early = <T>(p: Promise<T>): Promise<T> => (p.catch(() => {}), p);
    const account = early(ledger.queryAccount(principal));
    const identity = early(ledger.queryAccount(intent.adiUrl));
    const pages = new Map([...byPage.keys()].map((p) => [p, early(ledger.queryKeyPage(p))]));
    const own = await account;
    const enabled = (a: { authorities: { url: string; disabled?: boolean }[] }) => a.authorities.filter((x) => !x.disabled).map((x) => x.url.toLowerCase());
    // the book must govern the identity itself, not only the account: the identity's owner may have given an
    // account of it to another party's book, and that party must not spend from the identity's accounts on chain
    const idAuths = enabled(await identity);
    if (!idAuths.includes(book)) refuse('AUTHORITY', `${intent.keyBook} is not an authority of the identity ${intent.adiUrl} (authorities: ${idAuths.join(', ') || 'none'})`);
    // an account created without authorities of its own is governed by its identity's
    const auths = own.authorities.length ? enabled(own) : idAuths;
    if (!auths.includes(book)) refuse('AUTHORITY', `data account ${principal} is not governed by ${intent.keyBook} (authorities: ${auths.join(', ') || 'none'})`);
    if (!byPage.size) refuse('AUTHORITY', `no accepting signature from a key page of ${intent.keyBook}`);
    const seen: string[] = [];
    for (const [page, pubs] of byPage) {
      const kp = await pages.get(page)!;
      const onPage = new Set(kp.keys.map((k) => k.publicKeyHash?.toLowerCase()).filter(Boolean));
      let n = [...pubs].filter((p) => onPage.has(keyHash(p))).length;
      let viaDelegates = 0;
      for (const [dbook, e] of delegated.get(page) ?? []) {
        // the page must list the delegate book, and the delegate's page must have met its own threshold
        if (!kp.keys.some((k) => k.delegate?.toLowerCase() === dbook)) continue;
        const dp = await ledger.queryKeyPage(e.page);
        const dOn = new Set(dp.keys.map((k) => k.publicKeyHash?.toLowerCase()).filter(Boolean));
        if ([...e.pubs].filter((p) => dOn.has(keyHash(p))).length >= Math.max(1, dp.acceptThreshold)) viaDelegates++;
      }
      n += viaDelegates;
      if (n >= kp.acceptThreshold && kp.acceptThreshold >= 1) {
        return { keyBook: intent.keyBook, keyPage: kp.url, keyPageVersion: kp.version, threshold: kp.acceptThreshold, signatures: n, ...(viaDelegates ? { delegated: viaDelegates } : {}) };
      }
      seen.push(`${kp.url}: ${n} of ${kp.acceptThreshold}`);
    }
    refuse('THRESHOLD_NOT_MET', `no key page met its threshold (${seen.join('; ')})`);
    throw new Error('unreachable');
  }

  // plans are pure functions of a loaded intent (cached above) and a chain: attest, observe and writeResult share one
  const plans = new WeakMap<LoadedIntent, Map<string, IntentAnchorPlan>>();
  function planFor(loaded: LoadedIntent, c: ChainCtx): IntentAnchorPlan {
    let byChain = plans.get(loaded);
    if (!byChain) plans.set(loaded, (byChain = new Map()));
    let plan = byChain.get(c.entry.name);
    if (!plan) byChain.set(c.entry.name, (plan = computePlan(loaded, c)));
    return plan;
  }

  function computePlan(loaded: LoadedIntent, c: ChainCtx): IntentAnchorPlan {
    const chainId = BigInt(c.entry.chainId);
    const legs = loaded.intent.legs.filter((l) => l.chainId === chainId);
    if (!legs.length) refuse('NO_LEGS', `intent has no leg on ${c.entry.name} (chain id ${chainId})`);
    for (const l of legs) {
      if (l.chain !== c.entry.name) refuse('CHAIN_MISMATCH', `leg ${l.legId} names chain ${l.chain} but chain id ${chainId} is ${c.entry.name}`);
    }
    const contracts = c.entry.contracts!;
    const account = predictAccountAddress({ accountFactory: contracts.accountFactory, proofAnchor: contracts.proofAnchor, adiUrl: loaded.intent.adiUrl });
    if (getAddress(account) !== getAddress(loaded.intent.account)) {
      refuse('ACCOUNT_MISMATCH', `legs come from ${loaded.intent.account}, but the account of ${loaded.intent.adiUrl} is ${account}`);
    }
    return planIntentAnchor(loaded.intent, { chainId, proofAnchor: contracts.proofAnchor, ledgerTxHash: loaded.txHash });
  }

  /** A block at or before `at`; the last answer is reused for times up to a minute after it (a slightly wider search). */
  async function conflictSearchStart(c: ChainCtx, at: bigint): Promise<bigint> {
    if (c.blockAt && at >= c.blockAt.at && at - c.blockAt.at <= 60n) return c.blockAt.block;
    const block = await blockAtOrBefore(c.clients, at);
    c.blockAt = { at, block };
    return block;
  }

  async function attest(req: AttestRequest): Promise<AttestResponse> {
    const t0 = performance.now();
    if (!req || typeof req.intentTxId !== 'string' || typeof req.chain !== 'string' || !req.anchor) refuse('BAD_REQUEST', 'intentTxId, chain and anchor are required');
    const c = chainCtx(req.chain);
    const [loaded, set] = await Promise.all([loadIntent(req.intentTxId), validatorSet(c)]);
    const t = now();
    if (loaded.intent.expiresAt <= t) refuse('EXPIRED', `intent expired at ${new Date(loaded.intent.expiresAt * 1000).toISOString()}`);
    if (loaded.intent.createdAt > t + CLOCK_SKEW_S) {
      refuse('NOT_YET_VALID', `intent created_at ${new Date(loaded.intent.createdAt * 1000).toISOString()} is more than ${CLOCK_SKEW_S} s ahead of this validator's clock`);
    }
    const plan = planFor(loaded, c);
    const a = req.anchor;
    const cmp = (field: string, got: unknown, want: string) => {
      if (String(got ?? '').toLowerCase() !== want.toLowerCase()) refuse('ANCHOR_MISMATCH', `anchor.${field} ${String(got)} does not match the intent (recomputed ${want})`);
    };
    if (a.proofAnchor !== undefined) cmp('proofAnchor', a.proofAnchor, plan.anchor);
    cmp('operationId', a.operationId, plan.operationId);
    cmp('ledgerTxHash', a.ledgerTxHash, plan.ledgerTxHash);
    cmp('leafCount', a.leafCount, plan.leafCount.toString());
    cmp('commitmentRoot', a.commitmentRoot, plan.commitmentRoot);
    cmp('anchorId', a.anchorId, plan.anchorId);
    const chainId = BigInt(c.entry.chainId);
    /** Refuses if this node attested another anchor for the operation; true if it attested this one. */
    const attestedBefore = () => {
      const prior = store.attestedAnchor(chainId, plan.operationId);
      if (prior && prior !== plan.anchorId.toLowerCase()) {
        refuse('CONFLICTING_ANCHOR', `already attested anchor ${prior} for operation ${plan.operationId} on ${c.entry.name}`);
      }
      return prior !== undefined;
    };
    attestedBefore();
    // another anchor for this operation already PROVEN on chain (by any quorum) is a conflict too; merely
    // created ones are not (createAnchor is permissionless, so they prove nothing)
    const fromBlock = await conflictSearchStart(c, BigInt(loaded.intent.createdAt - 2 * CLOCK_SKEW_S));
    const created = await scanLogs(
      c.clients,
      fromBlock,
      (from, to) => c.clients.public.getContractEvents({ address: plan.anchor, abi: proofAnchorAbi, eventName: 'AnchorCreated', args: { operationId: plan.operationId }, fromBlock: from, toBlock: to }),
      { maxRange: c.entry.logRangeBlocks },
    );
    for (const ev of created) {
      const other = (ev.args as { anchorId?: Hex }).anchorId;
      if (!other || other.toLowerCase() === plan.anchorId.toLowerCase()) continue;
      if ((await readAnchorState(c.clients, plan.anchor, other)).status === 'proven') {
        refuse('CONFLICTING_ANCHOR', `anchor ${other} for operation ${plan.operationId} is already proven on ${c.entry.name}`);
      }
    }
    // checked again, and recorded in the same turn of the event loop: while the search above was awaited, a request
    // for another ledger tx of the same operation may have been attested here. On disk before the signature leaves,
    // also when a concurrent identical request recorded it a moment ago.
    await (attestedBefore() ? store.durable() : store.recordAttestation(chainId, plan.operationId, plan.anchorId));
    const message = anchorMessage({ chainId, anchor: plan.anchor, anchorId: plan.anchorId, validatorSetRoot: set.root });
    const signature = signOnce(message);
    return {
      ok: true,
      kind: 'attestation',
      validatorIndex: index,
      publicKey: keys.bls.publicKey,
      chainId: chainId.toString(),
      anchorId: plan.anchorId,
      operationId: plan.operationId,
      validatorSetRoot: set.root,
      message,
      signature,
      authority: loaded.authority,
      legs: plan.legs.map((l) => l.legId),
      elapsedMs: Math.round(performance.now() - t0),
    };
  }

  async function waitFor<T>(what: string, deadline: number, fn: () => Promise<T | undefined>): Promise<T> {
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > deadline) refuse('OBSERVE_TIMEOUT', `timed out waiting for ${what}`);
      await sleep(poll);
    }
  }

  const observationKey = (req: ObserveRequest) =>
    `${req.intentTxId.toLowerCase()}:${req.chain}:${String(req.anchorId).toLowerCase()}:${req.leafIndex}:${req.executionTxHash.toLowerCase()}`;

  async function observe(req: ObserveRequest): Promise<ObserveResponse> {
    const t0 = performance.now();
    if (!req || typeof req.intentTxId !== 'string' || typeof req.chain !== 'string' || typeof req.executionTxHash !== 'string') {
      refuse('BAD_REQUEST', 'intentTxId, chain, anchorId, leafIndex and executionTxHash are required');
    }
    // the intent and chain are part of the key: a result record is built from the request's intent and chain, so an
    // observation must never answer for another intent's request that names the same anchor, leaf and transaction
    const key = observationKey(req);
    const cached = observations.get(key);
    if (cached) return cached;
    const c = chainCtx(req.chain);
    const [loaded, set] = await Promise.all([loadIntent(req.intentTxId), validatorSet(c)]);
    const plan = planFor(loaded, c);
    if (String(req.anchorId).toLowerCase() !== plan.anchorId.toLowerCase()) refuse('ANCHOR_MISMATCH', `anchorId ${req.anchorId} is not the intent's anchor ${plan.anchorId}`);
    const leafIndex = Number(req.leafIndex);
    const leg = plan.legs[leafIndex];
    if (!Number.isSafeInteger(leafIndex) || !leg) refuse('NO_LEGS', `anchor has no leaf ${req.leafIndex}`);
    const chainId = BigInt(c.entry.chainId);
    const pub = c.clients.public;
    const deadline = Date.now() + (opts.observeTimeoutMs ?? 60_000);
    const txHash = req.executionTxHash.toLowerCase() as Hex;
    if (!/^0x[0-9a-f]{64}$/.test(txHash)) refuse('BAD_REQUEST', 'executionTxHash must be 32-byte hex');

    const receipt = await waitFor('the execution receipt', deadline, () => pub.getTransactionReceipt({ hash: txHash }).catch(() => undefined));
    const blockNumber = receipt.blockNumber;
    let confirmations = 0;
    await waitFor(`${c.entry.confirmations} confirmations`, deadline, async () => {
      // one eth_blockNumber per poll interval however many observations wait on this chain (viem shares the
      // answer and the request in flight), not one per observation
      const latest = await pub.getBlockNumber({ cacheTime: poll });
      confirmations = Number(latest - blockNumber);
      if (opts.finality === 'finalized') {
        const fin = await pub.getBlock({ blockTag: 'finalized' }).catch(() => undefined);
        return fin && fin.number !== null && fin.number >= blockNumber ? true : undefined;
      }
      return confirmations >= c.entry.confirmations ? true : undefined;
    });
    const block = await proofStep('block header', () => fetchVerifiedBlock(pub, { number: blockNumber }));
    if (block.hash.toLowerCase() !== receipt.blockHash.toLowerCase()) refuse('REORG', `block ${blockNumber} is now ${block.hash}, receipt says ${receipt.blockHash}`);
    const account = loaded.intent.account;
    const { raw: rawTx, txIndex } = await proofStep('transaction inclusion', () => proveTransaction(pub, block, txHash, blockTries));
    const proven = await proofStep('receipt inclusion', () => proveReceipt(pub, block, txIndex, blockTries));
    if (proven.status !== 1) refuse('EXECUTION_FAILED', `execution transaction ${txHash} reverted (status 0)`);

    // the executed call is exactly the committed one
    let callBinding: 'calldata' | 'event' = 'event';
    const parsed = parseTransaction(rawTx);
    if (parsed.to && getAddress(parsed.to) === getAddress(account)) {
      let d;
      try {
        d = decodeFunctionData({ abi: abstractAccountAbi, data: parsed.data ?? '0x' });
      } catch {
        refuse('CALL_MISMATCH', 'execution transaction does not call an account function');
      }
      if (d!.functionName !== 'executeGovernanceProofDirect') refuse('CALL_MISMATCH', `execution transaction calls ${d!.functionName}`);
      const [target, value, data, proof] = d!.args as unknown as [Address, bigint, Hex, { commitmentRoot: Hex; operationId: Hex; ledgerTxHash: Hex; leafCount: bigint; leafIndex: bigint; deadline: bigint; gasLimit: bigint }];
      if (getAddress(target) !== getAddress(leg!.target) || value !== leg!.value || data.toLowerCase() !== leg!.data.toLowerCase()) {
        refuse('CALL_MISMATCH', `executed call (${target}, ${value}, ${data.slice(0, 74)}) is not the committed one of leg ${leg!.legId}`);
      }
      if (
        proof.commitmentRoot.toLowerCase() !== plan.commitmentRoot.toLowerCase() ||
        proof.operationId.toLowerCase() !== plan.operationId.toLowerCase() ||
        proof.ledgerTxHash.toLowerCase() !== plan.ledgerTxHash.toLowerCase() ||
        proof.leafCount !== plan.leafCount ||
        proof.leafIndex !== BigInt(leafIndex) ||
        proof.deadline !== plan.proofs[leafIndex]!.deadline ||
        proof.gasLimit !== plan.proofs[leafIndex]!.gasLimit
      ) {
        refuse('CALL_MISMATCH', 'execution used a proof for another anchor or leaf');
      }
      callBinding = 'calldata';
    }
    const logs = proven.logs;
    const executed = findExecutedEvent(logs, { account, anchorId: plan.anchorId, leafIndex: BigInt(leafIndex), executionCommitment: leg!.executionCommitment });
    if (!executed) refuse('CALL_MISMATCH', `no Executed(${plan.anchorId}, ${leafIndex}, ${leg!.executionCommitment}) event from ${account} in the proven receipt`);

    if (callBinding === 'event' && leg!.expectedEvents.length) {
      // a contract that ran the execution can emit in the same transaction, before or after it, whatever it likes:
      // its receipt's logs cannot be told apart from the committed call's, so no expected event can be attested
      refuse(
        'INDIRECT_EXECUTION',
        `execution ran through contract ${parsed.to ?? '(creation)'}, not a transaction to ${account}: the expected events of leg ${leg!.legId} cannot be attributed to the committed call`,
      );
    }
    for (const ev of leg!.expectedEvents) {
      if (!expectedEventEmitted(logs, ev)) refuse('EVENT_NOT_EMITTED', `expected event not emitted: ${ev.topic0} from ${ev.contract}${ev.topics ? ` with topics ${JSON.stringify(ev.topics)}` : ''}`);
    }
    if (leg!.expectedState.length) {
      const byAccount = new Map<Address, typeof leg.expectedState>();
      for (const s of leg!.expectedState) byAccount.set(s.account, [...(byAccount.get(s.account) ?? []), s]);
      for (const [acct, items] of byAccount) {
        const values = await proofStep(`state proof for ${acct}`, () => proveStorage(pub, { account: acct, slots: items.map((s) => s.slot), blockNumber, stateRoot: block.stateRoot }));
        items.forEach((s, i) => {
          if (values[i]!.toLowerCase() !== s.value.toLowerCase()) {
            refuse('STATE_MISMATCH', `state slot ${s.slot} of ${acct} is ${values[i]} after execution, expected ${s.value}`);
          }
        });
      }
    }

    const result: ExecutionResult = {
      chainId,
      txHash,
      blockNumber,
      blockHash: block.hash,
      transactionsRoot: block.transactionsRoot,
      receiptsRoot: block.receiptsRoot,
      stateRoot: block.stateRoot,
      status: 1,
      txIndex: BigInt(proven.txIndex),
      gasUsed: proven.gasUsed,
      eventsHash: eventsHash(logs),
      executionCommitment: leg!.executionCommitment,
    };
    const rh = resultHash(result);
    const message = resultMessage({ chainId, anchor: plan.anchor, anchorId: plan.anchorId, leafIndex: BigInt(leafIndex), resultHash: rh, validatorSetRoot: set.root });
    const signature = signOnce(message);
    const res: ObserveResponse = {
      ok: true,
      kind: 'observation',
      validatorIndex: index,
      publicKey: keys.bls.publicKey,
      anchorId: plan.anchorId,
      leafIndex: String(leafIndex),
      legId: leg!.legId,
      validatorSetRoot: set.root,
      resultHash: rh,
      message,
      signature,
      result: {
        chainId: chainId.toString(),
        txHash,
        blockNumber: blockNumber.toString(),
        blockHash: block.hash,
        blockTimestamp: BigInt(block.timestamp).toString(),
        transactionsRoot: block.transactionsRoot,
        receiptsRoot: block.receiptsRoot,
        stateRoot: block.stateRoot,
        status: 1,
        txIndex: String(proven.txIndex),
        gasUsed: proven.gasUsed.toString(),
        eventsHash: result.eventsHash,
        eventCount: logs.length,
        executionCommitment: leg!.executionCommitment,
      },
      confirmations,
      checks: { callBinding, expectedEvents: leg!.expectedEvents.length, expectedState: leg!.expectedState.length },
      elapsedMs: Math.round(performance.now() - t0),
    };
    setBounded(observations, key, res);
    return res;
  }

  // The results account read once and then only where it grew: result id -> where its record is. A lookup costs
  // the entries appended since the last one, not the whole account (which only ever grows).
  const resultsAccount = opts.protocol.resultsAccount;
  /** result id → every entry of the results account that claims it, in ledger order (anyone with write access can add one) */
  const resultIndex = new Map<string, { index: number; txId: string; entryHash: string }[]>();
  let resultsScanned = 0;
  let scanning: Promise<void> = Promise.resolve();
  function scanResults(): Promise<void> {
    scanning = scanning
      .catch(() => {})
      .then(async () => {
        for (;;) {
          const page = await ledger.readDataEntries(resultsAccount, { start: resultsScanned, count: 100 });
          for (const [i, e] of page.entries()) {
            const r = parseProofResult(e.data, true);
            if (!r) continue;
            const hits = resultIndex.get(r.result_id.toLowerCase()) ?? [];
            hits.push({ index: resultsScanned + i, txId: e.txHash ? `acc://${e.txHash}@${resultsAccount.replace(/^acc:\/\//, '')}` : '', entryHash: e.entryHash });
            resultIndex.set(r.result_id.toLowerCase(), hits);
          }
          resultsScanned += page.length;
          if (page.length < 100) return;
        }
      });
    return scanning;
  }

  /** The first entry of the results account for this result id that `accept` takes. */
  async function findWrittenResult(
    resultId: string,
    accept: (r: ProofResultRecord, entryHash: string) => boolean,
  ): Promise<{ txId: string; entryHash: string; record: ProofResultRecord } | undefined> {
    await scanResults();
    for (const hit of resultIndex.get(resultId.toLowerCase()) ?? []) {
      const [e] = await ledger.readDataEntries(resultsAccount, { start: hit.index, count: 1 });
      const record = e ? parseProofResult(e.data, true) : undefined;
      if (!record || record.result_id.toLowerCase() !== resultId.toLowerCase()) throw new Error(`results entry ${hit.index} no longer holds result ${resultId}`);
      if (accept(record, hit.entryHash)) return { txId: hit.txId, entryHash: hit.entryHash, record };
    }
    return undefined;
  }

  /** The fields of a result record that depend on which quorum signed it and who wrote it; all others are the result. */
  const QUORUM_FIELDS = new Set<string>(['aggregate_signature', 'validator_bitfield', 'validator_count', 'signed_power', 'written_by']);

  /** The quorum a bitmap names, if it meets the threshold and the aggregate verifies over `message`. */
  function quorumOf(set: Awaited<ReturnType<typeof validatorSet>>, bitmapText: string, aggregateSignature: Hex, message: Hex): { bitmap: bigint; count: number; power: bigint } | undefined {
    let bitmap: bigint;
    try {
      bitmap = BigInt(bitmapText);
    } catch {
      return undefined;
    }
    if (bitmap < 0n || !meetsThreshold(set, bitmap)) return undefined;
    const idx = set.publicKeys.map((_, i) => i).filter((i) => (bitmap >> BigInt(i)) & 1n);
    try {
      if (!blsVerify(aggregateSignature, message, blsAggregatePublicKeys(idx.map((i) => set.publicKeys[i]!)))) return undefined;
    } catch {
      return undefined;
    }
    return { bitmap, count: idx.length, power: idx.reduce((a, i) => a + set.powers[i]!, 0n) };
  }

  async function doWriteResult(req: WriteResultRequest, resultId: Hex): Promise<WriteResultResponse> {
    const obs = await observe(req);
    const c = chainCtx(req.chain);
    // the observation may be from the cache: the record is written only while its block is still the chain's
    const now = await proofStep('block header', () => fetchVerifiedBlock(c.clients.public, { number: BigInt(obs.result.blockNumber) }));
    if (now.hash.toLowerCase() !== obs.result.blockHash.toLowerCase()) {
      observations.delete(observationKey(req));
      refuse('REORG', `block ${obs.result.blockNumber} is now ${now.hash}, observed ${obs.result.blockHash}: the execution must be observed again`);
    }
    const set = await validatorSet(c);
    let requested: bigint;
    try {
      requested = BigInt(req.signerBitmap);
    } catch {
      refuse('BAD_REQUEST', 'signerBitmap must be an integer');
    }
    if (!meetsThreshold(set, requested!)) refuse('NO_QUORUM', `signer bitmap ${requested!} does not meet the threshold ${set.thresholdNum}/${set.thresholdDen}`);
    if (typeof req.aggregateSignature !== 'string') refuse('BAD_REQUEST', 'aggregateSignature is required');
    const quorum = quorumOf(set, requested!.toString(), req.aggregateSignature, obs.message);
    if (!quorum) refuse('BAD_AGGREGATE', "aggregate signature does not verify over this validator's own result message");
    const { bitmap, count, power: signedPower } = quorum!;
    const loaded = await loadIntent(req.intentTxId);
    const plan = planFor(loaded, c);
    if (plan.anchorId.toLowerCase() !== obs.anchorId.toLowerCase()) refuse('ANCHOR_MISMATCH', `anchorId ${obs.anchorId} is not the intent's anchor ${plan.anchorId}`);
    const totalPower = set.powers.reduce((a, p) => a + p, 0n);
    const record: ProofResultRecord = {
      entry_type: PROOF_RESULT_ENTRY_TYPE,
      version: PROOF_RESULT_VERSION,
      format: PROOF_RESULT_FORMAT,
      result_id: resultId,
      intent_id: loaded.intent.intentId,
      intent_tx_id: loaded.status.txId,
      intent_tx_hash: loaded.txHash,
      operation_id: plan.operationId,
      anchor_contract: plan.anchor,
      anchor_id: plan.anchorId,
      leaf_index: obs.leafIndex,
      leg_id: obs.legId,
      execution_commitment: obs.result.executionCommitment,
      chain_name: c.entry.name,
      chain_id: obs.result.chainId,
      tx_hash: obs.result.txHash,
      block_number: obs.result.blockNumber,
      block_hash: obs.result.blockHash,
      block_timestamp: obs.result.blockTimestamp,
      tx_index: obs.result.txIndex,
      success: obs.result.status === 1 ? 'true' : 'false',
      gas_used: obs.result.gasUsed,
      events_hash: obs.result.eventsHash,
      event_count: String(obs.result.eventCount),
      expected_events_verified: String(obs.checks.expectedEvents),
      expected_state_verified: String(obs.checks.expectedState),
      transactions_root: obs.result.transactionsRoot,
      receipts_root: obs.result.receiptsRoot,
      state_root: obs.result.stateRoot,
      confirmation_blocks: String(c.entry.confirmations),
      result_hash: obs.resultHash,
      attestation_hash: anchorMessage({ chainId: BigInt(c.entry.chainId), anchor: plan.anchor, anchorId: plan.anchorId, validatorSetRoot: set.root }),
      attestation_message_hash: obs.message,
      validator_set_root: set.root,
      validator_bitfield: bitmap.toString(),
      validator_count: String(count),
      signed_power: signedPower.toString(),
      total_power: totalPower.toString(),
      threshold_numerator: set.thresholdNum.toString(),
      threshold_denominator: set.thresholdDen.toString(),
      threshold_met: 'true',
      aggregate_signature: req.aggregateSignature.toLowerCase(),
      written_by: String(index),
    };
    // Already written: by this node (its store names the entry), or by another as a record of this very result with a
    // quorum of its own. An entry that is neither (junk, or a record of something else under this id) does not count.
    const mine = store.writtenResult(resultId);
    const bare = (h: string | null | undefined) => h?.replace(/^0x/, '').toLowerCase();
    const ofThisResult = (r: ProofResultRecord) => {
      if (!PROOF_RESULT_FIELDS.every((k) => QUORUM_FIELDS.has(k) || r[k] === record[k])) return false;
      const q = quorumOf(set, r.validator_bitfield, r.aggregate_signature as Hex, obs.message);
      return !!q && String(q.count) === r.validator_count && q.power.toString() === r.signed_power;
    };
    const existing = await findWrittenResult(resultId, (r, entryHash) => (mine?.entryHash ? bare(entryHash) === bare(mine.entryHash) : ofThisResult(r)));
    if (mine && !existing) throw new Error(`result ${resultId}, written by this validator in ${mine.txId}, is not in ${resultsAccount} yet`);
    if (existing) {
      return { ok: true, kind: 'result-write', written: false, resultId, resultsAccount: opts.protocol.resultsAccount, txId: existing.txId, entryHash: existing.entryHash, record: existing.record };
    }
    const parts = encodeProofResult(record);
    const sub = await ledger.signAndSubmit(opts.protocol.resultsAccount, ledgerTx.writeData(parts), held, { memo: PROOF_RESULT_MEMO });
    const st = await ledger.waitForTransaction(sub.txId, { timeoutMs: 60_000 });
    if (!st.delivered) throw new Error(`proof_result write ${sub.txId} ended ${st.status}: ${st.error?.message ?? ''}`);
    const entryHash = bytesToHex(dataEntryHash(parts)).slice(2);
    await store.recordResult(resultId, { txId: sub.txId, entryHash });
    return { ok: true, kind: 'result-write', written: true, resultId, resultsAccount: opts.protocol.resultsAccount, txId: sub.txId, entryHash, record };
  }

  return {
    index,
    info: () => ({
      index,
      blsPublicKey: keys.bls.publicKey,
      proofOfPossession: keys.bls.proofOfPossession,
      ed25519PublicKey: keys.ed25519.publicKey,
      keyPage: opts.protocol.keyPage,
      resultsAccount: opts.protocol.resultsAccount,
      chains: opts.chains.map((c) => ({ name: c.name, chainId: c.chainId })),
    }),
    attest: shared('attest', attest),
    observe: shared('observe', observe),
    close: () => store.close(),
    async writeResult(req) {
      const resultId = resultIdOf(req.anchorId, req.leafIndex);
      const running = writeLocks.get(resultId);
      if (running) return running;
      const p = doWriteResult(req, resultId).finally(() => writeLocks.delete(resultId));
      writeLocks.set(resultId, p);
      return p;
    },
  };
}
