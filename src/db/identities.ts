/**
 * Queries over identities and their chain accounts. Every read the API makes is scoped to an organization;
 * the workflow's activities address rows by identity id only.
 */
import { and, asc, count, desc, eq, gt, inArray, isNotNull, lt, ne, notInArray, or, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { recordEvent } from './events.js';
import { chainAccountPayload, ledgerHashForm } from '../webhooks/stored-forms.js';
import { olderThan } from './pagination.js';
import { preparedPerDb } from './prepared.js';
import { chainAccounts, identities, mnemonicRetrievals, organizations, providerKeys } from './schema.js';

export type IdentityRow = typeof identities.$inferSelect;
export type ChainAccountRow = typeof chainAccounts.$inferSelect;

export const IDENTITY_STATUSES = ['creating', 'active', 'failed', 'retired'] as const;
export type IdentityStatus = (typeof IDENTITY_STATUSES)[number];
/** states after which the status no longer changes by itself (polling stops) */
export const TERMINAL_STATUSES: IdentityStatus[] = ['active', 'failed', 'retired'];

/** Provisioning steps in order; `stage` holds the current one (mirrored to the Stage search attribute). */
export const PROVISIONING_STAGES = [
  'queued',
  'creating_adi',
  'adding_credits',
  'creating_data_account',
  'creating_token_account',
  'setting_key',
  'deploying_accounts',
  'finalizing',
] as const;
export type ProvisioningStage = (typeof PROVISIONING_STAGES)[number] | 'done' | 'failed';

export interface NewIdentity {
  id: string;
  orgId: string;
  name: string;
  adiUrl: string;
  bookUrl: string;
  keyPageUrl: string;
  dataAccountUrl: string;
  publicKey: string | null;
  publicKeyHash: string;
  requestedChains: string[];
  requestedCredits: bigint;
  /** external (default) | provider */
  signingMode?: 'external' | 'provider';
}

export type CreateIdentityResult =
  | { ok: true; identity: IdentityRow }
  | { ok: false; reason: 'quota'; quota: number; used: number }
  | { ok: false; reason: 'credits'; requested: bigint; remaining: bigint }
  | { ok: false; reason: 'name_taken'; existingId: string }
  | { ok: false; reason: 'no_org' };

/**
 * Insert an identity if the organization's quota and credit grant allow it, atomically: the organization row is
 * locked for the duration, so concurrent requests of one organization can never exceed the quota. Every identity
 * that is not retired counts (creating, active, failed). The requested credits are charged to the grant.
 */
export async function createIdentityWithinQuota(
  db: Db,
  n: NewIdentity,
  /** rows that belong with the identity (a provider identity's key), written in the same transaction */
  alsoInsert?: (tx: Db) => Promise<void>,
): Promise<CreateIdentityResult> {
  return db.transaction(async (tx) => {
    const [org] = await tx.select().from(organizations).where(eq(organizations.id, n.orgId)).for('update');
    if (!org) return { ok: false, reason: 'no_org' } as const;
    const [{ used }] = await tx
      .select({ used: count() })
      .from(identities)
      .where(and(eq(identities.orgId, n.orgId), ne(identities.status, 'retired')));
    if (used >= org.identityQuota) return { ok: false, reason: 'quota', quota: org.identityQuota, used } as const;
    const remaining = org.creditGrant - org.creditsUsed;
    if (n.requestedCredits > remaining) {
      return { ok: false, reason: 'credits', requested: n.requestedCredits, remaining: remaining < 0n ? 0n : remaining } as const;
    }
    // a name is taken by a live identity, and by one retired while its provisioning still runs (until that ends
    // or, should it never report back, for RESERVE_RETIRED_MS): two workflows must never provision one ADI
    const [taken] = await tx
      .select({ id: identities.id })
      .from(identities)
      .where(
        and(
          eq(identities.adiUrl, n.adiUrl),
          or(
            ne(identities.status, 'retired'),
            and(notInArray(identities.stage, ['done', 'failed']), gt(identities.retiredAt, new Date(Date.now() - RESERVE_RETIRED_MS))),
          ),
        ),
      );
    if (taken) return { ok: false, reason: 'name_taken', existingId: taken.id } as const;
    let row: IdentityRow;
    try {
      [row] = await tx
        .insert(identities)
        .values({ ...n, status: 'creating', stage: 'queued' })
        .returning();
    } catch (e) {
      // another organization inserted the name since the check (the lock above is per organization)
      if (uniqueViolation(e) === 'identities_adi_url_live_uq') return { ok: false, reason: 'name_taken', existingId: '' } as const;
      throw e;
    }
    if (n.requestedCredits > 0n) {
      await tx
        .update(organizations)
        .set({ creditsUsed: sql`${organizations.creditsUsed} + ${n.requestedCredits.toString()}::bigint` })
        .where(eq(organizations.id, n.orgId));
    }
    await alsoInsert?.(tx as unknown as Db);
    return { ok: true, identity: row } as const;
  });
}

/** How long the name of an identity retired during provisioning stays reserved at most (normally until the workflow ends). */
export const RESERVE_RETIRED_MS = 2 * 60 * 60 * 1000;

/** The constraint a Postgres unique violation (23505) names, as thrown by the driver or wrapped by drizzle. */
function uniqueViolation(e: unknown): string | undefined {
  for (let x = e as { code?: string; constraint?: string; cause?: unknown } | undefined; x; x = x.cause as typeof x) {
    if (x.code === '23505') return String(x.constraint ?? '');
  }
  return undefined;
}

/**
 * Whether an earlier identity of the same organization, with the same key hash, created this identity's ADI (its
 * CreateIdentity is recorded): the organization takes back an ADI it retired.
 */
export async function createdEarlierBySameOrg(db: Db, identityId: string): Promise<boolean> {
  const me = await getIdentity(db, identityId);
  if (!me) return false;
  const [earlier] = await db
    .select({ id: identities.id })
    .from(identities)
    .where(
      and(
        eq(identities.orgId, me.orgId),
        eq(identities.adiUrl, me.adiUrl),
        eq(identities.publicKeyHash, me.publicKeyHash),
        ne(identities.id, me.id),
        sql`${identities.ledgerTxs} ? 'adi'`,
      ),
    )
    .limit(1);
  return earlier !== undefined;
}

export async function getIdentity(db: Db, id: string): Promise<IdentityRow | undefined> {
  const [row] = await db.select().from(identities).where(eq(identities.id, id));
  return row;
}

/** An identity of `orgId` by id or ADI URL; another organization's identity is invisible (undefined). */
// by id: what every prepare and identity read asks first
const orgIdentityById = preparedPerDb((db) =>
  db
    .select()
    .from(identities)
    .where(and(eq(identities.orgId, sql.placeholder('orgId')), eq(identities.id, sql.placeholder('id'))))
    .prepare('org_identity_by_id'),
);

export async function getOrgIdentity(db: Db, orgId: string, idOrAdiUrl: string): Promise<IdentityRow | undefined> {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrAdiUrl)) {
    const [row] = await orgIdentityById(db).execute({ orgId, id: idOrAdiUrl });
    return row;
  }
  const adiUrl = idOrAdiUrl.trim().toLowerCase().replace(/\/+$/, '');
  // an ADI URL may name a retired identity and a live one; prefer the live one
  const rows = await db
    .select()
    .from(identities)
    .where(and(eq(identities.orgId, orgId), eq(sql`lower(${identities.adiUrl})`, adiUrl)))
    .orderBy(desc(identities.createdAt));
  return rows.find((r) => r.status !== 'retired') ?? rows[0];
}

