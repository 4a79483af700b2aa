/**
 * Security checks driven by the OpenAPI document, so a new route is covered the day it is added:
 *   - cross-organization access: every operation with an id in its path, called with org B's key on a real resource
 *     of org A, answers 404 (never 200 or 403) and leaves A's resource as it was;
 *   - scope enforcement: every operation's documented scopes (`x-required-scopes`) are enforced: a key holding all
 *     scopes but one required gets 403 INSUFFICIENT_SCOPE naming it; a key holding them gets past the check;
 *   - revocation: a key revoked through the API gets 403 API_KEY_DEACTIVATED on its very next request, on every
 *     secured operation.
 * Webhook URLs to private addresses: test/integration/webhooks.test.ts ("webhook URLs outside the devnet") and
 * test/security/webhook-urls.test.ts. API key lifecycle texts (the 401/403 answers): test/integration/platform-auth.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/db/events.js';
import { governanceOps, identities, intents, proofs, signRequests, webhookDeliveries } from '../../src/db/schema.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';
import { newKekEntry } from '../../src/identity/provider-keys.js';
import { newIdentityKey } from '../../src/services/provider.js';

/** One-shot reads: another organization's call must not spend them; the owner's first read is 200, the next 404. */
const ONE_SHOT = new Set(['GET /v1/identity/{id}/mnemonic/{token}']);

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Operation {
  method: string;
  path: string;
  /** all of these (x-required-scopes) */
  scopes: string[];
  /** any one of these (x-accepted-scopes) */
  anyOf: string[];
  secured: boolean;
  bodyRequired: boolean;
}

/** Every operation of the served document. */
async function operations(t: TestApp): Promise<Operation[]> {
  const doc = (await (await t.call('/docs/json')).json()) as Json;
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      ops.push({
        method: method.toUpperCase(),
        path,
        scopes: op['x-required-scopes'] ?? [],
        anyOf: op['x-accepted-scopes'] ?? [],
        secured: (op.security ?? doc.security ?? []).some((s: Json) => 'ApiKeyAuth' in s),
        bodyRequired: !!op.requestBody?.required,
      });
    }
  }
  return ops;
}

/** Operations with an id in the path whose resource is not the organization's by design. */
const NOT_ORG_SCOPED: Record<string, string> = {
  'GET /v1/chains/{id}': 'chains are the gateway configuration, the same for every organization',
  'GET /v1/proof/tx/{tx_hash}/receipt': "the ledger's public inclusion receipt of any delivered transaction, read from the ledger network",
  'GET /reference/assets/{file}': "the reference page's scripts, public and the same for everyone",
  'GET /console/assets/{file}': "the console's script and stylesheet, public and the same for everyone",
};

const PUBLIC_KEY = bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey())).slice(2);

/** Valid bodies for the operations that require one, so that B's request reaches the ownership check. */
const BODIES: Record<string, unknown> = {
  'PATCH /v1/identity/{id}': { public_key: PUBLIC_KEY },
  'POST /v1/transaction/{intent_id}/signature': { signature: 'ab'.repeat(64), public_key: PUBLIC_KEY },
  'PATCH /v1/webhooks/endpoints/{id}': { description: 'changed by B' },
  'POST /v1/governance/{id}/signature': { signature: 'ab'.repeat(64), public_key: PUBLIC_KEY },
  'POST /v1/sign/{id}/signature': { signature: 'ab'.repeat(64), public_key: PUBLIC_KEY },
  'POST /v1/identity/{id}/credits': { credits: 1 },
};

