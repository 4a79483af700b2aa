/**
 * Changing an identity after creation, the use case behind PATCH /v1/identity/{id}:
 *   public_key    supplies the key of a hash-only identity (the identity service's repair);
 *   link_chains   deploys the identity's AbstractAccount on more chains, at the address it has everywhere (CREATE2
 *                 through each chain's AccountFactory, as provisioning does): one workflow
 *                 `identity-<id>-link-<chain>` per chain not linked yet. The chains join `requested_chains`; the
 *                 ones without an account yet are the identity view's `linking_chains`.
 * Everything is checked before anything changes: the fields (400), then the identity's state (409). Linking charges
 * the organization nothing: no credits, no quota slot (the gas is the gateway's relayer's, as in provisioning).
 */
import type { IdentityRow } from '../db/identities.js';
import { addRequestedChains, removeUnlinkedChain } from '../db/identity-links.js';
import { startLinkChainWorkflowOrCompensate, linkChainWorkflowId } from '../temporal/identities.js';
import type { Caller, ServiceDeps } from './deps.js';
import { ApiError } from './errors.js';
import { validateChains, type IdentityService, type IdentityWithAccounts } from './identities.js';
import { findOrgIdentity } from './identity-access.js';
import { setPolicy, switchToExternal } from './provider-switch.js';

/** The fields PATCH /v1/identity/{id} takes; at least one must be sent. */
export const PATCH_IDENTITY_FIELDS = ['public_key', 'link_chains', 'provider_policy'] as const;

export interface PatchIdentityRequest {
  public_key?: string;
  link_chains?: string[];
  provider_policy?: unknown;
}

export interface PatchIdentityResult extends IdentityWithAccounts {
  /** the chains whose deployment runs after this request (started by it, or already running); empty: nothing started */
  linking: string[];
  /** a provider identity's switch to external signing: the governance operation that replaces the held key */
  keySwitch?: { governance_op_id: string; status: string; status_url: string };
}

const notActive = (row: IdentityRow) =>
  new ApiError(409, 'IDENTITY_NOT_ACTIVE', `link_chains: the identity is ${row.status}; chains can be linked to an active identity only`, {
    field: 'link_chains',
    status: row.status,
    identity_id: row.id,
  });

export type IdentityChainService = ReturnType<typeof createIdentityChainService>;

export function createIdentityChainService(deps: ServiceDeps, identities: Pick<IdentityService, 'repair' | 'withAccounts'>) {
  const db = deps.database.db;

  /** The checked chains to link (none when the field is absent); 400s name `link_chains`, 409 when not active. */
  function chainsToCheck(row: IdentityRow, body: PatchIdentityRequest): string[] {
    if (body.link_chains === undefined) return [];
    if (body.link_chains.length === 0) {
      throw new ApiError(400, 'VALIDATION_ERROR', 'link_chains: name at least one chain (GET /v1/chains lists them)', { field: 'link_chains' });
    }
    const chains = validateChains(deps, body.link_chains, 'link_chains');
    if (row.status !== 'active') throw notActive(row);
    return chains;
  }

  /** Start the link of each chain; a start that fails takes its chain off again (503 once all were tried). */
  async function startLinks(caller: Caller, row: IdentityRow, chains: string[], expectedAddress: string | null) {
    const taskQueue = deps.config.temporal.taskQueue;
    const started = await Promise.allSettled(
      chains.map((chain) =>
        startLinkChainWorkflowOrCompensate(deps.temporal, taskQueue, row, { chain, expectedAddress }, async (err) => {
          caller.log.error('chain link workflow could not be started', { err, identity_id: row.id, chain });
          await removeUnlinkedChain(db, row.id, chain);
          throw new ApiError(503, 'SERVICE_UNAVAILABLE', `Linking ${chain} could not be started; retry shortly`, undefined, { 'Retry-After': '5' });
        }),
      ),
    );
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    for (const chain of chains) caller.log.info('chain link accepted', { identity_id: row.id, chain, workflow_id: linkChainWorkflowId(row.id, chain) });
  }

  /**
   * Apply a PATCH: the key (when sent), then the links (when sent). Chains the identity has an account on are
   * left alone; `linking` lists the others, whose workflows run (a second request for one finds it running).
   */
  async function patch(caller: Caller, id: string, body: PatchIdentityRequest, opts: { providerManage?: boolean } = {}): Promise<PatchIdentityResult> {
    const row = await findOrgIdentity(db, caller.orgId, id, { field: 'id' });
    if (body.public_key === undefined && body.link_chains === undefined && body.provider_policy === undefined) {
      throw new ApiError(
        400,
        'VALIDATION_ERROR',
        "body: send public_key (the key of a hash-only identity, or the key replacing a provider identity's held key), link_chains (chains to deploy its account on), provider_policy, or several",
        { field: 'body', accepted_fields: [...PATCH_IDENTITY_FIELDS] },
      );
    }
    const chains = chainsToCheck(row, body);
    if (body.provider_policy !== undefined) await setPolicy(deps, caller, row, body.provider_policy, opts.providerManage === true);
    let keySwitch: PatchIdentityResult['keySwitch'];
    if (body.public_key !== undefined && row.signingMode === 'provider')
      keySwitch = await switchToExternal(deps, caller, row, body.public_key, opts.providerManage === true);
    else if (body.public_key !== undefined) await identities.repair(caller, row.id, body.public_key);

    const [current] = await identities.withAccounts([row]);
    const linked = new Set(current!.accounts.map((a) => a.chain));
    const toLink = chains.filter((c) => !linked.has(c));
    if (toLink.length) {
      const updated = await addRequestedChains(db, caller.orgId, row.id, toLink);
      if (!updated) throw notActive(await findOrgIdentity(db, caller.orgId, row.id, { field: 'id' }));
      await startLinks(caller, updated, toLink, current!.accounts[0]?.address ?? null);
    }
    const [out] = await identities.withAccounts([await findOrgIdentity(db, caller.orgId, row.id, { field: 'id' })]);
    return { ...out!, linking: toLink, ...(keySwitch ? { keySwitch } : {}) };
  }

  return { patch };
}
