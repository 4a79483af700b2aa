/**
 * Rows of provider signing: the held key (sealed), the one-shot mnemonic retrieval, the per-identity policy and the
 * native value signed for (the rolling 24-hour limit, checked and written under a lock on the identity row).
 */
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { identities, mnemonicRetrievals, providerKeys, providerSpends, signRequests } from './schema.js';

export type ProviderKeyRow = typeof providerKeys.$inferSelect;

export interface NewProviderKey {
  identityId: string;
  publicKey: string;
  kekId: string;
  wrappedDataKey: string;
  sealedKey: string;
  tokenHash: string;
  sealedMnemonic: string;
  mnemonicExpiresAt: Date;
}

/** The held key and its mnemonic's retrieval (inside the identity's creation transaction). */
export async function insertProviderKey(db: Db, k: NewProviderKey): Promise<void> {
  await db.insert(providerKeys).values({
    identityId: k.identityId,
    publicKey: k.publicKey,
    kekId: k.kekId,
    wrappedDataKey: k.wrappedDataKey,
    sealedKey: k.sealedKey,
  });
  await db.insert(mnemonicRetrievals).values({
    identityId: k.identityId,
    tokenHash: k.tokenHash,
    sealedMnemonic: k.sealedMnemonic,
    expiresAt: k.mnemonicExpiresAt,
  });
}

/** A sign request by id (any organization: the worker's read). */
export async function getSignRequestById(db: Db, id: string) {
  const [row] = await db.select().from(signRequests).where(eq(signRequests.id, id));
  return row;
}

/** external | provider, or undefined for no such identity. */
export async function identitySigningMode(db: Db, identityId: string): Promise<string | undefined> {
  const [row] = await db.select({ signingMode: identities.signingMode }).from(identities).where(eq(identities.id, identityId));
  return row?.signingMode;
}

export async function getProviderKey(db: Db, identityId: string): Promise<ProviderKeyRow | undefined> {
  const [row] = await db.select().from(providerKeys).where(eq(providerKeys.identityId, identityId));
  return row;
}

/** The data key wrapped again by another KEK (rotation); only while the key exists. */
export async function rewrapProviderKey(db: Db, identityId: string, from: string, to: { kekId: string; wrappedDataKey: string }): Promise<void> {
  await db
    .update(providerKeys)
    .set({ ...to, rewrappedAt: new Date() })
    .where(and(eq(providerKeys.identityId, identityId), eq(providerKeys.kekId, from), isNull(providerKeys.destroyedAt)));
}

/**
 * The mnemonic's sealed form for a token, exactly once: the row is locked, and a valid claim (token matches, not
 * retrieved, not expired at `now`) clears the sealed mnemonic as it is taken. An expired row's mnemonic is cleared
 * too. Anything else answers undefined, all alike.
 */
export async function takeMnemonic(
  db: Db,
  orgId: string,
  identityId: string,
  tokenHash: string,
  now: Date,
): Promise<{ sealedMnemonic: string; kekId: string; wrappedDataKey: string } | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ r: mnemonicRetrievals, orgId: identities.orgId })
      .from(mnemonicRetrievals)
      .innerJoin(identities, eq(identities.id, mnemonicRetrievals.identityId))
      .where(eq(mnemonicRetrievals.identityId, identityId))
      .for('update', { of: mnemonicRetrievals });
    if (!row || row.orgId !== orgId || row.r.sealedMnemonic === null) return undefined;
    if (row.r.expiresAt.getTime() <= now.getTime()) {
      await tx.update(mnemonicRetrievals).set({ sealedMnemonic: null }).where(eq(mnemonicRetrievals.identityId, identityId));
      return undefined;
    }
    if (row.r.tokenHash !== tokenHash) return undefined;
    const [key] = await tx.select().from(providerKeys).where(eq(providerKeys.identityId, identityId));
    if (!key?.wrappedDataKey) return undefined;
    await tx.update(mnemonicRetrievals).set({ sealedMnemonic: null, retrievedAt: now }).where(eq(mnemonicRetrievals.identityId, identityId));
    return { sealedMnemonic: row.r.sealedMnemonic, kekId: key.kekId, wrappedDataKey: key.wrappedDataKey };
  });
}