const ORDER_ACCOUNTS = [asc(chainAccounts.createdAt), asc(chainAccounts.chain)];

/** Where an identity's contract account is on one chain: what building an intent's legs needs of it. */
export interface ChainAccountRef {
  chain: string;
  address: string;
}

// by id with its chain accounts (as [chain, address] pairs in ORDER_ACCOUNTS' order), in one round trip: what every
// intent's prepare asks
const orgIdentityWithAccountsById = preparedPerDb((db) =>
  db
    .select({
      identity: identities,
      // qualified by hand: in a one-table select drizzle writes its columns unqualified, and a bare "id" in the
      // subquery would be the account's own
      accounts: sql<[string, string][]>`(select coalesce(json_agg(json_build_array(a.chain, a.address) order by a.created_at, a.chain), '[]'::json)
        from ${chainAccounts} a where a.identity_id = ${identities}.id)`,
    })
    .from(identities)
    .where(and(eq(identities.orgId, sql.placeholder('orgId')), eq(identities.id, sql.placeholder('id'))))
    .prepare('org_identity_with_accounts_by_id'),
);

/** An identity of `orgId` by id (a UUID) with its chain accounts; another organization's is invisible (undefined). */
export async function getOrgIdentityWithAccounts(
  db: Db,
  orgId: string,
  id: string,
): Promise<{ identity: IdentityRow; accounts: ChainAccountRef[] } | undefined> {
  const [row] = await orgIdentityWithAccountsById(db).execute({ orgId, id });
  return row && { identity: row.identity, accounts: row.accounts.map(([chain, address]) => ({ chain, address })) };
}

