/**
 * How other routes (transactions, governance, signing) reach an identity:
 *
 *   const identity = await findOrgIdentity(db, auth.orgId, body.identity_id);   // 404 across organizations
 *   requireSigningKey(identity);    // 400 "Identity has no public key configured" for hash-only identities
 *   requireActive(identity);        // 409 while creating / after failure or retirement
 */
import type { Db } from '../db/client.js';
import { getOrgIdentity, type IdentityRow } from '../db/identities.js';
import { ApiError } from './errors.js';

export const NO_PUBLIC_KEY_MESSAGE = 'Identity has no public key configured';

/** The identity of `orgId` by id (UUID) or ADI URL; 404 IDENTITY_NOT_FOUND otherwise (also for other organizations' identities). */
export async function findOrgIdentity(db: Db, orgId: string, idOrAdiUrl: string): Promise<IdentityRow> {
  const row = await getOrgIdentity(db, orgId, idOrAdiUrl);
  if (!row) throw new ApiError(404, 'IDENTITY_NOT_FOUND', 'Identity not found', { field: 'identity' });
  return row;
}

/** Spec §7: an identity created with only public_key_hash cannot sign. Returns the hex public key. */
export function requireSigningKey(identity: Pick<IdentityRow, 'publicKey'>): string {
  if (!identity.publicKey) {
    throw new ApiError(400, 'IDENTITY_NO_PUBLIC_KEY', NO_PUBLIC_KEY_MESSAGE, {
      hint: 'supply the key with PATCH /v1/identity/{id} { public_key } (it must hash to public_key_hash)',
    });
  }
  return identity.publicKey;
}

/** The identity must be provisioned (status active) for ledger or chain operations. */
export function requireActive(identity: Pick<IdentityRow, 'id' | 'status'>): void {
  if (identity.status !== 'active') {
    throw new ApiError(409, 'IDENTITY_NOT_ACTIVE', `Identity is ${identity.status}, not active`, { status: identity.status, identity_id: identity.id });
  }
}
