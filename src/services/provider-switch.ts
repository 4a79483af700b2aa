/**
 * PATCH /v1/identity/{id} for a provider-signing identity (scope provider:manage):
 *   provider_policy  the whole policy replaced (src/services/provider-policy.ts)
 *   public_key       provider → external: a governance operation on the key page (add the client's key, remove the
 *                    held one, one transaction) signed by the held key, then providerKeySwitchWorkflow destroys the
 *                    held key once the ledger executed it; until then the identity stays provider-signing
 */
import { ApiError } from './errors.js';
import type { IdentityRow } from '../db/identities.js';
import { setProviderPolicy } from '../db/provider.js';
import { ed25519PublicKeyProblem, publicKeyHashHex } from '../identity/keys.js';
import { providerKeySwitchRunning, startProviderKeySwitch } from '../temporal/provider.js';
import type { Caller, ServiceDeps } from './deps.js';
import { prepareGovernance } from './governance.js';
import { requireActive } from './identity-access.js';
import { requireProviderScope } from './provider.js';
import { parsePolicy } from './provider-policy.js';

const notProvider = (field: string) =>
  new ApiError(400, 'VALIDATION_ERROR', `${field}: the identity is external-signing; a provider policy applies only to provider-signing identities`, {
    field,
  });

/** The policy of a provider identity, replaced whole. */
export async function setPolicy(deps: ServiceDeps, caller: Caller, row: IdentityRow, raw: unknown, scoped: boolean): Promise<void> {
  requireProviderScope(scoped);
  if (row.signingMode !== 'provider') throw notProvider('provider_policy');
  const policy = parsePolicy(deps, raw);
  await setProviderPolicy(deps.database.db, caller.orgId, row.id, policy as unknown as Record<string, unknown>);
  caller.log.info('provider policy set', { identity_id: row.id });
}

/** Put the client's key on the page in place of the held key; the held key is destroyed once that has executed. */
export async function switchToExternal(
  deps: ServiceDeps,
  caller: Caller,
  row: IdentityRow,
  publicKey: string,
  scoped: boolean,
): Promise<{ governance_op_id: string; status: string; status_url: string }> {
  requireProviderScope(scoped);
  requireActive(row);
  const problem = ed25519PublicKeyProblem(publicKey);
  if (problem) throw new ApiError(400, 'VALIDATION_ERROR', `public_key: ${problem}`, { field: 'public_key' });
  const pk = publicKey.toLowerCase();
  if (pk === row.publicKey)
    throw new ApiError(400, 'VALIDATION_ERROR', 'public_key: that is the key the gateway holds; send the key that replaces it', { field: 'public_key' });
  if (await providerKeySwitchRunning(deps.temporal, row.id)) {
    throw new ApiError(409, 'KEY_SWITCH_IN_PROGRESS', 'public_key: a switch to external signing is already waiting for its governance operation', {
      field: 'public_key',
    });
  }
  const { op } = await prepareGovernance(
    deps,
    caller,
    {
      identity: row.id,
      operations: [
        { type: 'add_key', public_key_hash: publicKeyHashHex(pk) },
        { type: 'remove_key', public_key_hash: row.publicKeyHash },
      ],
    },
    { providerSigning: true },
  );
  await startProviderKeySwitch(deps.temporal, deps.config.temporal.taskQueue, caller.orgId, { identityId: row.id, opId: op.id, publicKey: pk });
  caller.log.info('provider key switch started', { identity_id: row.id, governance_op_id: op.id });
  return { governance_op_id: op.id, status: op.status, status_url: `/v1/governance/${op.id}` };
}
