/** Test helpers for the API platform: organizations + keys, and an app on a test database. */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { createApp } from '../../src/api/app.js';
import type { AppDeps } from '../../src/api/deps.js';
import type { HttpMetrics } from '../../src/api/middleware/metrics.js';
import { createApiKey } from '../../src/db/api-keys.js';
import type { Db } from '../../src/db/client.js';
import { createIdentityWithinQuota } from '../../src/db/identities.js';
import { createOrganization } from '../../src/db/organizations.js';
import { identities, intents } from '../../src/db/schema.js';
import { identityUrls } from '../../src/identity/keys.js';
import type { Logger } from '../../src/log.js';
import { apiLedgerClient } from '../../src/services/deps.js';
import { openTestDatabase, quietLogger, testConfig, testTemporalClient, type DbKind } from './env.js';

export interface TestKey {
  orgId: string;
  keyId: string;
  /** the raw key, for the X-API-Key header */
  key: string;
}

/**
 * Create an organization (unless `orgId` is given) and an API key in it. Defaults: permissions read, write,
 * proof:read (admin keys: also admin), 60 requests per minute, no expiry.
 */
export async function createTestOrgAndKey(
  db: Db,
  opts: {
    orgId?: string;
    orgName?: string;
    name?: string;
    permissions?: string[];
    isAdmin?: boolean;
    rateLimitRpm?: number;
    expiresAt?: Date | null;
  } = {},
): Promise<TestKey> {
  const orgId = opts.orgId ?? (await createOrganization(db, { name: opts.orgName ?? 'test org' })).id;
  const { row, rawKey } = await createApiKey(db, {
    orgId,
    name: opts.name ?? 'test key',
    permissions: opts.permissions,
    isAdmin: opts.isAdmin,
    rateLimitRpm: opts.rateLimitRpm,
    expiresAt: opts.expiresAt,
  });
  return { orgId, keyId: row.id, key: rawKey };
}

/**
 * An identity row written straight to the database for `orgId` (no workflow, no ledger): ADI `<label>-<8 hex>`,
 * only a public key hash, status `creating` as inserted; its id and ledger URLs. For tests of routes that read
 * identities.
 */
export async function insertTestIdentity(db: Db, orgId: string, label: string, adiSuffix: string): Promise<{ id: string } & ReturnType<typeof identityUrls>> {
  const id = randomUUID();
  const urls = identityUrls(`${label}-${id.slice(0, 8)}`, adiSuffix);
  const res = await createIdentityWithinQuota(db, {
    id,
    orgId,
    name: urls.adiUrl.slice(6, -5),
    ...urls,
    publicKey: null,
    publicKeyHash: '11'.repeat(32),
    requestedChains: [],
    requestedCredits: 0n,
  });
  if (!res.ok) throw new Error(`test identity ${urls.adiUrl} not inserted: ${JSON.stringify(res)}`);
  return { id, ...urls };
}

/**
 * An active identity and one intent of it written straight to the database (no workflow, no ledger): the intent
 * `status` given, with `document` as its stored intent (default: no parts, no legs). For tests of what reads and
 * writes intent rows.
 */
export async function insertTestIntent(
  db: Db,
  orgId: string,
  opts: { status: string; chains: string[]; document?: Record<string, unknown> },
): Promise<{ identityId: string; intentId: string }> {
  const [identity] = await db
    .insert(identities)
    .values({
      orgId,
      name: 'a',
      adiUrl: `acc://a-${randomUUID().slice(0, 8)}.acme`,
      bookUrl: 'acc://a.acme/book',
      keyPageUrl: 'acc://a.acme/book/1',
      dataAccountUrl: 'acc://a.acme/data',
      publicKeyHash: 'ab'.repeat(32),
      status: 'active',
      stage: 'completed',
      requestedChains: opts.chains,
    })
    .returning();
  const [intent] = await db
    .insert(intents)
    .values({
      orgId,
      identityId: identity!.id,
      status: opts.status,
      intent: opts.document ?? { parts: [] },
      operationId: 'op',
      signingData: { request_id: 'r', transaction_hash: 'cd'.repeat(32), hash_to_sign: 'ef'.repeat(32) },
      prepared: {} as never,
      signerPublicKey: '12'.repeat(32),
      signerKeyPage: 'acc://a.acme/book/1',
      expiresAt: new Date(Date.now() + 3_600_000),
    })
    .returning();
  return { identityId: identity!.id, intentId: intent!.id };
}

export type TestApp = Awaited<ReturnType<typeof startTestApp>>;

/**
 * The real app on a fresh database of `kind`, with a settable clock (`clock.ms`, starts at the real time).
 * `env` overrides config variables; `close()` releases everything.
 */
export async function startTestApp(
  kind: DbKind,
  opts: { env?: Record<string, string>; logger?: Logger; metrics?: HttpMetrics; clockMs?: number; postgresServerUrl?: string } = {},
) {
  const config = testConfig(opts.env);
  const database = await openTestDatabase(kind, opts.postgresServerUrl);
  const temporal: Client = await testTemporalClient(config);
  const clock = { ms: opts.clockMs ?? Date.now() };
  const deps: AppDeps = { config, database, temporal, ledger: apiLedgerClient(config), logger: opts.logger ?? quietLogger, now: () => clock.ms };
  const app = createApp(deps, { metrics: opts.metrics });
  const call = (path: string, init: RequestInit & { key?: string } = {}) => {
    const headers = new Headers(init.headers);
    if (init.key) headers.set('X-API-Key', init.key);
    if (init.body && !headers.has('content-type')) headers.set('content-type', 'application/json');
    return app.request(path, { ...init, headers });
  };
  return {
    app,
    deps,
    config,
    database,
    db: database.db,
    clock,
    call,
    async close() {
      await temporal.connection.close();
      await database.cleanup();
    },
  };
}
