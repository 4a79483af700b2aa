/**
 * What the parts of a validator node share (attestation, observation, result record): its keys and store, its
 * chains with their cached validator sets, the intents it read from the ledger and recomputed, their anchor plans
 * per chain, and its BLS signatures. createNodeContext builds it once per node.
 */
import { core } from 'accumulate.js';
import { bytesToHex, getAddress, hexToBytes, type Hex } from 'viem';
import { predictAccountAddress } from '../chain/account.js';
import { readValidatorSet } from '../chain/anchor.js';
import { blsSign } from '../chain/bls.js';
import { createChainClients, type ChainClients } from '../chain/clients.js';
import type { ChainEntry } from '../chain/registry.js';
import type { HeldKey, LedgerClient, TxStatus } from '../ledger/index.js';
import { INTENT_MEMO, IntentError, parseIntentEntries, planIntentAnchor, type CanonicalIntent, type IntentAnchorPlan } from '../protocol/intent/index.js';
import type { AuthorityReport } from '../protocol/validator-wire.js';
import { checkAuthority } from './authority.js';
import type { ValidatorKeys } from './keys.js';
import { refuse, ValidatorRefusal } from './refusal.js';
import { createValidatorStore, type ValidatorStore } from './store.js';

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

export interface ChainCtx {
  entry: ChainEntry;
  clients: ChainClients;
  set?: { at: number; root: Hex; publicKeys: Hex[]; powers: bigint[]; thresholdNum: bigint; thresholdDen: bigint };
  /** the last blockAtOrBefore answer: a block at or before `at` is at or before any later time too */
  blockAt?: { at: bigint; block: bigint };
}

export interface LoadedIntent {
  status: TxStatus;
  intent: CanonicalIntent;
  authority: AuthorityReport;
  txHash: Hex;
}

/** Map.set that evicts the oldest entry beyond `max` (bounded caches). */
export function setBounded<K, V>(m: Map<K, V>, k: K, v: V, max = 10_000) {
  if (m.size >= max && !m.has(k)) m.delete(m.keys().next().value as K);
  m.set(k, v);
}

/** A chain's validator set as last read from its ProofAnchor (keys lowercased). */
export type ValidatorSetView = NonNullable<ChainCtx['set']>;

export interface NodeContext {
  readonly opts: ValidatorNodeOptions;
  readonly keys: ValidatorKeys;
  readonly index: number;
  readonly ledger: LedgerClient;
  readonly store: ValidatorStore;
  /** unix seconds */
  now(): number;
  /** how often a wait polls, in ms */
  readonly poll: number;
  /** the node's Ed25519 seat on the protocol ADI's key page, with which it writes result records */
  readonly held: HeldKey;
  /** the chain by name or id, with system contracts; refuses UNKNOWN_CHAIN otherwise */
  chainCtx(name: string): ChainCtx;
  /** the chain's validator set (cached for setCacheMs); refuses NOT_IN_SET when this node is not in it */
  validatorSet(c: ChainCtx): Promise<ValidatorSetView>;
  /** Reads the intent transaction, checks execution + authority, parses and recomputes the intent (cached). */
  loadIntent(intentTxId: string): Promise<LoadedIntent>;
  /** the intent's anchor on the chain, recomputed once per loaded intent and chain */
  planFor(loaded: LoadedIntent, c: ChainCtx): IntentAnchorPlan;
  /** this node's BLS signature over `message` (deterministic, so each message is signed once) */
  signOnce(message: Hex): Hex;
}

export function createNodeContext(opts: ValidatorNodeOptions): NodeContext {
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
  function chainCtx(name: string): ChainCtx {
    const c = chains.get(String(name));
    if (!c) refuse('UNKNOWN_CHAIN', `unknown chain ${name}`);
    if (!c!.entry.contracts) refuse('UNKNOWN_CHAIN', `chain ${name} has no system contracts configured`);
    return c!;
  }

  async function validatorSet(c: ChainCtx): Promise<ValidatorSetView> {
    if (!c.set || Date.now() - c.set.at > setCacheMs) {
      const s = await readValidatorSet(c.clients, c.entry.contracts!.proofAnchor);
      c.set = {
        at: Date.now(),
        root: s.root,
        publicKeys: s.publicKeys.map((k) => k.toLowerCase() as Hex),
        powers: s.powers,
        thresholdNum: s.thresholdNum,
        thresholdDen: s.thresholdDen,
      };
    }
    if (!c.set.publicKeys.includes(myPk as Hex)) refuse('NOT_IN_SET', `validator ${index} is not in the validator set of ${c.entry.name}`);
    return c.set;
  }

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
    if (st.pending)
      refuse('INTENT_PENDING', `intent transaction is pending: the signer threshold has not been met (${st.signatures.length} signature(s) so far)`);
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
    const authority = await checkAuthority(ledger, st, intent!, principal);
    const loaded: LoadedIntent = { status: st, intent: intent!, authority, txHash: `0x${st.txHash}` as Hex };
    setBounded(intents, intentTxId.toLowerCase(), loaded);
    return loaded;
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

  return { opts, keys, index, ledger, store, now, poll, held, chainCtx, validatorSet, loadIntent, planFor, signOnce };
}
