/**
 * The calling key as it sees itself (GET /v1/me): the key's own settings and its organization's limits. Never the
 * secret: only its listing prefix; the raw key is not stored at all.
 */
import { getApiKey } from '../db/api-keys.js';
import { getOrganization } from '../db/organizations.js';
import type { ServiceDeps } from './deps.js';
import { ApiError } from './errors.js';

export async function describeCallerKey(deps: Pick<ServiceDeps, 'database'>, orgId: string, keyId: string) {
  const db = deps.database.db;
  const [key, org] = await Promise.all([getApiKey(db, orgId, keyId), getOrganization(db, orgId)]);
  // the middleware found both a moment ago; gone now means revoked and deleted in between
  if (!key) throw new ApiError(401, 'INVALID_API_KEY', 'Invalid API key');
  if (!org) throw new ApiError(403, 'ORG_NOT_FOUND', 'The API key belongs to no organization');
  return {
    id: key.id,
    name: key.name,
    prefix: key.keyPrefix,
    org_id: key.orgId,
    permissions: key.permissions,
    is_admin: key.isAdmin,
    rate_limit_rpm: key.rateLimitRpm,
    created_at: key.createdAt.toISOString(),
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    organization: {
      id: org.id,
      name: org.name,
      identity_quota: org.identityQuota,
      credit_grant: Number(org.creditGrant),
      credits_remaining: Number(org.creditGrant - org.creditsUsed),
      created_at: org.createdAt.toISOString(),
    },
  };
}
