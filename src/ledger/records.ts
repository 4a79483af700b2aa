/**
 * The node's answers as the gateway reads them: transaction ids (acc://<hash>@<principal>), a message record as a
 * TxStatus with its signatures and authority votes, and a data entry.
 */
import { LedgerInputError, STATUS } from './errors.js';
import type { Vote } from './signing.js';
import type { AuthorityVoteInfo, DataEntryInfo, SignatureInfo, TxStatus } from './types.js';
import { parseAccUrl } from './urls.js';

const VOTES: Record<string, Vote> = { accept: 'accept', reject: 'reject', abstain: 'abstain', '0': 'accept', '1': 'reject', '2': 'abstain' };

export function txIdOf(hash: string, principal: string): string {
  const p = parseAccUrl(principal, 'principal').toString();
  return `acc://${hash}@${p.slice('acc://'.length)}`;
}

export function splitTxId(s: string, principal?: string): { hash: string; txId: string } {
  const m = /^(?:acc:\/\/)?([0-9a-fA-F]{64})(?:@(.+))?$/.exec(s.trim());
  if (!m) throw new LedgerInputError(`txId: expected acc://<64 hex>@<account> or a 64-hex hash, got ${JSON.stringify(s)}`, 'txId');
  const hash = m[1]!.toLowerCase();
  if (m[2]) return { hash, txId: `acc://${hash}@${m[2]}` };
  if (!principal) throw new LedgerInputError('txId: a bare hash needs the principal account', 'txId');
  return { hash, txId: txIdOf(hash, principal) };
}

function parseSignature(sig: any, id?: string): SignatureInfo | undefined {
  if (!sig || typeof sig !== 'object') return undefined;
  const delegators: string[] = [];
  let s = sig;
  while (s?.type === 'delegated') {
    delegators.unshift(String(s.delegator));
    s = s.signature;
  }
  // delegators is innermost-first (same order as signatureMetadata)
  if (!s || (s.type !== 'ed25519' && s.type !== 'legacyED25519' && s.type !== 'rcd1')) return undefined;
  return {
    type: s.type,
    signer: String(s.signer),
    publicKey: s.publicKey,
    signerVersion: s.signerVersion,
    timestamp: s.timestamp,
    vote: VOTES[String(s.vote ?? 'accept')] ?? 'accept',
    delegators,
    id,
    raw: sig,
  };
}

export function parseMessageRecord(r: any): TxStatus {
  const txn = r?.message?.transaction;
  const hash =
    String(r?.id ?? '')
      .match(/[0-9a-fA-F]{64}/)?.[0]
      ?.toLowerCase() ?? '';
  const status = String(r?.status ?? 'unknown');
  const statusNo = typeof r?.statusNo === 'number' ? r.statusNo : (STATUS as Record<string, number>)[status];
  const signatures: SignatureInfo[] = [];
  const authorityVotes: AuthorityVoteInfo[] = [];
  for (const set of r?.signatures?.records ?? []) {
    for (const m of set?.signatures?.records ?? []) {
      const sig = m?.message?.signature;
      if (m?.message?.type !== 'signature' || !sig) continue;
      if (sig.type === 'authority') {
        authorityVotes.push({ authority: String(sig.authority), origin: sig.origin, vote: VOTES[String(sig.vote ?? 'accept')] ?? 'accept' });
      } else {
        const info = parseSignature(sig, m.id);
        if (info) signatures.push(info);
      }
    }
  }
  return {
    txId: String(r?.id ?? ''),
    txHash: hash,
    principal: String(txn?.header?.principal ?? ''),
    type: String(txn?.body?.type ?? r?.message?.type ?? 'unknown'),
    status,
    statusNo,
    error: r?.error ? { message: String(r.error.message ?? ''), code: String(r.error.code ?? status) } : undefined,
    result: r?.result,
    received: r?.received,
    produced: (r?.produced?.records ?? []).map((x: any) => String(x?.value ?? '')).filter((x: string) => x),
    delivered: status === 'delivered',
    pending: status === 'pending' || status === 'remote',
    failed: (statusNo ?? 0) >= 400,
    transaction: txn,
    signatures,
    authorityVotes,
  };
}

/** A data entry record of a `data` query. */
export function dataEntry(rec: any): DataEntryInfo {
  const txn = rec?.value?.message?.transaction;
  const parts: string[] = (txn?.body?.entry?.data ?? []).map((d: any) => String(d ?? ''));
  const txHash = String(rec?.value?.id ?? '')
    .match(/[0-9a-fA-F]{64}/)?.[0]
    ?.toLowerCase();
  return { index: Number(rec?.index ?? 0), entryHash: String(rec?.entry ?? ''), txHash, data: parts };
}
