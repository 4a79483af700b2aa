/**
 * Governance operations, pending actions and sign requests. Every read a route makes is scoped to the
 * caller's organization; state changes that clients subscribe to write their event in the same transaction.
 */
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { recordEvent } from './events.js';
import { ledgerHashForm } from '../webhooks/stored-forms.js';
import { governanceOps, intents, pendingActions, pendingScans, signRequests } from './schema.js';

export type GovernanceOpRow = typeof governanceOps.$inferSelect;
export type PendingActionRow = typeof pendingActions.$inferSelect;
export type SignRequestRow = typeof signRequests.$inferSelect;

export const GOVERNANCE_TERMINAL = ['executed', 'rejected', 'failed', 'expired'] as const;
export type GovernanceTerminal = (typeof GOVERNANCE_TERMINAL)[number];

// ------------------------------------------------------------------ governance operations

export async function insertGovernanceOp(db: Db, row: typeof governanceOps.$inferInsert): Promise<GovernanceOpRow> {
  const [r] = await db.insert(governanceOps).values(row).returning();
  return r!;
}

export async function getGovernanceOp(db: Db, id: string): Promise<GovernanceOpRow | undefined> {
  const [r] = await db.select().from(governanceOps).where(eq(governanceOps.id, id));
  return r;
}

export async function getOrgGovernanceOp(db: Db, orgId: string, id: string): Promise<GovernanceOpRow | undefined> {
  const [r] = await db
    .select()
    .from(governanceOps)
    .where(and(eq(governanceOps.orgId, orgId), eq(governanceOps.id, id)));
  return r;
}

/** Remove an operation whose workflow did not start (nothing was signed; the request can be retried). */
export async function deleteGovernanceOp(db: Db, id: string): Promise<void> {
  await db.delete(governanceOps).where(eq(governanceOps.id, id));
}

/** Open governance operations of the organization on this ledger transaction. */
export async function openGovernanceOpsByTxHash(db: Db, orgId: string, txHash: string): Promise<GovernanceOpRow[]> {
  return db
    .select()
    .from(governanceOps)
    .where(
      and(eq(governanceOps.orgId, orgId), eq(governanceOps.txHash, txHash), sql`${governanceOps.status} not in ('executed','rejected','failed','expired')`),
    );
}

/** The intents (of any organization) whose ledger transaction has this hash and still waits on the ledger. */
export async function submittedIntentIdsByTxHash(db: Db, txHash: string): Promise<string[]> {
  const rows = await db
    .select({ id: intents.id })
    .from(intents)
    .where(and(eq(intents.txHash, txHash.toLowerCase().replace(/^0x/, '')), eq(intents.status, 'submitted')));
  return rows.map((r) => r.id);
}

/** Record that `publicKey`'s signature was submitted; status moves to `status` unless the op is already terminal. */
export async function markGovernanceSigned(db: Db, id: string, publicKey: string, status: string): Promise<void> {
  await db
    .update(governanceOps)
    .set({
      signedKeys: sql`case when ${governanceOps.signedKeys} ? ${publicKey} then ${governanceOps.signedKeys} else ${governanceOps.signedKeys} || ${JSON.stringify([publicKey])}::jsonb end`,
      status: sql`case when ${governanceOps.status} in ('executed','rejected','failed','expired') then ${governanceOps.status} else ${status} end`,
      updatedAt: new Date(),
    })
    .where(eq(governanceOps.id, id));
}

/** Move an open operation to a terminal status and emit governance.executed / governance.rejected, once. */
export async function finishGovernanceOp(db: Db, id: string, status: GovernanceTerminal, reason?: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [r] = await tx
      .update(governanceOps)
      .set({ status, errorMessage: reason ?? null, updatedAt: new Date() })
      .where(and(eq(governanceOps.id, id), sql`${governanceOps.status} not in ('executed','rejected','failed','expired')`))
      .returning();
    if (!r) return false;
    const operation = operationLabel(r.operations);
    if (status === 'executed') {
      await recordEvent(tx, {
        orgId: r.orgId,
        type: 'governance.executed',
        resourceId: r.id,
        data: { governance_op_id: r.id, identity_id: r.identityId, operation, tx_hash: ledgerHashForm(r.txHash) },
      });
    } else {
      await recordEvent(tx, {
        orgId: r.orgId,
        type: 'governance.rejected',
        resourceId: r.id,
        data: { governance_op_id: r.id, identity_id: r.identityId, operation, reason: reason ?? status },
      });
    }
    return true;
  });
}

function operationLabel(ops: Record<string, unknown>[]): string {
  return ops.map((o) => String(o.type)).join(',');
}

// ------------------------------------------------------------------ pending actions

export type PendingActionInput = Omit<typeof pendingActions.$inferInsert, 'id' | 'discoveredAt' | 'resolvedAt' | 'updatedAt'>;

/**
 * Insert the action, or refresh the open one of (identity, tx). A new action emits inbox.action_pending in the same
 * transaction (the unique index makes "new" happen once). Returns whether it was new.
 */
