/**
 * The proof of a ledger-only intent (a `sendTokens` token transfer): no chain leg and no validator round, so the
 * proof is what the ledger itself says about the transaction, in the bundle format `pgw-ledger-receipt/1`:
 *
 *   intent    what the client asked: the identity, the sending token account, the recipient, the amount (base
 *             units, 10^-8 ACME, and the same in ACME)
 *   ledger    the SendTokens transaction as the ledger holds it (its hash, tx_hash, commits to the principal, the
 *             recipient and the amount), the signatures it executed with, the key page whose threshold they met,
 *             the synthetic deposits it produced, and the ledger's Merkle receipt of the transaction hash on the
 *             sender's main chain, folded up to its anchor
 *   chains    empty; failed_legs empty
 *
 *   bundle_hash = 0x SHA-256(canonicalJson(bundle without bundle_hash)), as for the cross-chain bundle
 *
 * What it proves: the ledger executed exactly this transfer from the identity's token account under its key
 * page's authority (the receipt ties the transaction hash to the account's chain anchor; the deposit to the
 * recipient is the ledger's synthetic transaction named in `produced`). It proves nothing on an EVM chain, and
 * no validator attests it. The receipt also stays readable from the ledger at GET /v1/proof/tx/{tx_hash}/receipt.
 * The artifact (GET /v1/proof/{id}) reads it like a cross-chain bundle: its ledger part, and no chains. The offline
 * verifier (verify-bundle) checks it: ./verify/ledger-receipt.ts.
 */
import { sha256, stringToBytes, type Hex } from 'viem';
import { canonicalJson } from '../chain/formulas.js';
import type { Receipt } from '../ledger/receipt.js';

export const LEDGER_RECEIPT_BUNDLE_VERSION = 'pgw-ledger-receipt/1';

export interface LedgerReceiptBundleInput {
  intentId: string;
  operationId: string;
  adiUrl: string;
  kind: string;
  from: string;
  to: string;
  /** base units */
  amount: string;
  amountAcme: string;
  txId: string;
  txHash: string;
  transaction: unknown;
  signatures: unknown[];
  produced: string[];
  keyBook: string;
  keyPage: string;
  keyPageVersion: number;
  threshold: number;
  receipt: Receipt;
  createdAt: string;
}

const bare = (h: string) => h.replace(/^0x/i, '').toLowerCase();

/** The bundle (canonical JSON) and its hash. */
export function ledgerReceiptBundle(i: LedgerReceiptBundleInput): { bundle: string; bundleHash: Hex } {
  const body = {
    version: LEDGER_RECEIPT_BUNDLE_VERSION,
    created_at: i.createdAt,
    intent: {
      intent_id: i.intentId,
      operation_id: i.operationId,
      adi_url: i.adiUrl.toLowerCase(),
      type: i.kind,
      from: i.from.toLowerCase(),
      to: i.to.toLowerCase(),
      amount: i.amount,
      amount_acme: i.amountAcme,
    },
    ledger: {
      tx_id: i.txId,
      tx_hash: bare(i.txHash),
      transaction: i.transaction,
      signatures: i.signatures,
      produced: i.produced,
      authority: {
        key_book: i.keyBook.toLowerCase(),
        key_page: i.keyPage.toLowerCase(),
        key_page_version: i.keyPageVersion,
        threshold: i.threshold,
        signatures: i.signatures.length,
        delegated: 0,
      },
      receipt: {
        account: i.from.toLowerCase(),
        start: bare(i.receipt.start),
        anchor: bare(i.receipt.anchor),
        entries: i.receipt.entries.map((e) => ({ hash: bare(e.hash), right: !!e.right })),
        ...(i.receipt.localBlock !== undefined ? { local_block: i.receipt.localBlock } : {}),
      },
    },
    chains: [],
    failed_legs: [],
  };
  const bundleHash = sha256(stringToBytes(canonicalJson(body)));
  return { bundle: canonicalJson({ ...body, bundle_hash: bundleHash }), bundleHash };
}
