/**
 * Identities, the use case behind /v1/identity: create (validate, refuse names with a sliding fee, write the row
 * within the organization's quota and credit grant, start `identity-<id>`, undo the row only when the workflow did
 * not start), read with chain accounts, repair a hash-only identity, retire, and the live balances of the portfolio.
 * Built once per app: it keeps the ledger's name-fee schedule (read once a minute) and one chain reader per chain.
 */
import { randomUUID } from 'node:crypto';
import { formatEther, type Address } from 'viem';
import { ApiError } from './errors.js';
import {
  createIdentityWithinQuota,
  getChainAccounts,
  recentProvisioningSeconds,
  retireIdentity,
  setIdentityPublicKey,
  TERMINAL_STATUSES,
  undoIdentityCreation,
  type ChainAccountRow,
  type CreateIdentityResult,
  type IdentityRow,
} from '../db/identities.js';
import { countOrgIdentities, listOrgIdentityPage, type IdentityFilter } from '../db/identity-lists.js';
import type { RowPage } from '../db/pagination.js';
import { adiNameProblem, BASE_IDENTITY_FEE_UNITS, ed25519PublicKeyProblem, identityUrls, publicKeyHashHex, slidingIdentityFee } from '../identity/keys.js';
import type { Logger } from '../log.js';
import { redactUrls } from '../net/redact.js';
import { withTimeout } from '../net/timeout.js';
import { identityWorkflowId, startIdentityWorkflowOrCompensate } from '../temporal/identities.js';
import { createChainReaders, nativeCurrency } from './chains.js';
import type { Caller, ServiceDeps } from './deps.js';
import { findOrgIdentity } from './identity-access.js';
import { newIdentityKey } from './provider.js';

const HEX64 = /^[0-9a-fA-F]{64}$/;
export const MAX_CREDITS = 1_000_000_000;
/** Identity reads of the ledger and the chains answer within this, or count as unreadable. */
const READ_TIMEOUT_MS = 3000;

export interface CreateIdentityRequest {
  name: string;
  public_key?: string;
  public_key_hash?: string;
  chains?: string[];
  credits?: number;
  /** external (default): the client holds the key; provider: the gateway generates and holds it */
  signing_mode?: 'external' | 'provider';
}

/**
 * An identity with its chain accounts (empty while creating: they are filled on the move to active) and, when read
 * from the ledger for this answer, its key page's whole credits (`credit`; absent: the recorded value stands).
 */
export interface IdentityWithAccounts {
  row: IdentityRow;
  accounts: ChainAccountRow[];
  credit?: { balance: number };
}

export interface PollingHints {
  first_poll_after_seconds: number;
  interval_seconds: number;
  estimated_ready_in_seconds: number;
  terminal_states: string[];
}

/** A chain's native balance of an account: amount in base units (decimal string). */
export interface NativeBalance {
  symbol: string;
  decimals: number;
  native: true;
  amount: string;
}

/** One chain account of a portfolio entry with its live native balance; an unreadable chain is a per-entry error. */
export interface PortfolioChain {
  chain: string;
  chain_id: string;
  evm_chain_id: number;
  address: string;
  deployment_tx: string | null;
  deployed: boolean;
  balance_wei: string | null;
  balance: string | null;
  balances?: NativeBalance[];
  error?: string;
}

/** The live credits and native balances of one identity; a source that does not answer is a per-entry error. */
export interface PortfolioEntry {
  id: string;
  adi_url: string;
  status: string;
  credit_balance: number | null;
  credit_error?: string;
  chains: PortfolioChain[];
}

const bad = (field: string, message: string) => new ApiError(400, 'VALIDATION_ERROR', `${field}: ${message}`, { field });

/**
 * The chains of a request, each once: a name not in the registry (UNKNOWN_CHAIN) or a chain without system
 * contracts (CHAIN_UNAVAILABLE) is a 400 naming `field` (`chains` on create, `link_chains` on PATCH).
 */
