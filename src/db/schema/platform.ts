/** Organizations, their API keys, idempotency records and rate-limit counters. */
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';

export const organizations = pgTable(
  'organizations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    /** how many identities may exist at once (retired ones do not count) */
    identityQuota: integer('identity_quota').notNull().default(10),
    /** ledger credits granted to the organization's identities in total (sandbox grant) */
    creditGrant: bigint('credit_grant', { mode: 'bigint' }).notNull().default(sql`10000`),
    creditsUsed: bigint('credits_used', { mode: 'bigint' }).notNull().default(sql`0`),
    /** created by self-service sign-up (POST /portal/signup); these count against SIGNUP_MAX_PER_HOUR */
    selfService: boolean('self_service').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [index('organizations_self_service_created_idx').on(t.createdAt).where(sql`${t.selfService}`)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    /** the first characters of the raw key, for listings ("ck_live_AbCd") */
    keyPrefix: text('key_prefix').notNull(),
    /** hex SHA-256 of the raw key; the raw key itself is never stored */
    keyHash: text('key_hash').notNull(),
    permissions: jsonb('permissions').$type<string[]>().notNull(),
    isAdmin: boolean('is_admin').notNull().default(false),
    rateLimitRpm: integer('rate_limit_rpm').notNull().default(60),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('api_keys_key_hash_uq').on(t.keyHash), index('api_keys_org_idx').on(t.orgId)],
);

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    orgId: uuid('org_id').notNull(),
    key: text('key').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    requestHash: text('request_hash').notNull(),
    /** in_progress | completed */
    state: text('state').notNull(),
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body'),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.key] }), index('idempotency_keys_expires_idx').on(t.expiresAt)],
);

/** Fixed-window request counters shared by every API process (atomic upsert per request). */
export const rateLimitCounters = pgTable(
  'rate_limit_counters',
  {
    bucket: text('bucket').notNull(),
    windowStart: timestamp('window_start', { withTimezone: true, mode: 'date' }).notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.windowStart] }), index('rate_limit_window_idx').on(t.windowStart)],
);
