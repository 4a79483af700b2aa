/**
 * How the use cases (transactions, governance, signing) reach an identity:
 *
 *   const identity = await findOrgIdentity(db, auth.orgId, body.identity_id, { field: 'identity_id' });   // 400 not a UUID; 404 across organizations
 *   requireSigningKey(identity);    // 400 "Identity has no public key configured" for hash-only identities
 *   requireActive(identity);        // 409 while creating / after failure or retirement
 */
import type { Db } from '../db/client.js';
import { getOrgIdentity, getOrgIdentityWithAccounts, type ChainAccountRef, type IdentityRow } from '../db/identities.js';
import { ApiError } from './errors.js';
import { UUID } from '../db/ids.js';

export const NO_PUBLIC_KEY_MESSAGE = 'Identity has no public key configured';

export interface IdentityRef {
  /** the request field that carried the value, named in the 400 and 404 (`identity_id`, `identity`, `id`) */
  field: string;
  /** true where the field also takes the identity's ADI URL (`acc://…`) */
  adiUrl?: boolean;
}

/**
 * The identity of `orgId` named by `value` in request field `ref.field`: its id (UUID), or where `ref.adiUrl` its ADI
 * URL. A value of the wrong form is a 400 VALIDATION_ERROR naming the field; a well-formed one that names no identity
 * of the organization (also another organization's) is a 404 IDENTITY_NOT_FOUND naming it.
 */
export async function findOrgIdentity(db: Db, orgId: string, value: string, ref: IdentityRef): Promise<IdentityRow> {
  const { field } = ref;
  if (!UUID.test(value) && !(ref.adiUrl && /^acc:\/\/\S/i.test(value.trim()))) {
    const expected = ref.adiUrl ? 'an identity id (UUID) or ADI URL (acc://…)' : 'an identity id (UUID)';
    throw new ApiError(400, 'VALIDATION_ERROR', `${field}: must be ${expected}`, { field });
  }
  const row = await getOrgIdentity(db, orgId, value);
  if (!row) throw new ApiError(404, 'IDENTITY_NOT_FOUND', 'Identity not found', { field });
  return row;
}

/** findOrgIdentity by id (a UUID) alone, with the identity's chain accounts read in the same query. */
export async function findOrgIdentityWithAccounts(
  db: Db,
  orgId: string,
  value: string,
  ref: Pick<IdentityRef, 'field'>,
): Promise<{ identity: IdentityRow; accounts: ChainAccountRef[] }> {
  const { field } = ref;
  if (!UUID.test(value)) throw new ApiError(400, 'VALIDATION_ERROR', `${field}: must be an identity id (UUID)`, { field });
  const found = await getOrgIdentityWithAccounts(db, orgId, value);
  if (!found) throw new ApiError(404, 'IDENTITY_NOT_FOUND', 'Identity not found', { field });
  return found;
}

/** An identity created with only public_key_hash cannot sign. Returns the hex public key. */
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