/** Mnemonics past their expiry are cleared (the retrieval row stays, answering 404). */
export async function clearExpiredMnemonics(db: Db, now: Date): Promise<number> {
  const rows = await db
    .update(mnemonicRetrievals)
    .set({ sealedMnemonic: null })
    .where(and(sql`${mnemonicRetrievals.expiresAt} <= ${now.toISOString()}`, sql`${mnemonicRetrievals.sealedMnemonic} is not null`))
    .returning({ id: mnemonicRetrievals.identityId });
  return rows.length;
}

export async function setProviderPolicy(db: Db, orgId: string, identityId: string, policy: Record<string, unknown>) {
  const [row] = await db
    .update(identities)
    .set({ providerPolicy: policy, updatedAt: new Date() })
    .where(and(eq(identities.orgId, orgId), eq(identities.id, identityId)))
    .returning();
  return row;
}

/**
 * The held key is destroyed (its sealed forms erased) and the identity becomes external-signing with the key that
 * replaced it on the key page.
 */
export async function destroyProviderKey(db: Db, identityId: string, newPublicKey: string, newPublicKeyHash: string): Promise<void> {
  await db.transaction(async (tx) => {
    const now = new Date();
    await tx
      .update(providerKeys)
      .set({ wrappedDataKey: null, sealedKey: null, destroyedAt: now })
      .where(and(eq(providerKeys.identityId, identityId), isNull(providerKeys.destroyedAt)));
    await tx.update(mnemonicRetrievals).set({ sealedMnemonic: null }).where(eq(mnemonicRetrievals.identityId, identityId));
    await tx
      .update(identities)
      .set({ signingMode: 'external', publicKey: newPublicKey, publicKeyHash: newPublicKeyHash, updatedAt: now })
      .where(eq(identities.id, identityId));
  });
}

export type SpendRefusal = { chain: string; spent: bigint; requested: bigint; limit: bigint };

/**
 * Records the native value an intent spends per chain if, with what the identity spent on that chain in the 24
 * hours before `now`, it stays within `limit`; else nothing is written and the first chain over is answered. The
 * identity row is locked for the check and the write, so concurrent prepares are counted one after another (exact).
 */
export async function reserveSpend(
  db: Db,
  p: { identityId: string; intentId: string; values: Map<string, bigint>; limit: bigint | null; now: Date },
): Promise<SpendRefusal | undefined> {
  return db.transaction(async (tx) => {
    await tx.select({ id: identities.id }).from(identities).where(eq(identities.id, p.identityId)).for('update');
    const since = new Date(p.now.getTime() - 24 * 3600 * 1000);
    for (const [chain, value] of p.values) {
      if (p.limit === null) break;
      const [{ spent }] = await tx
        .select({ spent: sql<string>`coalesce(sum(${providerSpends.value}), 0)::text` })
        .from(providerSpends)
        .where(and(eq(providerSpends.identityId, p.identityId), eq(providerSpends.chain, chain), gt(providerSpends.createdAt, since)));
      if (BigInt(spent) + value > p.limit) return { chain, spent: BigInt(spent), requested: value, limit: p.limit };
    }
    const rows = [...p.values].map(([chain, value]) => ({ identityId: p.identityId, intentId: p.intentId, chain, value: value.toString(), createdAt: p.now }));
    if (rows.length) await tx.insert(providerSpends).values(rows);
    return undefined;
  });
}

/** An intent that expired unsigned spends nothing. */
export async function releaseSpend(db: Db, intentId: string): Promise<void> {
  await db.delete(providerSpends).where(eq(providerSpends.intentId, intentId));
}