// one identity's accounts: what every prepare asks
const accountsOfIdentity = preparedPerDb((db) =>
  db
    .select()
    .from(chainAccounts)
    .where(eq(chainAccounts.identityId, sql.placeholder('identityId')))
    .orderBy(...ORDER_ACCOUNTS)
    .prepare('chain_accounts_of_identity'),
);

export async function getChainAccounts(db: Db, identityIds: string[]): Promise<Map<string, ChainAccountRow[]>> {
  const out = new Map<string, ChainAccountRow[]>();
  if (identityIds.length === 0) return out;
  const rows =
    identityIds.length === 1
      ? await accountsOfIdentity(db).execute({ identityId: identityIds[0]! })
      : await db
          .select()
          .from(chainAccounts)
          .where(inArray(chainAccounts.identityId, identityIds))
          .orderBy(...ORDER_ACCOUNTS);
  for (const r of rows) {
    const list = out.get(r.identityId) ?? [];
    list.push(r);
    out.set(r.identityId, list);
  }
  return out;
}

export interface ListOptions {
  status?: IdentityStatus;
  /** opaque cursor from the previous page */
  cursor?: { createdAt: Date; id: string };
  limit: number;
  /** include retired identities (only when status is not given) */
  includeRetired?: boolean;
}

/** Newest first, keyset-paginated on (created_at, id). Returns one row more than `limit` when there is a next page. */
export async function listOrgIdentities(db: Db, orgId: string, o: ListOptions): Promise<IdentityRow[]> {
  const conds = [eq(identities.orgId, orgId)];
  if (o.status) conds.push(eq(identities.status, o.status));
  else if (!o.includeRetired) conds.push(ne(identities.status, 'retired'));
  if (o.cursor) {
    conds.push(olderThan(identities.createdAt, identities.id, o.cursor));
  }
  return db
    .select()
    .from(identities)
    .where(and(...conds))
    .orderBy(desc(identities.createdAt), desc(identities.id))
    .limit(o.limit + 1);
}

export async function setIdentityStage(db: Db, id: string, stage: ProvisioningStage): Promise<void> {
  await db
    .update(identities)
    .set({ stage, updatedAt: new Date() })
    .where(and(eq(identities.id, id), eq(identities.status, 'creating')));
}

/**
 * creating -> active (a retired identity stays retired; its accounts are still recorded). The transition and its
 * `identity.active` event are written in one transaction, so the event exists exactly when the state does.
 */
