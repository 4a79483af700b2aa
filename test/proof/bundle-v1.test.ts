/**
 * Version 1 bundles, handed out before version 2, are still read: a real one (test/proof/fixtures/bundle-v1.json,
 * assembled on the devnet of ./bundle.test.ts by the version 1 producer) passes every offline check, and fails on
 * any changed byte, on changes re-sealed with a fresh bundle_hash, and when written in version 2's forms.
 * upgradeBundle gives it in version 2's form; the bundle as sent is what the schema and the hash are checked on.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLE_VERSION, bundleHash, bundleSchemaProblems, sealBundle, serializeBundle, type ProofBundleV1 } from '../../src/proof/bundle.js';
import { upgradeBundle } from '../../src/proof/bundle-v1.js';
import { verifyBundle, type BundleVerification } from '../../src/proof/verify.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'bundle-v1.json');
const text = readFileSync(FIXTURE, 'utf8');
const v1 = JSON.parse(text) as ProofBundleV1;
const clone = (): ProofBundleV1 => JSON.parse(text) as ProofBundleV1;
const failed = (v: BundleVerification) => v.checks.filter((c) => !c.ok).map((c) => c.name);
const detail = (v: BundleVerification, name: string) => v.checks.find((c) => c.name === name)?.detail;
const resealed = (b: ProofBundleV1) => verifyBundle(serializeBundle(sealBundle(b as never)));
const P = `chain[${v1.chains[0]!.chain}]`;
const L = `${P}.leg[${v1.chains[0]!.legs[0]!.leg_id}]`;

describe('proof bundle version 1', () => {
  it('the fixture is a version 1 bundle in its forms (decimal strings, 0x ledger hashes, chain_id)', () => {
    expect(v1.version).toBe('pgw-proof-bundle/1');
    expect(v1.ledger.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(v1.chains[0]!.chain_id).toMatch(/^[1-9][0-9]*$/);
    expect(v1.chains[0]!.anchor.leaf_count).toBe('1');
    expect(v1.chains[0]!.anchor.ledger_tx_hash).toBe(v1.ledger.tx_hash);
    expect(serializeBundle(v1 as never)).toBe(text);
  });

  it('passes every offline check, as bytes, text and object', async () => {
    for (const input of [new TextEncoder().encode(text), text, clone()]) {
      const v = await verifyBundle(input as never);
      expect(failed(v)).toEqual([]);
      expect(v).toMatchObject({ valid: true, complete: true });
      expect(v.checks.length).toBe(24);
      expect(detail(v, 'bundle.version')).toBe('pgw-proof-bundle/1');
      expect(detail(v, 'bundle.hash')).toBe(v1.bundle_hash);
    }
  });

  it('any single changed byte makes it invalid (200 positions spread over the file)', async () => {
    const bytes = new TextEncoder().encode(text);
    const notRejected: number[] = [];
    for (let i = 0; i < 200; i++) {
      const p = Math.floor((i * (bytes.length - 1)) / 199);
      const out = Uint8Array.from(bytes);
      out[p] = out[p]! ^ 0x01;
      const v = await verifyBundle(out);
      if (v.valid) notRejected.push(p);
      else expect(failed(v).some((f) => f === 'bundle.hash' || f === 'encoding.canonical_json')).toBe(true);
    }
    expect(notRejected).toEqual([]);
  });

  it('changes re-sealed with a fresh bundle_hash fail the check that covers them', async () => {
    const cases: [string, (b: ProofBundleV1) => void, string][] = [
      ['leaf count', (b) => (b.chains[0]!.anchor.leaf_count = '2'), `${P}.anchor`],
      ['chain id', (b) => (b.chains[0]!.chain_id = '80002'), `${P}.anchor`],
      ['anchored ledger tx hash', (b) => (b.chains[0]!.anchor.ledger_tx_hash = `0x${'11'.repeat(32)}`), `${P}.anchor`],
      ['threshold above the signatures', (b) => (b.ledger.authority.threshold = '2'), 'ledger.authority'],
      ['signer key not on the page', (b) => (b.ledger.key_page.key_hashes = [`0x${'aa'.repeat(32)}`]), 'ledger.key_page'],
      ['a signer dropped', (b) => (b.chains[0]!.attestation.signers = b.chains[0]!.attestation.signers.slice(1)), `${P}.attestation`],
      ['observed checks miscounted', (b) => (b.chains[0]!.legs[0]!.observation.checks.expected_events = '7'), `${L}.observation_checks`],
      ['result written by another validator', (b) => (b.chains[0]!.legs[0]!.result.written_by = '6'), `${L}.proof_result`],
      [
        'block header gas',
        (b) => (b.chains[0]!.legs[0]!.execution.block.gasUsed = String(BigInt(b.chains[0]!.legs[0]!.execution.block.gasUsed) + 1n)),
        `${L}.execution_inclusion`,
      ],
    ];
    for (const [what, mutate, check] of cases) {
      const b = clone();
      mutate(b);
      const v = await resealed(b);
      expect(v.valid, what).toBe(false);
      expect(failed(v), what).toContain(check);
      expect(failed(v), what).not.toContain('bundle.hash');
      expect(failed(v), what).not.toContain('encoding.schema');
    }
  });

  it("is held to version 1's schema: version 2's forms in it, or its forms under version 2's label, are refused naming the field", async () => {
    const cases: [string, (b: Record<string, unknown>) => void, string][] = [
      [
        'a number',
        (b) => (((b as unknown as ProofBundleV1).chains[0]!.anchor as Record<string, unknown>).leaf_count = 1),
        'chains[0].anchor.leaf_count: must be a string, got 1',
      ],
      [
        'a bare ledger hash',
        (b) => ((b as unknown as ProofBundleV1).ledger.tx_hash = v1.ledger.tx_hash.slice(2) as never),
        'ledger.tx_hash: must be a 32-byte hash',
      ],
      ['relabelled version 2', (b) => (b.version = BUNDLE_VERSION), 'ledger.tx_hash: must be a ledger hash (64 lowercase hex characters, no 0x), got "0x'],
    ];
    for (const [what, mutate, want] of cases) {
      const b = clone() as unknown as Record<string, unknown>;
      mutate(b);
      const v = await resealed(b as never);
      expect(v.valid, what).toBe(false);
      expect(failed(v), what).toContain('encoding.schema');
      expect(detail(v, 'encoding.schema'), what).toContain(want);
      expect(failed(v), what).not.toContain('bundle.hash');
    }
    // an unknown version is refused by its own check
    const other = clone() as unknown as Record<string, unknown>;
    other.version = 'pgw-proof-bundle/9';
    const ov = await resealed(other as never);
    expect(failed(ov)).toContain('bundle.version');
    expect(detail(ov, 'bundle.version')).toContain('is not one the verifier reads (pgw-proof-bundle/1, pgw-proof-bundle/2)');
  });

  it("upgradeBundle writes it in version 2's form (same content), leaving the bundle as sent untouched", () => {
    const up = upgradeBundle(v1);
    expect(serializeBundle(v1 as never)).toBe(text); // not mutated
    expect(up.version).toBe('pgw-proof-bundle/1');
    expect(up.bundle_hash).toBe(v1.bundle_hash);
    // of version 2's schema once labelled so (its bundle_hash is that of the bundle as sent, not of this form)
    expect(bundleSchemaProblems({ ...up, version: BUNDLE_VERSION })).toEqual([]);
    expect(bundleHash(up)).not.toBe(v1.bundle_hash);
    const c = up.chains[0]!;
    expect(c).toMatchObject({ chain: v1.chains[0]!.chain, evm_chain_id: Number(v1.chains[0]!.chain_id) });
    expect(c).not.toHaveProperty('chain_id');
    expect(c.anchor).toMatchObject({ tx_hash: v1.ledger.tx_hash.slice(2), leaf_count: 1 });
    expect(c.anchor).not.toHaveProperty('ledger_tx_hash');
    expect(up.ledger.tx_hash).toBe(v1.ledger.tx_hash.slice(2));
    expect(up.ledger.authority).toMatchObject({ key_page_version: 1, threshold: 1, signatures: 1, delegated: 0 });
    expect(c.attestation.signers).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(c.attestation.signer_bitmap).toBe('127');
    expect(c.validator_set.powers).toEqual(v1.chains[0]!.validator_set.powers);
    expect(c.legs[0]!.execution.block.number).toBe(Number(v1.chains[0]!.legs[0]!.execution.block.number));
    expect(c.legs[0]!.execution.block.baseFeePerGas).toBe(v1.chains[0]!.legs[0]!.execution.block.baseFeePerGas);
    // the ledger's own JSON is hashed: kept exactly
    expect(up.ledger.transaction).toEqual(v1.ledger.transaction);
    expect(up.ledger.signatures).toEqual(v1.ledger.signatures);
    // upgrading twice changes nothing more; a version 2 bundle is given back as it is
    expect(upgradeBundle(up)).toEqual(up);
    const labelled = { ...up, version: BUNDLE_VERSION };
    expect(upgradeBundle(labelled)).toBe(labelled);
  });

  it('CLI: exit 0 on the version 1 file', async () => {
    const r = await new Promise<{ code: number | null; out: string }>((resolve) =>
      execFile('npx', ['tsx', 'src/bin/cli.ts', 'verify-bundle', FIXTURE], { cwd: process.cwd(), encoding: 'utf8', timeout: 60_000 }, (e, out) =>
        resolve({ code: e ? ((e as { code?: number }).code ?? null) : 0, out }),
      ),
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/^ok {3}bundle\.version: pgw-proof-bundle\/1$/m);
    expect(r.out).toMatch(/bundle valid, UNANCHORED: /);
  }, 60_000);
});
