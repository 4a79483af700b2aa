/**
 * API keys: `ck_live_` + 43 base62 characters (256 bits from the CSPRNG). Only the SHA-256 of the raw key is
 * stored; the raw key is returned once, at creation or rotation. Listings show the prefix only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { and, asc, count, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { createOrganization, type Organization } from './organizations.js';
import { apiKeys, organizations } from './schema.js';
import { ADVISORY_LOCKS } from './locks.js';
import { announceApiKeyChange, applyApiKeyChangeHere } from './api-key-changes.js';
import { newerThan, type RowPage } from './pagination.js';
import { preparedPerDb } from './prepared.js';

export const KEY_PREFIX = 'ck_live_';
const BODY_LENGTH = 43; // 43 × log2(62) ≈ 256 bits
/** What a well-formed key looks like; anything else is rejected before a database lookup. */
export const KEY_FORMAT = /^ck_live_[0-9A-Za-z]{43}$/;
/** characters of the raw key kept for listings: `ck_live_` + 8 */
export const LISTED_PREFIX_LENGTH = KEY_PREFIX.length + 8;

/**
 * The scopes a key can hold. `admin` manages the organization's keys; `webhook:write`, `webhook:read` and
 * `events:read` make keys for integrations that only manage webhook endpoints or read the event log
 * (src/api/middleware/scopes.ts). `operator` reads the gateway-wide /metrics: only the bootstrap key of the operator's
 * organization is made with it; self-service organizations never get it, and a key can only grant scopes it holds.
 */
export const SCOPES = ['read', 'write', 'proof:read', 'admin', 'webhook:write', 'webhook:read', 'events:read', 'operator', 'provider:manage'] as const;
export type Scope = (typeof SCOPES)[number];
export const DEFAULT_PERMISSIONS: Scope[] = ['read', 'write', 'proof:read'];
/** an organization's owner key also manages what the gateway signs for its provider-signing identities */
export const ADMIN_PERMISSIONS: Scope[] = ['read', 'write', 'proof:read', 'admin', 'provider:manage'];
/** the bootstrap key's: an admin key that also reads the gateway-wide /metrics */
export const OPERATOR_PERMISSIONS: Scope[] = [...ADMIN_PERMISSIONS, 'operator'];

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function generateRawKey(): string {
  let body = '';
  while (body.length < BODY_LENGTH) {
    for (const b of randomBytes(64)) {
      // 248 = 4 × 62: rejection sampling keeps every character uniform
      if (b < 248 && body.length < BODY_LENGTH) body += BASE62[b % 62];
    }
  }
  return KEY_PREFIX + body;
}

export function hashKey(raw: string): string {
  return createHash('sha256').update(raw, 'utf8').digest('hex');
}

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export interface NewApiKey {
  orgId: string;
  name: string;
  permissions?: string[];
  isAdmin?: boolean;
  rateLimitRpm?: number;
  expiresAt?: Date | null;
}

/** Insert a key; returns the row and the raw key (the only time it exists outside the caller's hands). */
export async function createApiKey(db: Db, k: NewApiKey): Promise<{ row: ApiKeyRow; rawKey: string }> {
  const rawKey = generateRawKey();
  const permissions = [...new Set(k.permissions ?? (k.isAdmin ? ADMIN_PERMISSIONS : DEFAULT_PERMISSIONS))];
  const [row] = await db
    .insert(apiKeys)
    .values({
      orgId: k.orgId,
      name: k.name,
      keyPrefix: rawKey.slice(0, LISTED_PREFIX_LENGTH),
      keyHash: hashKey(rawKey),
      permissions,
      isAdmin: k.isAdmin ?? permissions.includes('admin'),
      rateLimitRpm: k.rateLimitRpm,
      expiresAt: k.expiresAt ?? null,
    })
    .returning();
  return { row, rawKey };
}

/**
 * Create a key unless the organization already holds `maxActive` active keys (not revoked, not expired at `now`).
 * The organization's row is locked for the count and the insert, so concurrent creations cannot overshoot.
 */
export async function createApiKeyWithinLimit(
  db: Db,
  k: NewApiKey,
  maxActive: number,
  now: Date,
): Promise<{ created: { row: ApiKeyRow; rawKey: string } } | { limitReached: { limit: number; active: number } }> {
  return db.transaction(async (tx) => {
    await tx.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, k.orgId)).for('update');
    const [{ active }] = await tx
      .select({ active: count() })
      .from(apiKeys)
      .where(and(eq(apiKeys.orgId, k.orgId), isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now))));
    if (active >= maxActive) return { limitReached: { limit: maxActive, active } };
    return { created: await createApiKey(tx as unknown as Db, k) };
  });
}

const keyByHash = preparedPerDb((db) =>
  db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, sql.placeholder('hash')))
    .prepare('api_key_by_hash'),
);

export async function findApiKeyByRaw(db: Db, raw: string): Promise<ApiKeyRow | undefined> {
  const [row] = await keyByHash(db).execute({ hash: hashKey(raw) });
  return row;
}

/**
 * A page of the organization's keys, oldest first (`page.limit` rows from `page.offset` or after `page.after`), and
 * how many there are.
 */
