/**
 * Fresh signing data for an unsigned governance operation (the Update `refreshSigningData` of `governance-<id>`):
 * its transaction prepared again from the stored operations for the same key and signing page, with a new
 * signature timestamp and the page's current version (so a new hash to sign), stored in place of the old one. The
 * operation keeps its id. Closed when it took a signature or ended meanwhile; a ledger that cannot be reached is
 * thrown as is (retried); the ledger refusing the key or page is SignatureRefused.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../db/client.js';
import { getGovernanceOp } from '../db/governance.js';
import { replaceGovernancePrepared } from '../db/signing-data.js';
import { governanceBody, type GovernanceOperation, type OperationKind } from '../governance/operations.js';
import { isTransientLedgerError, LedgerError, normUrl, storablePreparedSignature, type LedgerClient, type StoredPreparedSignature } from '../ledger/index.js';

export function createGovernanceSigningDataActivities(deps: { db: Db; ledger: LedgerClient }) {
  const { db, ledger } = deps;
  return {
    async refreshGovernanceSigningData(opId: string): Promise<{ hashToSign: string; txHash: string; keyPageVersion: number }> {
      const op = await getGovernanceOp(db, opId);
      if (!op) throw ApplicationFailure.nonRetryable(`governance operation ${opId} not found`, 'NotFound');
      const closed = () => ApplicationFailure.nonRetryable(`the operation is ${op.status}; it takes no new signing data`, 'Closed');
      if (op.status !== 'signing_required' || op.signedKeys.length > 0) throw closed();
      const old = op.prepared as unknown as StoredPreparedSignature;
      try {
        const fresh = await ledger.prepareExternalSignature({
          principal: op.principal,
          body: governanceBody(op.kind as OperationKind, op.operations as unknown as GovernanceOperation[]),
          signerUrl: op.signerUrl,
          publicKey: old.publicKey,
        });
        const page = await ledger.queryKeyPage(fresh.signerUrl);
        const stored = await replaceGovernancePrepared(db, op.id, {
          prepared: storablePreparedSignature(fresh) as unknown as Record<string, unknown>,
          txHash: fresh.txHash,
          txId: fresh.txId,
          signerUrl: fresh.signerUrl,
          keyPageVersion: fresh.signerVersion,
          // the threshold the signatures must meet, as prepare records it
          signerThreshold: normUrl(page.url) === normUrl(fresh.signerUrl) && page.version === fresh.signerVersion ? Math.max(1, page.acceptThreshold) : null,
        });
        if (!stored) throw closed();
        return { hashToSign: fresh.hashToSign, txHash: fresh.txHash, keyPageVersion: fresh.signerVersion };
      } catch (e) {
        if (e instanceof ApplicationFailure || isTransientLedgerError(e) || !(e instanceof LedgerError)) throw e;
        throw ApplicationFailure.nonRetryable(`the ledger refused to prepare the operation again: ${e.message}`, 'SignatureRefused');
      }
    },
  };
}
export type GovernanceSigningDataActivities = ReturnType<typeof createGovernanceSigningDataActivities>;
