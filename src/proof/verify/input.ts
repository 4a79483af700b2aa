/**
 * The bundle as given: canonical JSON bytes (or an object), of its version's schema, sealed by its hash, of a
 * version the verifier reads (2, or 1 as handed out before it).
 */
import { canonicalJson } from '../../chain/formulas.js';
import { BUNDLE_VERSIONS, bundleHash, bundleSchemaProblems, type ProofBundle } from '../bundle.js';
import { upgradeBundle } from '../bundle-v1.js';
import { CheckFailed, ensure, type Checker } from './checks.js';

export function parseInput(input: unknown, check: (name: string, fn: () => string) => boolean): ProofBundle | undefined {
  let bundle: ProofBundle | undefined;
  check('encoding.canonical_json', () => {
    if (typeof input === 'string' || input instanceof Uint8Array) {
      let text: string;
      try {
        text = typeof input === 'string' ? input : new TextDecoder('utf-8', { fatal: true }).decode(input);
      } catch {
        throw new CheckFailed('bundle bytes are not UTF-8');
      }
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch (e) {
        throw new CheckFailed(`bundle is not JSON: ${(e as Error).message}`);
      }
      ensure(typeof v === 'object' && v !== null && !Array.isArray(v), 'bundle is not a JSON object');
      let canon: string;
      try {
        canon = canonicalJson(v);
      } catch (e) {
        throw new CheckFailed(`bundle is not canonical-JSON encodable: ${(e as Error).message}`);
      }
      if (canon !== text) {
        let i = 0;
        while (i < canon.length && canon[i] === text[i]) i++;
        throw new CheckFailed(`bundle bytes are not in canonical form (first difference at character ${i})`);
      }
      bundle = v as ProofBundle;
      return `${Buffer.byteLength(text)} bytes of canonical JSON`;
    }
    ensure(typeof input === 'object' && input !== null, 'bundle is not an object');
    canonicalJson(input);
    bundle = input as ProofBundle;
    return 'given as an object (canonical form computed)';
  });
  return bundle;
}

/**
 * The bundle's schema (its version's), hash and version, all of the bundle as sent; returns it in version 2's form
 * (upgradeBundle), the form the other checks read.
 */
export function checkEnvelope(b: ProofBundle, check: Checker['check']): ProofBundle {
  check('encoding.schema', () => {
    const problems = bundleSchemaProblems(b);
    ensure(!problems.length, `${problems.slice(0, 8).join('; ')}${problems.length > 8 ? `; and ${problems.length - 8} more` : ''}`);
    return `every object has exactly the keys the builder writes, every value its type and form (${String(b.version)})`;
  });

  check('bundle.hash', () => {
    const h = bundleHash(b);
    ensure(typeof b.bundle_hash === 'string' && b.bundle_hash === h, `bundle_hash ${String(b.bundle_hash)} != SHA-256 of the canonical bundle ${h}`);
    return h;
  });
  check('bundle.version', () => {
    ensure(BUNDLE_VERSIONS.includes(b.version), `version ${JSON.stringify(b.version)} is not one the verifier reads (${BUNDLE_VERSIONS.join(', ')})`);
    return b.version;
  });
  return upgradeBundle(b);
}
