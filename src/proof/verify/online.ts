/**
 * The public cross-checks: with the ledger network's API, the intent's and each result's ledger transaction are
 * delivered there with the bundle's hash and principal; with a chain's RPC, the chain id, each block with its hash
 * at its number, the anchor proven on chain, each leg's leaf used.
 */
import { getAddress, numberToHex, type Hex } from 'viem';
import { readAnchorState } from '../../chain/anchor.js';
import { createChainClients } from '../../chain/clients.js';
import { createLedgerClient } from '../../ledger/client.js';
import { ensure, eq, index, int, same, type VerifyContext } from './checks.js';

/** Every intent and result transaction delivered on the ledger network at `ledgerUrl`. */
export async function verifyOnLedger(ctx: VerifyContext, ledgerUrl: string): Promise<void> {
  const { b, asyncCheck } = ctx;
  const L = b.ledger;
  const ledger = createLedgerClient({ url: ledgerUrl, timeoutMs: 10_000 });
  const delivered = async (txId: string, txHash: string, principal: string, what: string) => {
    const st = await ledger.getTransaction(txId);
    ensure(st.delivered, `${what} ${txId} is ${st.status} on the ledger, not delivered`);
    eq(`0x${st.txHash.replace(/^0x/, '')}`, `0x${txHash.replace(/^0x/, '')}`, `${what} hash on the ledger`);
    ensure(same(st.principal, principal), `${what} was delivered to ${st.principal}, not ${principal}`);
    return `${what} ${txId} delivered to ${st.principal}`;
  };
  await asyncCheck('ledger_rpc.intent', () => delivered(L.tx_id, L.tx_hash, b.intent.data_account, 'intent transaction'));
  for (const c of Array.isArray(b.chains) ? b.chains : []) {
    for (const l of Array.isArray(c?.legs) ? c.legs : []) {
      await asyncCheck(`ledger_rpc.result[${c.chain}.${l.leg_id}]`, () =>
        delivered(l.result.tx_id, l.result.tx_hash, l.result.results_account, 'proof_result transaction'),
      );
    }
  }
}

/** Each chain named in `rpc` (chain name -> JSON-RPC URL) against the bundle's chain of that name. */
export async function verifyOnChains(ctx: VerifyContext, rpc: Record<string, string>): Promise<void> {
  const { b, checks, asyncCheck } = ctx;
  for (const [name, url] of Object.entries(rpc)) {
    const c = Array.isArray(b.chains) ? b.chains.find((x) => x.chain === name) : undefined;
    const R = `rpc[${name}]`;
    if (!c) {
      checks.push({ name: R, ok: false, detail: `the bundle has no chain ${name}` });
      continue;
    }
    const clients = createChainClients({ rpcUrl: url, chainId: c.evm_chain_id, name });
    await asyncCheck(`${R}.chain_id`, async () => {
      const id = await clients.public.getChainId();
      ensure(id === c.evm_chain_id, `RPC serves chain id ${id}, the bundle says ${c.evm_chain_id}`);
      return `chain id ${id}`;
    });
    await asyncCheck(`${R}.blocks`, async () => {
      const txs = [c.create_anchor, c.prove, ...c.legs.map((l) => l.execution)];
      for (const t of txs) {
        const blk = (await clients.public.request({
          method: 'eth_getBlockByNumber',
          params: [numberToHex(int(t.block.number, 'block.number')), false],
        } as never)) as { hash?: Hex } | null;
        ensure(blk?.hash, `block ${t.block.number} not found`);
        eq(blk.hash, t.block.hash, `block ${t.block.number} hash on chain`);
      }
      return `${txs.length} block(s) found with the bundle's hashes`;
    });
    await asyncCheck(`${R}.anchor`, async () => {
      const s = await readAnchorState(clients, getAddress(c.proof_anchor), c.anchor.anchor_id);
      ensure(s.status === 'proven', `anchor ${c.anchor.anchor_id} is ${s.status} on chain, not proven`);
      ensure(s.leafCount === BigInt(c.anchor.leaf_count), `anchor leaf count on chain ${s.leafCount} != ${c.anchor.leaf_count}`);
      for (const l of c.legs) {
        const i = index(l.leaf_index, 'leaf_index');
        ensure((s.usedBitmap >> BigInt(i)) & 1n, `leaf ${i} (${l.leg_id}) is not used on chain`);
      }
      return `anchor proven; leaves ${c.legs.map((l) => l.leaf_index).join(', ')} used`;
    });
  }
}