export function validateChains(deps: ServiceDeps, requested: string[], field: string): string[] {
  const known = deps.config.chains.map((c) => c.name);
  const chains = [...new Set(requested)];
  for (const ch of chains) {
    if (!known.includes(ch)) {
      throw new ApiError(400, 'UNKNOWN_CHAIN', `${field}: unknown chain "${ch}"; known chains: ${known.join(', ')} (GET /v1/chains)`, {
        field,
        chain: ch,
        known_chains: known,
      });
    }
  }
  for (const ch of chains) {
    if (!deps.config.chains.find((x) => x.name === ch)?.contracts) {
      throw new ApiError(400, 'CHAIN_UNAVAILABLE', `${field}: "${ch}" has no system contracts deployed yet; no account can be created there`, {
        field,
        chain: ch,
      });
    }
  }
  return chains;
}

/** The create request's checks (400s naming the field), its key and key hash, and the warnings of the answer. */
function validateCreate(deps: ServiceDeps, body: CreateIdentityRequest, providerKey?: string) {
  const warnings: string[] = [];
  let publicKey: string | null = null;
  let publicKeyHash = '';
  if (providerKey !== undefined) {
    for (const f of ['public_key', 'public_key_hash'] as const) {
      if (body[f] !== undefined) throw bad(f, 'must be absent with signing_mode provider: the gateway generates and holds the key');
    }
    publicKey = providerKey;
    publicKeyHash = publicKeyHashHex(providerKey);
  } else if (body.public_key !== undefined) {
    const p = ed25519PublicKeyProblem(body.public_key);
    if (p) throw bad('public_key', p);
    publicKey = body.public_key.toLowerCase();
  }
  if (body.public_key_hash !== undefined && !HEX64.test(body.public_key_hash)) {
    throw bad('public_key_hash', 'must be 64 hex characters (SHA-256 of the raw 32-byte public key)');
  }
  if (providerKey !== undefined) {
    // the key was generated above
  } else if (publicKey) {
    publicKeyHash = publicKeyHashHex(publicKey);
    if (body.public_key_hash !== undefined && body.public_key_hash.toLowerCase() !== publicKeyHash) {
      throw new ApiError(
        400,
        'PUBLIC_KEY_HASH_MISMATCH',
        'public_key_hash: does not match public_key (it must be SHA-256 over the raw 32 key bytes, not over the hex text)',
        { field: 'public_key_hash', expected: publicKeyHash },
      );
    }
  } else if (body.public_key_hash !== undefined) {
    publicKeyHash = body.public_key_hash.toLowerCase();
    warnings.push(
      'Only public_key_hash was supplied: this identity cannot sign (can_sign false) until PATCH /v1/identity/{id} supplies the matching public_key.',
    );
  } else {
    throw bad('public_key', 'required (or at least public_key_hash)');
  }

  const chains = validateChains(deps, body.chains ?? [], 'chains');
  const credits = body.credits ?? 0;
  if (!Number.isInteger(credits) || credits < 0 || credits > MAX_CREDITS) {
    throw bad('credits', `must be a whole number from 0 to ${MAX_CREDITS}`);
  }
  if (credits === 0) warnings.push('credits is 0: the key page cannot pay for ledger transactions (intents, votes) until credits are added.');
  return { publicKey, publicKeyHash, chains, credits, warnings };
}

/** The API error of a row the quota, the credit grant or the name refused. */
function refusal(res: Exclude<CreateIdentityResult, { ok: true }>, adiUrl: string): ApiError {
  switch (res.reason) {
    case 'quota':
      return new ApiError(
        403,
        'IDENTITY_QUOTA_EXCEEDED',
        `Identity quota reached: ${res.used} of ${res.quota} identities in use (retire identities with DELETE /v1/identity/{id} to free slots; failed ones count too)`,
        { quota: res.quota, used: res.used },
      );
    case 'credits':
      return new ApiError(
        402,
        'CREDIT_GRANT_EXCEEDED',
        `credits: ${res.requested} requested but only ${res.remaining} remain in the organization's credit grant`,
        {
          field: 'credits',
          requested: Number(res.requested),
          remaining: Number(res.remaining),
        },
      );
    case 'name_taken':
      return new ApiError(409, 'NAME_TAKEN', `name: ${adiUrl} is already taken`, { field: 'name', adi_url: adiUrl });
    default:
      return new ApiError(403, 'ORG_NOT_FOUND', 'The API key belongs to no organization');
  }
}

