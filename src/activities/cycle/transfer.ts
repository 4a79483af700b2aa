/**
 * The end of a ledger-only intent (a `sendTokens` token transfer): no chain leg, no validator round. Once the ledger
 * has executed the SendTokens (intentWorkflow follows it like any intent's transaction), this waits for the deposit
 * it produced to land, reads the ledger's Merkle receipt of the transaction, checks that it folds to its anchor,
 * and stores the proof (src/proof/ledger-receipt.ts: the transaction, its signatures, the key page's threshold
 * and the receipt); then the intent completes.
 */
import { ApplicationFailure } from '@temporalio/common';
import { completeIntent, getIntent, markIntentFailed } from '../../db/intents.js';
import { LedgerTransportError } from '../../ledger/index.js';
import { appendCustody, custodyTrail } from '../../proof/custody-trail.js';
import { ledgerReceiptBundle } from '../../proof/ledger-receipt.js';
import type { TransferDocument } from '../../protocol/intent/transfer.js';
import { heartbeating } from '../heartbeat.js';
import { cycleFailure, type CycleContext } from './context.js';

export function transferSteps(ctx: CycleContext) {
  const { db, ledger } = ctx;
  return {
    async finalizeLedgerIntent(i: { intentId: string }): Promise<{ status: 'completed' | 'failed'; proofId?: string; error?: string }> {
      const row = await getIntent(db, i.intentId);
      if (!row) throw cycleFailure('IntentNotFound', `intent ${i.intentId} not found`);
      if (row.status === 'completed' && row.proofId) return { status: 'completed', proofId: row.proofId };
      if (!row.ledgerTxId || !row.txHash) throw cycleFailure('IntentNotSubmitted', `intent ${i.intentId} was never submitted`);
      const d = row.intent as TransferDocument;
      // the recipient's deposit is a synthetic transaction a block or more later: the intent completes once it landed
      const st = await heartbeating(ledger.waitForTransaction(row.ledgerTxId, { waitProduced: true, timeoutMs: 60_000, throwOnFailure: false })).catch(
        (e: unknown) => {
          if (e instanceof LedgerTransportError) throw ApplicationFailure.retryable(`ledger unreachable: ${e.message}`, 'LedgerUnavailable');
          throw e;
        },
      );
      if (!st.delivered) {
        const error = `ledger transaction ${st.status}${st.error ? `: ${st.error.message}` : ''}`;
        await markIntentFailed(db, i.intentId, { status: 'failed', stage: 'submitted', error });
        return { status: 'failed', error };
      }
      const r = await ledger.getReceipt(row.prepared.principal, st.txHash);
      // a receipt that does not fold to its anchor proves nothing: retried (the ledger may not have anchored it yet)
      if (!r.verified) throw new Error(`the ledger's receipt of ${st.txHash} does not fold to its anchor yet`);
      const page = await ledger.queryKeyPage(row.prepared.signerUrl);
      const created = row.createdAt.toISOString();
      const { bundle, bundleHash } = ledgerReceiptBundle({
        intentId: row.id,
        operationId: row.operationId,
        adiUrl: d.from.replace(/\/tokens$/i, ''),
        kind: d.type,
        from: d.from,
        to: d.to,
        amount: d.amount,
        amountAcme: d.amount_acme,
        txId: st.txId,
        txHash: st.txHash,
        transaction: st.transaction,
        signatures: st.signatures.map((s) => s.raw),
        produced: st.produced,
        keyBook: row.prepared.signerUrl.replace(/\/\d+$/, ''),
        keyPage: row.prepared.signerUrl,
        keyPageVersion: row.prepared.signerVersion,
        threshold: page.acceptThreshold,
        receipt: r.receipt,
        createdAt: created,
      });
      // created (prepare), then recorded: the ledger executed it and its receipt is in the bundle
      const custody = appendCustody(
        custodyTrail({ intentId: row.id, operationId: row.operationId, createdAt: created, ledgerTxHash: st.txHash, chains: [], bundleHash }),
        {
          type: 'recorded',
          at: new Date().toISOString(),
          data: { tx_hash: st.txHash.toLowerCase(), receipt_anchor: r.receipt.anchor.replace(/^0x/i, '').toLowerCase(), bundle_hash: bundleHash },
        },
      );
      const proofId = await completeIntent(db, i.intentId, { proof: { bundle, bundleHash, custody }, executions: [] });
      return { status: 'completed', proofId };
    },
  };
}