export async function listApiKeys(db: Db, orgId: string, page: RowPage): Promise<{ rows: ApiKeyRow[]; total: number }> {
  const where = eq(apiKeys.orgId, orgId);
  const [rows, [counted]] = await Promise.all([
    db
      .select()
      .from(apiKeys)
      .where(page.after ? and(where, newerThan(apiKeys.createdAt, apiKeys.id, page.after)) : where)
      .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
      .limit(page.limit)
      .offset(page.offset ?? 0),
    db.select({ n: count() }).from(apiKeys).where(where),
  ]);
  return { rows, total: Number(counted?.n ?? 0) };
}

export async function getApiKey(db: Db, orgId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, orgId)));
  return row;
}

/**
 * Revoke a key of `orgId`. Final: there is no un-revoke. Returns false when the org has no such key;
 * revoking an already revoked key keeps its first revocation time. Announced to the key caches of every process
 * (./api-key-cache.ts). Rotation below is announced the same way.
 */
export async function revokeApiKey(db: Db, orgId: string, keyId: string, now = new Date()): Promise<boolean> {
  const revoked = await db.transaction(async (tx) => {
    const [row] = await tx
      .update(apiKeys)
      .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, ${now.toISOString()}::timestamptz)` })
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, orgId)))
      .returning({ id: apiKeys.id });
    if (row) await announceApiKeyChange(tx as unknown as Db, [row.id]);
    return row !== undefined;
  });
  if (revoked) applyApiKeyChangeHere(db, [keyId]);
  return revoked;
}

/**
 * Rotate: a new key with the old one's name, permissions, rate limit and expiry; the old key is revoked in the
 * same transaction. Undefined when the org has no such active key; `{ expired }` (nothing changed) when the key
 * has expired — its replacement would carry the same past expiry and be dead on arrival. `admit` sees the key about to
 * be rotated and may throw to refuse (the caller's bounds): the transaction is rolled back and nothing changes.
 */
export async function rotateApiKey(
  db: Db,
  orgId: string,
  keyId: string,
  now = new Date(),
  admit: (previous: ApiKeyRow) => void = () => {},
): Promise<{ previous: ApiKeyRow; row: ApiKeyRow; rawKey: string } | { expired: ApiKeyRow } | undefined> {
  const result = await db.transaction(async (tx) => {
    const [previous] = await tx
      .update(apiKeys)
      .set({ revokedAt: now })
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, orgId), isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now))))
      .returning();
    if (!previous) {
      const [row] = await tx
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, orgId), isNull(apiKeys.revokedAt)));
      return row?.expiresAt && row.expiresAt <= now ? { expired: row } : undefined;
    }
    admit(previous);
    await announceApiKeyChange(tx as unknown as Db, [previous.id]);
    const created = await createApiKey(tx as unknown as Db, {
      orgId,
      name: previous.name,
      permissions: previous.permissions,
      isAdmin: previous.isAdmin,
      rateLimitRpm: previous.rateLimitRpm,
      expiresAt: previous.expiresAt,
    });
    return { previous, ...created };
  });
  if (result && 'previous' in result) applyApiKeyChangeHere(db, [result.previous.id]);
  return result;
}

/** last_used_at is kept to the minute: a key used within the last minute is not written again. */
export const TOUCH_INTERVAL_MS = 60_000;

/** Record use, at most once a minute per key (one cheap conditional update). */
export async function touchApiKey(db: Db, keyId: string, now = new Date()): Promise<void> {
  const cutoff = new Date(now.getTime() - TOUCH_INTERVAL_MS);
  await db
    .update(apiKeys)
    .set({ lastUsedAt: now })
    .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, cutoff))));
}

/** A key as listings show it: never the raw key, never the hash. */
export function apiKeyView(k: ApiKeyRow, now = new Date()) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.keyPrefix,
    org_id: k.orgId,
    permissions: k.permissions,
    rate_limit_rpm: k.rateLimitRpm,
    is_active: k.revokedAt === null && (k.expiresAt === null || k.expiresAt > now),
    created_at: k.createdAt.toISOString(),
    expires_at: k.expiresAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
  };
}

/** The created key as returned once: the listing view plus the raw key. */
export function createdApiKeyView(k: ApiKeyRow, rawKey: string) {
  const { revoked_at: _r, last_used_at: _l, is_active: _a, ...rest } = apiKeyView(k);
  return { ...rest, key: rawKey };
}

/**
 * On an empty database (no organization yet), create the operator organization and its admin key (with the
 * `operator` scope) and return the
 * raw key; otherwise undefined. Serialised by a transaction-scoped advisory lock so two starting processes
 * cannot both create one.
 */
export async function bootstrapAdminKey(
  db: Db,
  opts: { orgName?: string; rateLimitRpm?: number } = {},
): Promise<{ org: Organization; keyId: string; rawKey: string } | undefined> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.bootstrapAdminKey})`);
    const [existing] = await tx.select({ id: organizations.id }).from(organizations).limit(1);
    if (existing) return undefined;
    const org = await createOrganization(tx as unknown as Db, { name: opts.orgName ?? 'operator' });
    const { row, rawKey } = await createApiKey(tx as unknown as Db, {
      orgId: org.id,
      name: 'bootstrap admin key',
      permissions: OPERATOR_PERMISSIONS,
      isAdmin: true,
      rateLimitRpm: opts.rateLimitRpm,
    });
    return { org, keyId: row.id, rawKey };
  });
}