/** Live balances for the portfolio, with one chain reader per chain kept across requests. */
function createBalanceReader(deps: ServiceDeps) {
  const db = deps.database.db;
  const reader = createChainReaders();

  /** Each row's key-page credits and account balances, read live and in parallel; `balances` adds the list form. */
  async function liveBalances(rows: IdentityRow[], opts: { balances?: boolean } = {}): Promise<PortfolioEntry[]> {
    // like the identity view: no chain accounts while creating (they are shown from the move to active)
    const accounts = await getChainAccounts(
      db,
      rows.filter((r) => r.status !== 'creating').map((r) => r.id),
    );
    const chainCfg = new Map(deps.config.chains.map((ch) => [ch.name, ch]));
    return Promise.all(
      rows.map(async (r) => {
        const credits = (async () => {
          if (r.status !== 'active') return { credit_balance: Number(r.creditBalance) };
          try {
            return { credit_balance: await liveCredits(deps, r) };
          } catch (e) {
            return { credit_balance: null, credit_error: `ledger: ${redactUrls((e as Error).message, [deps.config.ledgerUrl])}` };
          }
        })();
        const chains = Promise.all(
          (accounts.get(r.id) ?? []).map(async (a): Promise<PortfolioChain> => {
            const base = {
              chain: a.chain,
              chain_id: a.chain,
              evm_chain_id: Number(a.chainId),
              address: a.address,
              deployment_tx: a.deploymentTx,
              // a chain account is recorded once its code is on the chain
              deployed: true,
            };
            const unread = (error: string): PortfolioChain => ({
              ...base,
              balance_wei: null,
              balance: null,
              ...(opts.balances ? { balances: [] } : {}),
              error,
            });
            const cfg = chainCfg.get(a.chain);
            if (!cfg) return unread('chain no longer configured');
            try {
              const wei = await withTimeout(reader(cfg).public.getBalance({ address: a.address as Address }), READ_TIMEOUT_MS, a.chain);
              const balances = opts.balances ? { balances: [{ ...nativeCurrency(a.chain), native: true as const, amount: wei.toString() }] } : {};
              return { ...base, balance_wei: wei.toString(), balance: formatEther(wei), ...balances };
            } catch (e) {
              return unread((e as Error).message.split('\n')[0]!);
            }
          }),
        );
        return { id: r.id, adi_url: r.adiUrl, status: r.status, ...(await credits), chains: await chains };
      }),
    );
  }
  return liveBalances;
}

/** The whole credits on an identity's key page, read from the ledger within READ_TIMEOUT_MS. */
async function liveCredits(deps: ServiceDeps, r: IdentityRow): Promise<number> {
  const page = await withTimeout(deps.ledger.queryKeyPage(r.keyPageUrl), READ_TIMEOUT_MS, 'ledger');
  return Math.floor(page.creditBalance / 100);
}

/** The rows with their chain accounts; none while creating (the accounts are filled on the move to active). */
async function accountsOf(deps: ServiceDeps, rows: IdentityRow[]): Promise<IdentityWithAccounts[]> {
  const acc = await getChainAccounts(
    deps.database.db,
    rows.filter((r) => r.status !== 'creating').map((r) => r.id),
  );
  return rows.map((row) => ({ row, accounts: acc.get(row.id) ?? [] }));
}

