/**
 * The proof artifact (GET /v1/proof/{id}, /v1/proof/tx/{tx_hash}) follows the API conventions whatever the version
 * of the stored bundle: a version 1 bundle (test/proof/fixtures/bundle-v1.json, stored before version 2) and the
 * same proof as a version 2 bundle give the same artifact, with the ledger tx hash as bare hex, counts as numbers
 * and chains as chain + evm_chain_id. GET /v1/proof/{id}/bundle serves each bundle exactly as stored. The OpenAPI
 * document describes those forms.
 */
import { randomUUID } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identities, intents, proofs } from '../../src/db/schema.js';
import { upgradeBundle } from '../../src/proof/bundle-v1.js';
import { BUNDLE_VERSION, sealBundle, serializeBundle, type ProofBundleV1 } from '../../src/proof/bundle.js';
import { verifyBundle } from '../../src/proof/verify.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

const v1Text = readFileSync(join(import.meta.dirname, 'fixtures', 'bundle-v1.json'), 'utf8');
const v1 = JSON.parse(v1Text) as ProofBundleV1;
/** the same proof written as version 2 writes it */
const v2 = sealBundle({ ...upgradeBundle(v1), version: BUNDLE_VERSION });
const v2Text = serializeBundle(v2);
const ledgerHash = v1.ledger.tx_hash.slice(2);

describe('proof artifact of stored bundles of either version', () => {
  let t: TestApp;
  let a: TestKey;
  const proofIds: Record<'v1' | 'v2', string> = { v1: '', v2: '' };

  beforeAll(async () => {
    t = await startTestApp('pglite');
    a = await createTestOrgAndKey(t.db, { orgName: 'A', rateLimitRpm: 1_000_000 });
    const [identity] = await t.db
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
    for (const [version, text, txHash] of [
      ['v1', v1Text, ledgerHash],
      ['v2', v2Text, 'cd'.repeat(32)],
    ] as const) {
      const [intent] = await t.db
        .insert(intents)
        .values({
          orgId: a.orgId,
          identityId: identity!.id,
          status: 'completed',
          intent: { parts: [] },
          operationId: `op-${version}`,
          signingData: { request_id: 'r', transaction_hash: txHash, hash_to_sign: 'ef'.repeat(32) },
          prepared: {} as never,
          signerPublicKey: Buffer.from(ed25519.getPublicKey(ed25519.utils.randomSecretKey())).toString('hex'),
          signerKeyPage: 'acc://alpha.acme/book/1',
          txHash,
          expiresAt: new Date(Date.now() + 3_600_000),
        })
        .returning();
      const [proof] = await t.db
        .insert(proofs)
        .values({ orgId: a.orgId, intentId: intent!.id, bundle: text, bundleHash: (JSON.parse(text) as { bundle_hash: string }).bundle_hash, custody: [] })
        .returning();
      proofIds[version] = proof!.id;
      await t.db.update(intents).set({ proofId: proof!.id }).where(eq(intents.id, intent!.id));
    }
  });
  afterAll(async () => t?.close());

  const get = async (path: string) => {
    const r = await t.call(path, { key: a.key });
    return { status: r.status, text: await r.text() };
  };

  it('the version 2 form of the proof is a valid version 2 bundle (the same content)', async () => {
    const v = await verifyBundle(v2Text);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.checks.find((c) => c.name === 'bundle.version')!.detail).toBe(BUNDLE_VERSION);
  });

  it('a stored version 1 bundle gives the artifact in the conventions, the same as its version 2 form', async () => {
    const r1 = await get(`/v1/proof/${proofIds.v1}`);
    const r2 = await get(`/v1/proof/${proofIds.v2}`);
    expect(r1.status).toBe(200);
    expect(r2.status).toBe(200);
    const a1 = JSON.parse(r1.text);
    const a2 = JSON.parse(r2.text);
    expect(a1).toMatchObject({
      proof_id: proofIds.v1,
      operation_id: v1.intent.operation_id,
      status: 'complete',
      bundle_hash: v1.bundle_hash,
      ledger: { tx_id: v1.ledger.tx_id, tx_hash: ledgerHash, key_page: v1.ledger.authority.key_page, key_page_version: 1, threshold: 1, signatures: 1 },
    });
    const c = v1.chains[0]!;
    expect(a1.chains).toEqual([
      {
        chain: 'ethereum-sepolia',
        evm_chain_id: 11155111,
        proof_anchor: c.proof_anchor,
        anchor_id: c.anchor.anchor_id,
        validator_set_root: c.validator_set.root,
        attested_by: [0, 1, 2, 3, 4, 5, 6],
        transactions: { create_anchor: c.create_anchor.tx_hash, execute_comprehensive_proof: c.prove.tx_hash },
        legs: [
          {
            leg_id: c.legs[0]!.leg_id,
            execution_tx: c.legs[0]!.execution.tx_hash,
            result_hash: c.legs[0]!.observation.result_hash,
            result_id: c.legs[0]!.result.result_id,
            observed_by: [0, 1, 2, 3, 4, 5, 6],
          },
        ],
      },
    ]);
    const { proof_id: _1, intent_id: _2, bundle_hash: _3, bundle_url: _4, custody_url: _5, created_at: _6, ...same1 } = a1;
    const { proof_id: _7, intent_id: _8, bundle_hash: _9, bundle_url: _10, custody_url: _11, created_at: _12, ...same2 } = a2;
    expect(same2).toEqual(same1);
  });

  it('found by its ledger tx hash in either form (0x or not, any case)', async () => {
    for (const h of [ledgerHash, `0x${ledgerHash}`, ledgerHash.toUpperCase()]) {
      const r = await get(`/v1/proof/tx/${h}`);
      expect(r.status, h).toBe(200);
      expect(JSON.parse(r.text)).toMatchObject({ proof_id: proofIds.v1, ledger: { tx_hash: ledgerHash } });
    }
  });

  it('/bundle serves each bundle exactly as stored: a version 1 bundle stays version 1', async () => {
    const b1 = await get(`/v1/proof/${proofIds.v1}/bundle`);
    expect(b1.status).toBe(200);
    expect(b1.text).toBe(v1Text);
    expect((await verifyBundle(b1.text)).valid).toBe(true);
    const b2 = await get(`/v1/proof/${proofIds.v2}/bundle`);
    expect(b2.text).toBe(v2Text);
  });

  it('the OpenAPI document describes the forms: ledger hash bare, EVM hashes 0x, numbers as integers, evm_chain_id', async () => {
    const doc = (await (await t.call('/docs/json')).json()) as { components: { schemas: Record<string, Json> } };
    const p = doc.components.schemas.Proof!;
    expect(p.properties.ledger.properties.tx_hash.pattern).toBe('^[0-9a-f]{64}$');
    for (const k of ['key_page_version', 'threshold', 'signatures']) expect(p.properties.ledger.properties[k].type, k).toBe('integer');
    const chain = p.properties.chains.items;
    expect(chain.properties.evm_chain_id.type).toBe('integer');
    expect(chain.properties).not.toHaveProperty('chain_id');
    expect(chain.properties.anchor_id.pattern).toBe('^0x[0-9a-f]{64}$');
    expect(chain.properties.transactions.properties.create_anchor.pattern).toBe('^0x[0-9a-f]{64}$');
    expect(chain.properties.attested_by.items.type).toBe('integer');
    expect(chain.properties.legs.items.properties.execution_tx.pattern).toBe('^0x[0-9a-f]{64}$');
  });
});

/** OpenAPI schema objects, read by path */
type Json = any;