export async function markIdentityActive(db: Db, id: string, creditBalance: bigint): Promise<IdentityRow | undefined> {
  const now = new Date();
  const moved = await db.transaction(async (tx) => {
    const [row] = await tx
      .update(identities)
      .set({ status: 'active', stage: 'done', creditBalance, provisionedAt: now, updatedAt: now, errorMessage: null })
      .where(and(eq(identities.id, id), eq(identities.status, 'creating')))
      .returning();
    if (!row) return undefined;
    const accounts = await tx.select().from(chainAccounts).where(eq(chainAccounts.identityId, id)).orderBy(asc(chainAccounts.chain));
    await recordEvent(tx, {
      orgId: row.orgId,
      type: 'identity.active',
      resourceId: row.id,
      data: {
        identity_id: row.id,
        name: row.name,
        adi_url: row.adiUrl,
        book_url: row.bookUrl,
        key_page_url: row.keyPageUrl,
        data_account_url: row.dataAccountUrl,
        public_key_hash: ledgerHashForm(row.publicKeyHash),
        credit_balance: Number(creditBalance),
        chain_accounts: accounts.map((a) => chainAccountPayload({ chain: a.chain, evmChainId: a.chainId, address: a.address, deploymentTx: a.deploymentTx })),
      },
    });
    return row;
  });
  if (moved) return moved;
  await db.update(identities).set({ creditBalance, stage: 'done', provisionedAt: now, updatedAt: now }).where(eq(identities.id, id));
  return getIdentity(db, id);
}

/**
 * creating -> failed with the reason, and its `identity.failed` event, in one transaction. An identity retired
 * while provisioning stays retired; its stage becomes `failed`, which frees its name. Credits charged to the
 * organization's grant are given back when this identity never submitted its AddCredits: the step's record is
 * written before submission and kept once delivered, so its absence means the ledger never received it.
 */
export async function markIdentityFailed(db: Db, id: string, message: string): Promise<void> {
  await db.transaction(async (tx) => {
    const [before] = await tx.select().from(identities).where(eq(identities.id, id)).for('update');
    if (!before) return;
    const creating = before.status === 'creating';
    if (!creating && !(before.status === 'retired' && before.stage !== 'done' && before.stage !== 'failed')) return;
    const [row] = await tx
      .update(identities)
      .set({ ...(creating ? { status: 'failed' } : {}), stage: 'failed', errorMessage: message.slice(0, 2000), updatedAt: new Date() })
      .where(eq(identities.id, id))
      .returning();
    if (!before.ledgerTxs.credits && row!.requestedCredits > 0n) {
      await tx
        .update(organizations)
        .set({ creditsUsed: sql`greatest(${organizations.creditsUsed} - ${row!.requestedCredits.toString()}::bigint, 0)` })
        .where(eq(organizations.id, row!.orgId));
    }
    if (!creating) return;
    await recordEvent(tx, {
      orgId: row!.orgId,
      type: 'identity.failed',
      resourceId: row!.id,
      data: { identity_id: row!.id, name: row!.name, stage: before.stage ?? 'unknown', error: row!.errorMessage ?? message },
    });
  });
}

/**
 * Undo a row just written by createIdentityWithinQuota whose workflow did not start: the row goes, and the credits
 * it charged to the organization's grant come back, so the request can simply be retried.
 */
export async function undoIdentityCreation(db: Db, orgId: string, id: string, credits: bigint): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.delete(mnemonicRetrievals).where(eq(mnemonicRetrievals.identityId, id));
    await tx.delete(providerKeys).where(eq(providerKeys.identityId, id));
    await tx.delete(identities).where(eq(identities.id, id));
    if (credits > 0n) {
      await tx
        .update(organizations)
        .set({ creditsUsed: sql`greatest(${organizations.creditsUsed} - ${String(credits)}::bigint, 0)` })
        .where(eq(organizations.id, orgId));
    }
  });
}

/** Soft delete: any status -> retired; idempotent (an already-retired identity is returned unchanged). */
export async function retireIdentity(db: Db, orgId: string, id: string): Promise<IdentityRow | undefined> {
  const now = new Date();
  const [row] = await db
    .update(identities)
    .set({ status: 'retired', retiredAt: now, updatedAt: now })
    .where(and(eq(identities.orgId, orgId), eq(identities.id, id), ne(identities.status, 'retired')))
    .returning();
  if (row) return row;
  const [existing] = await db
    .select()
    .from(identities)
    .where(and(eq(identities.orgId, orgId), eq(identities.id, id)));
  return existing;
}