/** The paged reads: the identity list and the portfolio's identities, with the counts their totals cover. */
function identityPages(deps: ServiceDeps) {
  const db = deps.database.db;
  /** A page of the organization's identities (`page.limit` rows: ask one to spare) and how many the filter matches. */
  async function list(orgId: string, f: IdentityFilter, page: RowPage): Promise<{ rows: IdentityWithAccounts[]; total: number }> {
    const [rows, counts] = await Promise.all([listOrgIdentityPage(db, orgId, f, page), countOrgIdentities(db, orgId, f)]);
    return { rows: await accountsOf(deps, rows), total: counts.identities };
  }

  /**
   * The portfolio's identities: a page (`page.limit` rows: ask one to spare) of the organization's identities that are
   * not retired, or the one `identity` names (id or ADI URL), and totals over every identity the filter matches, not
   * only the page. Their live balances: liveBalances.
   */
  async function portfolioPage(orgId: string, identity: string | undefined, page: RowPage) {
    if (identity) {
      const row = await findOrgIdentity(db, orgId, identity, { field: 'identity', adiUrl: true });
      const [{ accounts }] = await accountsOf(deps, [row]);
      const first = page.after === undefined && !page.offset;
      return { rows: first ? [row] : [], total: 1, totals: { identities: 1, chains: accounts.length } };
    }
    const [rows, counts] = await Promise.all([listOrgIdentityPage(db, orgId, {}, page), countOrgIdentities(db, orgId, {})]);
    return { rows, total: counts.identities, totals: { identities: counts.identities, chains: counts.chainAccounts } };
  }
  return { list, portfolioPage };
}

export type IdentityService = ReturnType<typeof createIdentityService>;

