/**
 * Activities of linking a chain to an active identity (src/workflows/link-chain.ts), beside the deployment itself
 * (ensureAbstractAccount in ./chain.ts): the factory's address for the ADI on the chain, and the link's outcome
 * recorded with its event. Each is idempotent, so a retry after a lost result records nothing twice.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Address } from 'viem';
import { getAccountAddress } from '../chain/account.js';
import type { Db } from '../db/client.js';
import { markChainLinkFailed, recordChainLinked } from '../db/identity-links.js';
import type { ChainAccess } from './chain-access.js';

export interface ChainLinkActivityDeps {
  db: Db;
  access: ChainAccess;
}

export function createChainLinkActivities(deps: ChainLinkActivityDeps) {
  return {
    /** AccountFactory.getAddress(adiUrl) on the chain: where the identity's account is (or would be) deployed there. */
    async abstractAccountAddress(i: { chain: string; adiUrl: string }): Promise<Address> {
      const e = deps.access.entry(i.chain);
      const r = deps.access.reader(i.chain);
      const factory = e.contracts.accountFactory as Address;
      const code = await r.public.getCode({ address: factory, blockTag: 'latest' });
      if (!code || code === '0x') throw ApplicationFailure.nonRetryable(`no AccountFactory at ${factory} on ${i.chain}`, 'ChainNotConfigured');
      return getAccountAddress(r, factory, i.adiUrl);
    },
    /** The `identity.chain_linked` event of an account that is recorded (once per identity and chain). */
    async recordChainLinked(identityId: string, chain: string): Promise<void> {
      await recordChainLinked(deps.db, identityId, chain);
    },
    /** The chain leaves the identity's requested chains (unless its account exists) with an `identity.chain_link_failed` event. */
    async markChainLinkFailed(identityId: string, chain: string, message: string): Promise<void> {
      await markChainLinkFailed(deps.db, identityId, chain, message);
    },
  };
}
export type ChainLinkActivities = ReturnType<typeof createChainLinkActivities>;