/** Store the public key of a hash-only identity (the caller has checked that it hashes to public_key_hash). */
export async function setIdentityPublicKey(db: Db, orgId: string, id: string, publicKey: string): Promise<IdentityRow | undefined> {
  const [row] = await db
    .update(identities)
    .set({ publicKey, updatedAt: new Date() })
    .where(and(eq(identities.orgId, orgId), eq(identities.id, id)))
    .returning();
  return row;
}

export async function setIdentityCreditBalance(db: Db, id: string, creditBalance: bigint): Promise<void> {
  await db.update(identities).set({ creditBalance }).where(eq(identities.id, id));
}

/** Record a chain account once its deployment is confirmed (or found already deployed). Idempotent. */
export async function upsertChainAccount(
  db: Db,
  a: { identityId: string; chain: string; chainId: bigint; address: string; deploymentTx: string | null },
): Promise<ChainAccountRow> {
  const [row] = await db
    .insert(chainAccounts)
    .values(a)
    .onConflictDoUpdate({
      target: [chainAccounts.identityId, chainAccounts.chain],
      set: { address: a.address, chainId: a.chainId, deploymentTx: sql`coalesce(${chainAccounts.deploymentTx}, excluded.deployment_tx)` },
    })
    .returning();
  return row;
}

/** The ledger transaction recorded for a provisioning step, if any. */
export async function getLedgerTxRecord(db: Db, id: string, step: string) {
  const row = await getIdentity(db, id);
  return row?.ledgerTxs?.[step];
}

export async function putLedgerTxRecord(db: Db, id: string, step: string, rec: { txId: string; envelope: unknown; submittedAt: string }): Promise<void> {
  await db
    .update(identities)
    .set({ ledgerTxs: sql`${identities.ledgerTxs} || ${JSON.stringify({ [step]: rec })}::jsonb` })
    .where(eq(identities.id, id));
}

export async function clearLedgerTxRecord(db: Db, id: string, step: string): Promise<void> {
  await db
    .update(identities)
    .set({ ledgerTxs: sql`${identities.ledgerTxs} - ${step}::text` })
    .where(eq(identities.id, id));
}

/** Median and 95th percentile of recent provisioning durations in seconds (for polling hints); undefined without data. */
export async function recentProvisioningSeconds(db: Db, sample = 50): Promise<{ p50: number; p95: number } | undefined> {
  const rows = await db
    .select({ createdAt: identities.createdAt, provisionedAt: identities.provisionedAt })
    .from(identities)
    .where(isNotNull(identities.provisionedAt))
    .orderBy(desc(identities.provisionedAt))
    .limit(sample);
  const secs = rows
    .map((r) => (r.provisionedAt!.getTime() - r.createdAt.getTime()) / 1000)
    .filter((s) => s >= 0)
    .sort((a, b) => a - b);
  if (secs.length === 0) return undefined;
  const q = (p: number) => secs[Math.min(secs.length - 1, Math.floor(p * secs.length))]!;
  return { p50: q(0.5), p95: q(0.95) };
}

/** Rows still `creating` that were written before `createdBefore`, oldest first. */
export async function listCreatingBefore(db: Db, createdBefore: Date, limit: number): Promise<IdentityRow[]> {
  return db
    .select()
    .from(identities)
    .where(and(eq(identities.status, 'creating'), lt(identities.createdAt, createdBefore)))
    .orderBy(asc(identities.createdAt))
    .limit(limit);
}

/** The organizations with at least one active identity, sorted. */
export async function orgsWithActiveIdentities(db: Db): Promise<string[]> {
  const rows = await db.selectDistinct({ orgId: identities.orgId }).from(identities).where(eq(identities.status, 'active'));
  return rows.map((r) => r.orgId).sort();
}

/** An organization's active identities. */
export async function listActiveOrgIdentities(db: Db, orgId: string): Promise<IdentityRow[]> {
  return db
    .select()
    .from(identities)
    .where(and(eq(identities.orgId, orgId), eq(identities.status, 'active')));
}

/** How many identity rows the database holds, in every status and organization. */
export async function countIdentities(db: Db): Promise<number> {
  const [{ n }] = await db.select({ n: count() }).from(identities);
  return n;
}