export function createIdentityService(deps: ServiceDeps) {
  const db = deps.database.db;

  // The ledger charges short names a sliding registration fee far above the base (up to millions of credits),
  // paid by the gateway's sponsor: such names are refused. The schedule is the network's, read once a minute.
  let slidingFees: { at: number; fees: number[] } | undefined;
  async function refuseSlidingFee(name: string, log: Pick<Logger, 'warn'>) {
    if (!slidingFees || Date.now() - slidingFees.at > 60_000) {
      try {
        const raw = (await withTimeout(deps.ledger.networkStatus(), READ_TIMEOUT_MS, 'ledger')).raw?.globals?.feeSchedule?.createIdentitySliding;
        slidingFees = { at: Date.now(), fees: Array.isArray(raw) ? raw.map(Number) : [] };
      } catch (err) {
        // keep the last schedule read; without one, only a name longer than any default sliding entry can pass
        if (!slidingFees && Buffer.byteLength(name) <= 12) {
          throw new ApiError(503, 'SERVICE_UNAVAILABLE', "The ledger's name fees cannot be read; retry shortly", undefined, { 'Retry-After': '5' });
        }
        log.warn('ledger name fees unreadable; using the last schedule read', { err });
      }
    }
    const fee = slidingFees && slidingIdentityFee(name, slidingFees.fees);
    if (fee !== undefined) {
      const longest = slidingFees!.fees.findLastIndex((f) => f > BASE_IDENTITY_FEE_UNITS) + 1;
      throw bad(
        'name',
        `a name of ${Buffer.byteLength(name)} characters costs ${fee / 100} credits to register on this ledger (its sliding fee for names of up to ${longest} characters); choose a name of at least ${longest + 1} characters`,
      );
    }
  }

  /** How to wait for provisioning, from the recent provisioning times. */
  async function pollingHints(): Promise<PollingHints> {
    const recent = await recentProvisioningSeconds(db).catch(() => undefined);
    const estimate = Math.max(1, Math.ceil(recent?.p50 ?? 30));
    return {
      first_poll_after_seconds: Math.max(1, Math.floor(estimate / 2)),
      interval_seconds: Math.max(1, Math.ceil(estimate / 5)),
      estimated_ready_in_seconds: estimate,
      terminal_states: [...TERMINAL_STATUSES],
    };
  }

  /** Accept an identity for provisioning: the row (status creating), its workflow started. */
  async function create(
    caller: Caller,
    body: CreateIdentityRequest,
  ): Promise<{ identity: IdentityRow; warnings: string[]; polling: PollingHints; mnemonicRetrieval?: { url: string; expires_at: string } }> {
    const name = body.name;
    const nameProblem = adiNameProblem(name);
    if (nameProblem) throw bad('name', nameProblem);
    const id = randomUUID();
    const provider = body.signing_mode === 'provider' ? newIdentityKey(deps, id) : undefined;
    await refuseSlidingFee(name, caller.log);
    const { publicKey, publicKeyHash, chains, credits, warnings } = validateCreate(deps, body, provider?.publicKey);

    const urls = identityUrls(name, deps.config.adiSuffix);
    const res = await createIdentityWithinQuota(
      db,
      {
        id,
        orgId: caller.orgId,
        name,
        ...urls,
        publicKey,
        publicKeyHash,
        requestedChains: chains,
        requestedCredits: BigInt(credits),
        ...(provider ? { signingMode: 'provider' as const } : {}),
      },
      provider?.insert,
    );
    if (!res.ok) throw refusal(res, urls.adiUrl);

    await startIdentityWorkflowOrCompensate(deps.temporal, deps.config.temporal.taskQueue, res.identity, async (err) => {
      // nothing happened yet: undo the row (and the credit charge) so the request can simply be retried
      caller.log.error('identity workflow could not be started', { err, identity_id: id });
      await undoIdentityCreation(db, caller.orgId, id, BigInt(credits));
      throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'Provisioning could not be started; retry shortly', undefined, { 'Retry-After': '5' });
    });
    caller.log.info('identity accepted', { identity_id: id, workflow_id: identityWorkflowId(id), signing_mode: res.identity.signingMode });
    return { identity: res.identity, warnings, polling: await pollingHints(), ...(provider ? { mnemonicRetrieval: provider.retrieval } : {}) };
  }

  const withAccounts = (rows: IdentityRow[]) => accountsOf(deps, rows);

  /**
   * One identity with its accounts and, for an active or retired one (its key page exists), the credits read from the
   * ledger; when the ledger does not answer in time the recorded value stands (the view marks it stale).
   */
  async function read(orgId: string, id: string, log?: Pick<Logger, 'warn'>): Promise<IdentityWithAccounts> {
    const row = await findOrgIdentity(db, orgId, id, { field: 'id' });
    const live = row.status === 'active' || row.status === 'retired';
    const [[out], balance] = await Promise.all([
      withAccounts([row]),
      live
        ? liveCredits(deps, row).catch((err) => {
            log?.warn('key page credits unreadable; answering the recorded value', {
              identity_id: row.id,
              err: redactUrls(String(err), [deps.config.ledgerUrl]),
            });
            return undefined;
          })
        : undefined,
    ]);
    return balance === undefined ? out! : { ...out!, credit: { balance } };
  }

  /** Supply the public key of a hash-only identity; it must hash to the identity's public_key_hash. */
  async function repair(caller: Caller, id: string, publicKey: string): Promise<IdentityWithAccounts> {
    const row = await findOrgIdentity(db, caller.orgId, id, { field: 'id' });
    const problem = ed25519PublicKeyProblem(publicKey);
    if (problem) throw bad('public_key', problem);
    const pk = publicKey.toLowerCase();
    if (publicKeyHashHex(pk) !== row.publicKeyHash) {
      throw new ApiError(400, 'PUBLIC_KEY_HASH_MISMATCH', "public_key: its SHA-256 does not equal the identity's public_key_hash", { field: 'public_key' });
    }
    if (row.status === 'retired') throw new ApiError(409, 'IDENTITY_RETIRED', 'Identity is retired');
    if (row.publicKey && row.publicKey !== pk) throw new ApiError(409, 'PUBLIC_KEY_ALREADY_SET', 'Identity already has a different public key');
    const updated = row.publicKey ? row : ((await setIdentityPublicKey(db, caller.orgId, row.id, pk)) ?? row);
    caller.log.info('identity public key supplied', { identity_id: row.id });
    const [out] = await withAccounts([updated]);
    return out!;
  }

  /** Soft delete (idempotent): the quota slot is freed; the ledger and chain accounts stay. */
  async function retire(caller: Caller, id: string): Promise<IdentityWithAccounts> {
    const row = await findOrgIdentity(db, caller.orgId, id, { field: 'id' });
    const retired = (await retireIdentity(db, caller.orgId, row.id)) ?? row;
    caller.log.info('identity retired', { identity_id: row.id });
    const [out] = await withAccounts([retired]);
    return out!;
  }

  const liveBalances = createBalanceReader(deps);

  return { create, read, withAccounts, repair, retire, liveBalances, ...identityPages(deps) };
}
