/**
 * Offline checks of a ledger-only proof (bundle version pgw-ledger-receipt/1, ../ledger-receipt.ts), a token
 * transfer's: the bundle is sealed by its hash; the SendTokens transaction re-hashes (accumulate.js) to tx_hash, is
 * sent from the intent's token account (a direct account of its ADI) to the intent's recipient with the intent's
 * amount and nothing else; every signature verifies over the transaction; the signatures of the stated key page
 * (a page of the ADI's book) meet its stated threshold; the Merkle receipt folds from tx_hash to its anchor.
 *
 * What stays outside the bundle, as for the cross-chain bundle's ledger part: membership of the signers' keys in the
 * page, and whether the receipt's anchor is the ledger network's (the --ledger cross-check is for intents' WriteData).
 */
import { core } from 'accumulate.js';
import { bytesToHex, type Hex } from 'viem';
import { transactionHash } from '../../ledger/signing.js';
import { bundleHash, type BundleLedgerReceipt } from '../bundle.js';
import { LEDGER_RECEIPT_BUNDLE_VERSION } from '../ledger-receipt.js';
import { CheckFailed, ensure, eq, int, lc, ledger0x, same, type Checker } from './checks.js';
import { checkLedgerReceipt } from './evidence.js';
import { verifiedSignatureKeys, type LedgerSignerKey } from './ledger.js';

interface LedgerReceiptBundle {
  version: string;
  bundle_hash: string;
  intent: { intent_id: string; operation_id: string; adi_url: string; type: string; from: string; to: string; amount: string; amount_acme: string };
  ledger: {
    tx_id: string;
    tx_hash: string;
    transaction: unknown;
    signatures: unknown[];
    authority: { key_book: string; key_page: string; key_page_version: number; threshold: number; signatures: number };
    receipt: BundleLedgerReceipt;
  };
  chains: unknown[];
  failed_legs: unknown[];
}

export const isLedgerReceiptBundle = (b: unknown): boolean => (b as { version?: unknown } | null)?.version === LEDGER_RECEIPT_BUNDLE_VERSION;

/** Runs the checks of a pgw-ledger-receipt/1 bundle (each recorded under its name). */
export function verifyLedgerReceiptBundle(b: LedgerReceiptBundle, check: Checker['check']): void {
  check('bundle.hash', () => {
    const h = bundleHash(b as never);
    ensure(typeof b.bundle_hash === 'string' && b.bundle_hash === h, `bundle_hash ${String(b.bundle_hash)} != SHA-256 of the canonical bundle ${h}`);
    return h;
  });
  check('bundle.version', () => {
    ensure(Array.isArray(b.chains) && b.chains.length === 0 && Array.isArray(b.failed_legs) && b.failed_legs.length === 0, 'a ledger-only proof has no chains');
    return b.version;
  });
  const I = b.intent;
  const L = b.ledger;
  let hashOk = false;
  check('ledger.transaction', () => {
    ensure(I && L, 'intent or ledger section missing');
    let h: Hex;
    try {
      h = bytesToHex(transactionHash(new core.Transaction(L.transaction as core.TransactionArgs)));
    } catch (e) {
      throw new CheckFailed(`accumulate.js cannot hash the transaction: ${(e as Error).message}`);
    }
    eq(h, ledger0x(L.tx_hash), 'transaction hash');
    hashOk = true;
    const t = L.transaction as { header?: { principal?: string }; body?: { type?: string; to?: { url?: string; amount?: string }[] } };
    const principal = String(t.header?.principal ?? '');
    ensure(lc(L.tx_id) === `acc://${h.slice(2)}@${lc(principal).replace(/^acc:\/\//, '')}`, `tx id ${L.tx_id} is not ${L.tx_hash}@${principal}`);
    ensure(t.body?.type === 'sendTokens', `transaction is a ${String(t.body?.type)}, not sendTokens`);
    ensure(same(principal, I.from), `sent from ${principal}, not the intent's token account ${I.from}`);
    const rest = lc(principal).startsWith(`${lc(I.adi_url)}/`) ? lc(principal).slice(I.adi_url.length + 1) : '';
    ensure(rest && !rest.includes('/'), `token account ${principal} is not a direct account of ${I.adi_url}`);
    const to = t.body.to ?? [];
    ensure(to.length === 1, `${to.length} recipients; the intent names one`);
    ensure(same(to[0]!.url, I.to), `sent to ${String(to[0]!.url)}, not ${I.to}`);
    ensure(String(to[0]!.amount) === I.amount, `amount ${String(to[0]!.amount)} is not the intent's ${I.amount}`);
    return `${L.tx_hash} re-hashes; SendTokens of ${I.amount} base units from ${principal} to ${I.to}`;
  });
  let keys: LedgerSignerKey[] = [];
  check('ledger.signatures', () => {
    ensure(hashOk, 'not checked: the transaction hash did not recompute');
    keys = verifiedSignatureKeys(L.signatures, L.tx_hash);
    return `${keys.length} Ed25519 signature(s) verify over the transaction`;
  });
  check('ledger.authority', () => {
    const a = L.authority;
    ensure(a, 'authority missing');
    ensure(same(a.key_book, `${I.adi_url}/book`) || lc(a.key_book).startsWith(`${lc(I.adi_url)}/`), `key book ${a.key_book} is not of ${I.adi_url}`);
    ensure(lc(a.key_page).startsWith(`${lc(a.key_book)}/`), `key page ${a.key_page} is not a page of ${a.key_book}`);
    const threshold = int(a.threshold, 'authority.threshold');
    const version = int(a.key_page_version, 'authority.key_page_version');
    ensure(threshold >= 1, 'threshold must be at least 1');
    const accept = (v: unknown) => v === undefined || v === core.VoteType.Accept;
    const direct = keys.filter((k) => accept(k.vote) && !k.delegators.length && same(k.signer, a.key_page));
    for (const k of direct) ensure(k.version === version, `signature of ${k.publicKey} is for page version ${k.version}, not ${version}`);
    const counted = new Set(direct.map((k) => k.publicKey)).size;
    ensure(counted >= threshold, `${counted} valid signature(s) from ${a.key_page}, threshold ${threshold}`);
    return `${counted} signature(s) on ${a.key_page} v${version} meet threshold ${threshold}`;
  });
  check('ledger.receipt', () => checkLedgerReceipt(L.receipt, L.tx_hash, I.from, 'transfer receipt'));
}