export async function upsertPendingAction(db: Db, a: PendingActionInput): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [inserted] = await tx.insert(pendingActions).values(a).onConflictDoNothing().returning();
    if (inserted) {
      await recordEvent(tx, {
        orgId: a.orgId,
        type: 'inbox.action_pending',
        resourceId: inserted.id,
        data: {
          pending_action_id: inserted.id,
          identity_id: a.identityId,
          category: a.category === 'governance' ? 'governance' : 'transactions',
          tx_hash: ledgerHashForm(a.txHash),
          required_signatures: a.threshold,
          collected_signatures: a.collectedSignatures,
          remaining_needed: Math.max(0, a.threshold - a.collectedSignatures),
          expires_at: a.expiresAt ? a.expiresAt.toISOString() : null,
        },
      });
      return true;
    }
    await tx
      .update(pendingActions)
      .set({
        status: a.status,
        collectedSignatures: a.collectedSignatures,
        threshold: a.threshold,
        userHasSigned: a.userHasSigned,
        awaitingAuthorities: a.awaitingAuthorities,
        isReady: a.isReady,
        expiresAt: a.expiresAt ?? null,
        memo: a.memo ?? null,
        resolvedAt: null,
        updatedAt: new Date(),
      })
      .where(and(eq(pendingActions.identityId, a.identityId), eq(pendingActions.txHash, a.txHash)));
    return false;
  });
}

export async function openPendingActions(db: Db, orgId: string): Promise<PendingActionRow[]> {
  return db
    .select()
    .from(pendingActions)
    .where(and(eq(pendingActions.orgId, orgId), isNull(pendingActions.resolvedAt)));
}

export async function resolvePendingActions(db: Db, orgId: string, txHash: string, status: 'executed' | 'rejected' | 'expired'): Promise<void> {
  await db
    .update(pendingActions)
    .set({ status, isReady: status === 'executed', resolvedAt: new Date(), updatedAt: new Date() })
    .where(and(eq(pendingActions.orgId, orgId), eq(pendingActions.txHash, txHash), isNull(pendingActions.resolvedAt)));
}

export async function getOrgPendingAction(db: Db, orgId: string, id: string): Promise<PendingActionRow | undefined> {
  const [r] = await db
    .select()
    .from(pendingActions)
    .where(and(eq(pendingActions.orgId, orgId), eq(pendingActions.id, id)));
  return r;
}

/** The TxID of a transaction hash the organization knows: from a pending action, else from an open governance operation. */
export async function orgPendingTxId(db: Db, orgId: string, hash: string): Promise<string | undefined> {
  const [r] = await db
    .select({ txId: pendingActions.txId })
    .from(pendingActions)
    .where(and(eq(pendingActions.orgId, orgId), eq(pendingActions.txHash, hash)))
    .limit(1);
  return r?.txId ?? (await openGovernanceOpsByTxHash(db, orgId, hash))[0]?.txId;
}

export const URGENT_WITHIN_MS = 24 * 3600 * 1000;

export async function recordPendingScan(db: Db, orgId: string, degraded: boolean, error: string | null, at = new Date()): Promise<void> {
  await db
    .insert(pendingScans)
    .values({ orgId, lastScanAt: at, degraded, error })
    .onConflictDoUpdate({ target: pendingScans.orgId, set: { lastScanAt: at, degraded, error } });
}

export async function getPendingScan(db: Db, orgId: string) {
  const [r] = await db.select().from(pendingScans).where(eq(pendingScans.orgId, orgId));
  return r;
}

// ------------------------------------------------------------------ sign requests

export async function insertSignRequest(db: Db, row: typeof signRequests.$inferInsert): Promise<SignRequestRow> {
  const [r] = await db.insert(signRequests).values(row).returning();
  return r!;
}

export async function getOrgSignRequest(db: Db, orgId: string, id: string): Promise<SignRequestRow | undefined> {
  const [r] = await db
    .select()
    .from(signRequests)
    .where(and(eq(signRequests.orgId, orgId), eq(signRequests.id, id)));
  return r;
}

/**
 * How long a claim holds: a submission that has not settled its claim by then was lost with its process (the API
 * answers within seconds), and the request may be claimed again (the next submission finds on the ledger what the
 * lost one did).
 */
export const SIGN_REQUEST_CLAIM_LEASE_MS = 2 * 60 * 1000;

/**
 * Atomically take an unspent request (signing_required → claimed, or a claim older than the lease); undefined when
 * spent or claimed by another call within its lease.
 */
export async function claimSignRequest(
  db: Db,
  orgId: string,
  id: string,
  now = new Date(),
  leaseMs = SIGN_REQUEST_CLAIM_LEASE_MS,
): Promise<SignRequestRow | undefined> {
  const staleBefore = new Date(now.getTime() - leaseMs);
  const [r] = await db
    .update(signRequests)
    .set({ status: 'claimed', claimedAt: now })
    .where(
      and(
        eq(signRequests.orgId, orgId),
        eq(signRequests.id, id),
        or(
          eq(signRequests.status, 'signing_required'),
          and(eq(signRequests.status, 'claimed'), or(isNull(signRequests.claimedAt), lt(signRequests.claimedAt, staleBefore))),
        ),
      ),
    )
    .returning();
  return r;
}

/** End a claim: back to signing_required (retryable), or submitted / failed (spent). */
export async function settleSignRequest(db: Db, id: string, status: 'signing_required' | 'submitted' | 'failed', errorMessage?: string): Promise<void> {
  await db
    .update(signRequests)
    .set({
      status,
      claimedAt: null,
      ...(status === 'submitted' ? { submittedAt: new Date() } : {}),
      ...(errorMessage !== undefined ? { errorMessage } : {}),
    })
    .where(and(eq(signRequests.id, id), eq(signRequests.status, 'claimed')));
}
