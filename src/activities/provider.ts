/**
 * The provider signature: the gateway signs, with the key it holds for an identity, the hash that a prepared intent,
 * governance operation or sign request stored. The activity takes only the kind and the id: what to sign and with
 * which identity's key is read from the database, the key is unsealed here and used here, and only the signature
 * (public once submitted) and the public key leave it. Nothing secret is in the workflow's input, result or history.
 * A key still wrapped by an older KEK is wrapped again by the current one as it is used (rotation).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../db/client.js';
import { getGovernanceOp } from '../db/governance.js';
import { getIntent } from '../db/intents.js';
import { destroyProviderKey, getProviderKey, getSignRequestById, identitySigningMode, rewrapProviderKey } from '../db/provider.js';
import { publicKeyHashHex } from '../identity/keys.js';
import { kekRing, openPrivateKey, publicKeyOf, signHash, unwrapDataKey, wrapDataKey, type Kek } from '../identity/provider-keys.js';

export type ProviderSignKind = 'intent' | 'governance' | 'sign_request';

export interface ProviderSignInput {
  kind: ProviderSignKind;
  id: string;
}

export interface ProviderSignResult {
  signature: string;
  publicKey: string;
}

const refuse = (message: string) => ApplicationFailure.create({ type: 'ProviderKeyUnavailable', message, nonRetryable: true });

/** What a prepared row asks to be signed: the identity, the key it was prepared for and the hash. */
async function signingTarget(db: Db, i: ProviderSignInput): Promise<{ identityId: string; publicKey: string; hashToSign: string } | undefined> {
  if (i.kind === 'intent') {
    const row = await getIntent(db, i.id);
    return row && { identityId: row.identityId, publicKey: row.prepared.publicKey, hashToSign: row.prepared.hashToSign };
  }
  if (i.kind === 'governance') {
    const row = await getGovernanceOp(db, i.id);
    const p = row?.prepared as { publicKey?: string; hashToSign?: string } | undefined;
    return row && p?.publicKey && p.hashToSign ? { identityId: row.identityId, publicKey: p.publicKey, hashToSign: p.hashToSign } : undefined;
  }
  const row = await getSignRequestById(db, i.id);
  const p = row?.prepared as { publicKey?: string; hashToSign?: string } | undefined;
  return row?.identityId && p?.publicKey && p.hashToSign ? { identityId: row.identityId, publicKey: p.publicKey, hashToSign: p.hashToSign } : undefined;
}

export function createProviderActivities(deps: { db: Db; keks: Kek[] }) {
  const { db } = deps;
  return {
    async providerSign(i: ProviderSignInput): Promise<ProviderSignResult> {
      if (deps.keks.length === 0) throw refuse('provider signing is not configured on this worker (PROVIDER_KEKS)');
      const ring = kekRing(deps.keks);
      const target = await signingTarget(db, i);
      if (!target) throw refuse(`${i.kind} ${i.id} not found`);
      const mode = await identitySigningMode(db, target.identityId);
      const key = await getProviderKey(db, target.identityId);
      if (mode !== 'provider' || !key?.wrappedDataKey || !key.sealedKey) throw refuse('the identity has no key held by the gateway');
      if (key.publicKey !== target.publicKey.toLowerCase()) throw refuse('the signing data was prepared for a key the gateway does not hold');
      const dataKey = unwrapDataKey(ring, target.identityId, { kekId: key.kekId, wrapped: key.wrappedDataKey });
      const privateKey = openPrivateKey(dataKey, target.identityId, key.sealedKey);
      try {
        if (publicKeyOf(privateKey) !== key.publicKey) throw refuse('the held key does not match its public key');
        const signature = signHash(privateKey, target.hashToSign);
        if (key.kekId !== ring.current.id) {
          const w = wrapDataKey(ring, target.identityId, dataKey);
          await rewrapProviderKey(db, target.identityId, key.kekId, { kekId: w.kekId, wrappedDataKey: w.wrapped });
        }
        return { signature, publicKey: key.publicKey };
      } finally {
        privateKey.fill(0);
        dataKey.fill(0);
      }
    },

    /** The status of the governance operation that replaces the held key on the key page. */
    async keySwitchStatus(i: { opId: string }): Promise<string> {
      return (await getGovernanceOp(db, i.opId))?.status ?? 'missing';
    },

    /** The held key destroyed (sealed forms erased); the identity is external-signing with `publicKey`. Idempotent. */
    async retireProviderKey(i: { identityId: string; publicKey: string }): Promise<void> {
      await destroyProviderKey(db, i.identityId, i.publicKey, publicKeyHashHex(i.publicKey));
    },
  };
}
export type ProviderActivities = ReturnType<typeof createProviderActivities>;
