/**
 * The offline verifier in the browser: src/proof/verify.ts itself (bundled with the browser stand-ins of
 * src/console/bundle.ts), run on a bundle's bytes as served. Offline: no RPC, no ledger.
 */
import { verifyBundle, type BundleVerification } from '../../proof/verify.js';

export type { BundleVerification };

export function verifyInBrowser(bundleText: string): Promise<BundleVerification> {
  return verifyBundle(bundleText);
}
