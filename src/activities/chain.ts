/**
 * Chain activities of identity provisioning: the identity's AbstractAccount on one EVM chain, deployed by the
 * relayer through the AccountFactory (CREATE2, salt keccak256(adiUrl): the same address on every chain).
 *
 * ensureAbstractAccount looks first: an account already deployed (by an earlier attempt whose result was lost)
 * is recorded with the deployment transaction found in the factory's AccountCreated log; only a missing one is
 * deployed. CREATE2 can never make two accounts for one ADI, so a crash at any point cannot duplicate it.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Address, Hex } from 'viem';
import { accountFactoryAbi } from '../chain/abi/index.js';
import { findAccountDeploymentTx, getAccountAddress } from '../chain/account.js';
import { waitForReceipt, type ChainClients } from '../chain/clients.js';
import type { Db } from '../db/client.js';
import { upsertChainAccount } from '../db/identities.js';
import { createChainAccess, type ChainAccess, type ChainAccessDeps } from './chain-access.js';
import { beat, heartbeating } from './heartbeat.js';

export interface ChainActivityDeps extends ChainAccessDeps {
  db: Db;
  /** shared writers (one nonce manager per chain and process); built from the other deps when absent */
  access?: ChainAccess;
  /** give up waiting for one receipt after this long (the activity is retried), default 120 s */
  receiptTimeoutMs?: number;
}

export interface AccountInput {
  identityId: string;
  adiUrl: string;
  chain: string;
}

export interface ChainAccountResult {
  chain: string;
  chainId: string;
  address: Address;
  deploymentTx: Hex | null;
  /** false when the account was already on chain */
  deployed: boolean;
}

export function createChainActivities(deps: ChainActivityDeps) {
  const pollMs = deps.pollMs ?? 50;
  const receiptTimeoutMs = deps.receiptTimeoutMs ?? 120_000;
  const { entry, writer, reader } = deps.access ?? createChainAccess(deps);

  async function deployedCode(c: ChainClients, address: Address): Promise<boolean> {
    const code = await c.public.getCode({ address, blockTag: 'latest' });
    return !!code && code !== '0x';
  }

  const waitReceipt = (c: ChainClients, hash: Hex) => heartbeating(waitForReceipt(c, hash, { timeoutMs: receiptTimeoutMs, pollMs }));

  return {
    async ensureAbstractAccount(i: AccountInput): Promise<ChainAccountResult> {
      const e = entry(i.chain);
      const r = reader(i.chain);
      const factory = e.contracts.accountFactory as Address;
      if (!(await deployedCode(r, factory))) {
        throw ApplicationFailure.nonRetryable(`no AccountFactory at ${factory} on ${i.chain}`, 'ChainNotConfigured');
      }
      const address = await getAccountAddress(r, factory, i.adiUrl);
      const record = async (tx: Hex | null, deployed: boolean): Promise<ChainAccountResult> => {
        await upsertChainAccount(deps.db, { identityId: i.identityId, chain: i.chain, chainId: BigInt(e.chainId), address, deploymentTx: tx });
        return { chain: i.chain, chainId: String(e.chainId), address, deploymentTx: tx, deployed };
      };
      /** deployed before (or by a concurrent attempt): its deployment transaction as found on chain */
      const existing = async () => record((await findAccountDeploymentTx(r, factory, address)) ?? null, false);
      if (await deployedCode(r, address)) return existing();

      const w = writer(i.chain);
      let hash: Hex;
      try {
        hash = await w.wallet.writeContract({ address: factory, abi: accountFactoryAbi, functionName: 'createAccount', args: [i.adiUrl] });
      } catch (err) {
        // estimation reverts when a concurrent attempt deployed it in the meantime
        if (await deployedCode(r, address)) return existing();
        throw err;
      }
      beat();
      const receipt = await waitReceipt(w, hash);
      if (receipt.status !== 'success') {
        if (await deployedCode(r, address)) return existing();
        throw new Error(`createAccount(${i.adiUrl}) reverted on ${i.chain} (tx ${hash})`);
      }
      return record(hash, true);
    },
  };
}
export type ChainActivities = ReturnType<typeof createChainActivities>;