describe('security: organizations, scopes, revocation (from the OpenAPI document)', () => {
  let t: TestApp;
  let ops: Operation[];
  let a: TestKey;
  let b: TestKey;
  /** org A's resources, by path parameter owner */
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp('pglite', { env: { PROVIDER_KEKS: newKekEntry('access') } });
    ops = await operations(t);
    a = await createTestOrgAndKey(t.db, { orgName: 'A', isAdmin: true, rateLimitRpm: 1_000_000 });
    b = await createTestOrgAndKey(t.db, { orgName: 'B', isAdmin: true, rateLimitRpm: 1_000_000 });
    const db = t.db;

    ids.key = (await createTestOrgAndKey(db, { orgId: a.orgId, name: 'A spare' })).keyId;
    const [identity] = await db
      .insert(identities)
      .values({
        orgId: a.orgId,
        name: 'alpha',
        adiUrl: `acc://alpha-${randomUUID().slice(0, 8)}.acme`,
        bookUrl: 'acc://alpha.acme/book',
        keyPageUrl: 'acc://alpha.acme/book/1',
        dataAccountUrl: 'acc://alpha.acme/data',
        publicKeyHash: 'ab'.repeat(32),
        status: 'active',
        stage: 'completed',
        requestedChains: ['ethereum-sepolia'],
      })
      .returning();
    ids.identity = identity.id;
    const held = newIdentityKey(t.deps, identity.id);
    await held.insert(db);
    ids.mnemonicUrl = held.retrieval.url;
    const txHash = 'cd'.repeat(32);
    const [intent] = await db
      .insert(intents)
      .values({
        orgId: a.orgId,
        identityId: identity.id,
        status: 'completed',
        stage: 'completed',
        intent: { parts: [] },
        operationId: 'op-a',
        signingData: { request_id: 'r', transaction_hash: txHash, hash_to_sign: 'ef'.repeat(32) },
        prepared: {} as never,
        signerPublicKey: PUBLIC_KEY,
        signerKeyPage: 'acc://alpha.acme/book/1',
        txHash,
        expiresAt: new Date(Date.now() + 3_600_000),
      })
      .returning();
    ids.intent = intent.id;
    ids.txHash = txHash;
    const bundle = {
      intent: { operation_id: 'op-a' },
      ledger: {
        tx_id: `acc://${txHash}@alpha.acme/data`,
        tx_hash: txHash,
        authority: { key_page: 'acc://alpha.acme/book/1', key_page_version: 1, threshold: 1, signatures: [] },
      },
      chains: [],
    };
    const [proof] = await db
      .insert(proofs)
      .values({ orgId: a.orgId, intentId: intent.id, bundle: JSON.stringify(bundle), bundleHash: 'aa'.repeat(32), custody: [] })
      .returning();
    ids.proof = proof.id;
    await db.update(intents).set({ proofId: proof.id });

    const ep = await t.call('/v1/webhooks/endpoints', {
      method: 'POST',
      key: a.key,
      body: JSON.stringify({ url: 'http://127.0.0.1:9/a', skip_verification: true }),
    });
    expect(ep.status).toBe(201);
    ids.endpoint = (await ep.json()).id;
    const event = await db.transaction((tx) =>
      recordEvent(tx, {
        orgId: a.orgId,
        type: 'identity.active',
        resourceId: identity.id,
        data: {
          identity_id: identity.id,
          name: identity.name,
          adi_url: identity.adiUrl,
          book_url: identity.bookUrl,
          key_page_url: identity.keyPageUrl,
          data_account_url: identity.dataAccountUrl,
          public_key_hash: identity.publicKeyHash,
          credit_balance: 0,
          chain_accounts: [],
        },
      }),
    );
    ids.event = event.id;
    const [delivery] = await db
      .insert(webhookDeliveries)
      .values({
        orgId: a.orgId,
        eventId: event.id,
        endpointId: ids.endpoint,
        eventType: event.type,
        status: 'succeeded',
        attempts: 1,
        workflowStartedAt: new Date(),
      })
      .returning();
    ids.delivery = delivery.id;
    const gov = {
      principal: 'acc://alpha.acme/book/1',
      signerUrl: 'acc://alpha.acme/book/1',
      txHash: 'ee'.repeat(32),
      txId: `acc://${'ee'.repeat(32)}@alpha.acme/book/1`,
      prepared: {},
    };
    const [op] = await db
      .insert(governanceOps)
      .values({ orgId: a.orgId, identityId: identity.id, kind: 'key_page', operations: [{ type: 'add_key' }], keyPageVersion: 1, ...gov })
      .returning();
    ids.governance = op.id;
    const [sr] = await db
      .insert(signRequests)
      .values({ orgId: a.orgId, identityId: identity.id, publicKey: PUBLIC_KEY, vote: 'accept', ...gov })
      .returning();
    ids.signRequest = sr.id;
  });
  afterAll(async () => t?.close());

  /** Org A's resource for a path: the concrete path, or undefined when the path names none of A's resources. */
  function concrete(path: string): string | undefined {
    if (path === '/v1/identity/{id}/mnemonic/{token}') return ids.mnemonicUrl;
    const owner: [RegExp, string][] = [
      [/^\/v1\/admin\/api-keys\/\{key_id\}/, ids.key],
      [/^\/v1\/identity\/\{id\}/, ids.identity],
      [/^\/v1\/transaction\/\{intent_id\}/, ids.intent],
      [/^\/v1\/proof\/tx\/\{tx_hash\}/, ids.txHash],
      [/^\/v1\/proof\/\{id\}/, ids.proof],
      [/^\/v1\/webhooks\/endpoints\/\{id\}/, ids.endpoint],
      [/^\/v1\/webhooks\/deliveries\/\{id\}/, ids.delivery],
      [/^\/v1\/events\/\{id\}/, ids.event],
      [/^\/v1\/governance\/\{id\}/, ids.governance],
      [/^\/v1\/sign\/\{id\}/, ids.signRequest],
    ];
    const hit = owner.find(([re]) => re.test(path));
    return hit && path.replace(/\{[^}]+\}/, hit[1]);
  }
  const send = (op: Operation, path: string, key: string) =>
    t.call(path, {
      method: op.method,
      key,
      body: op.bodyRequired || BODIES[`${op.method} ${op.path}`] ? JSON.stringify(BODIES[`${op.method} ${op.path}`] ?? {}) : undefined,
    });

  it("another organization's ids are 404 on every operation that takes one, and A's resources stay as they were", async () => {
    const withId = ops.filter((o) => o.path.includes('{') && !(`${o.method} ${o.path}` in NOT_ORG_SCOPED));
    expect(withId.length).toBeGreaterThanOrEqual(18);
    const reads = withId.filter((o) => o.method === 'GET' && !ONE_SHOT.has(`${o.method} ${o.path}`));
    const before = new Map<string, string>();
    for (const op of reads) {
      const path = concrete(op.path);
      expect(path, `no resource of org A for ${op.path}: add one to this test`).toBeDefined();
      const res = await send(op, path!, a.key);
      expect(res.status, `${op.method} ${op.path} with the owner's key`).toBe(200);
      before.set(op.path, await res.text());
    }
    for (const op of withId) {
      const path = concrete(op.path);
      expect(path, `no resource of org A for ${op.path}: add one to this test`).toBeDefined();
      const res = await send(op, path!, b.key);
      const body = await res.json();
      expect(res.status, `${op.method} ${op.path} with another organization's key: ${JSON.stringify(body)}`).toBe(404);
      expect(body.code, `${op.method} ${op.path}`).toMatch(/NOT_FOUND$/);
    }
    for (const op of reads) {
      if (op.path.endsWith('/bundle') || op.path.endsWith('/custody')) continue; // the owner's own downloads add custody events
      const res = await send(op, concrete(op.path)!, a.key);
      expect(res.status).toBe(200);
      expect(await res.text(), `${op.path} changed by B's calls`).toBe(before.get(op.path));
    }
    // a one-shot read is still there for its owner after B's calls, once
    for (const op of withId.filter((o) => ONE_SHOT.has(`${o.method} ${o.path}`))) {
      expect((await send(op, concrete(op.path)!, a.key)).status, `${op.path} spent by B's call`).toBe(200);
      expect((await send(op, concrete(op.path)!, a.key)).status).toBe(404);
    }
    // A's spare key was neither revoked nor rotated by B
    const keys = (await (await t.call('/v1/admin/api-keys', { key: a.key })).json()).api_keys as Json[];
    expect(keys.find((k) => k.id === ids.key)).toMatchObject({ is_active: true });
  });

  it("lists are organization-scoped: B sees none of A's resources", async () => {
    const lists = ops.filter((o) => o.method === 'GET' && o.secured && !o.path.includes('{'));
    expect(lists.length).toBeGreaterThanOrEqual(6);
    for (const op of lists) {
      const res = await t.call(op.path, { key: b.key });
      const text = await res.text();
      for (const [what, id] of Object.entries(ids)) {
        if (what === 'txHash') continue;
        expect(text.includes(id), `${op.path} shows A's ${what} to B`).toBe(false);
      }
    }
  });

  it('every documented scope is enforced: a key lacking one gets 403 naming it; a key holding them gets past the check', async () => {
    const secured = ops.filter((o) => o.secured);
    // every secured operation documents its scopes (all of x-required-scopes, or any one of x-accepted-scopes)
    const undocumented = secured.filter((o) => o.scopes.length + o.anyOf.length === 0).map((o) => `${o.method} ${o.path}`);
    expect(undocumented).toEqual([]);
    expect(secured.length).toBeGreaterThanOrEqual(30);
    const all = ['read', 'write', 'proof:read', 'admin', 'webhook:read', 'webhook:write', 'events:read'];
    const keys = new Map<string, string>();
    const keyWith = async (perms: string[]) => {
      const id = [...perms].sort().join(',');
      if (!keys.has(id)) keys.set(id, (await createTestOrgAndKey(t.db, { orgId: b.orgId, permissions: perms, rateLimitRpm: 1_000_000 })).key);
      return keys.get(id)!;
    };
    const expectDenied = async (op: Operation, path: string, perms: string[], named: string) => {
      const res = await send(op, path, await keyWith(perms));
      const body = await res.json();
      expect(res.status, `${op.method} ${op.path} with [${perms}]: ${JSON.stringify(body)}`).toBe(403);
      expect(body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', error: `API key lacks the required scope: ${named}` });
    };
    const expectAllowed = async (op: Operation, path: string, perms: string[]) => {
      const res = await send(op, path, await keyWith(perms));
      const text = await res.text();
      expect([401, 403], `${op.method} ${op.path} with [${perms}]: ${text}`).not.toContain(res.status);
    };
    for (const op of secured) {
      const path = op.path.replace(/\{[^}]+\}/g, randomUUID());
      for (const missing of op.scopes) {
        await expectDenied(
          op,
          path,
          all.filter((s) => s !== missing && s !== 'admin'),
          missing,
        ); // admin holds every scope
      }
      if (op.scopes.length) await expectAllowed(op, path, op.scopes);
      if (op.anyOf.length) {
        // admin holds every scope, so it is left out of the key that must be refused
        await expectDenied(
          op,
          path,
          all.filter((s) => !op.anyOf.includes(s) && s !== 'admin'),
          op.anyOf[0],
        );
        for (const one of op.anyOf) await expectAllowed(op, path, [one]);
      }
    }
  });

  it('a key revoked through the API is refused on its very next request, on every secured operation', async () => {
    const victim = await createTestOrgAndKey(t.db, { orgId: a.orgId, isAdmin: true, rateLimitRpm: 1_000_000 });
    expect((await t.call(`/v1/identity/${ids.identity}`, { key: victim.key })).status).toBe(200);
    expect((await t.call(`/v1/admin/api-keys/${victim.keyId}`, { method: 'DELETE', key: a.key })).status).toBe(204);
    const secured = ops.filter((o) => o.secured);
    expect(secured.length).toBeGreaterThanOrEqual(30);
    for (const op of secured) {
      const res = await send(op, concrete(op.path) ?? op.path.replace(/\{[^}]+\}/g, randomUUID()), victim.key);
      expect(res.status, `${op.method} ${op.path}`).toBe(403);
      expect((await res.json()).code).toBe('API_KEY_DEACTIVATED');
    }
  });
});
