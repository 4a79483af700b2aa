/**
 * A prepared external signature: what the signer signs (hash_to_sign over the signature metadata and the
 * transaction). Prepared here for a new transaction or a vote on a pending one (verified against its hash), with the
 * signer's state read from the ledger and a fresh timestamp; the object built once for both; and its stored form,
 * which a flow persists between prepare and submit and revives with both hashes checked.
 */
import { core } from 'accumulate.js';
import { sha256 } from './sha256.js';
import { LedgerError, LedgerInputError, LedgerTransportError } from './errors.js';
import { splitTxId, txIdOf } from './records.js';
import { buildTransaction, bytesArg, hashToSign, metadataHash, prepareSigning, signatureMetadata, toHex, transactionHash, type Vote } from './signing.js';
import type { LedgerClient, PrepareExternalArgs, PreparedSignature, TxStatus } from './types.js';
import { liteIdentityUrl, normUrl, parseAccUrl } from './urls.js';

/**
 * The PreparedSignature of `metadata` over a transaction: `transaction` for a new one (undefined when voting on an
 * existing one), its hash and id, the metadata hash and hash_to_sign as computed, and the signer's fields.
 */
export function preparedSignature(p: {
  transaction?: core.Transaction;
  metadata: PreparedSignature['metadata'];
  metadataHash: Uint8Array;
  hashToSign: Uint8Array;
  txHash: string;
  txId: string;
  signer: { signerUrl: string; signerVersion: number; timestamp: number; publicKey: Uint8Array; vote: Vote; delegators?: string[] };
  initiator: boolean;
}): PreparedSignature {
  return {
    ...(p.transaction ? { transaction: p.transaction, transactionJson: p.transaction.asObject() } : {}),
    metadata: p.metadata,
    metadataJson: p.metadata.asObject(),
    metadataHash: toHex(p.metadataHash),
    txHash: p.txHash,
    txId: p.txId,
    hashToSign: toHex(p.hashToSign),
    signerUrl: p.signer.signerUrl,
    signerVersion: p.signer.signerVersion,
    timestamp: p.signer.timestamp,
    publicKey: toHex(p.signer.publicKey),
    vote: p.signer.vote,
    delegators: p.signer.delegators ?? [],
    initiator: p.initiator,
  };
}

/** A PreparedSignature without its accumulate.js objects: what a flow persists between prepare and submit. */
export type StoredPreparedSignature = Omit<PreparedSignature, 'transaction' | 'metadata'>;

/** The JSON-safe part of a PreparedSignature (persist it; rebuild with revivePreparedSignature). */
export function storablePreparedSignature(p: PreparedSignature): StoredPreparedSignature {
  const { transaction: _t, metadata: _m, ...rest } = p;
  return JSON.parse(JSON.stringify(rest, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
}

/**
 * Rebuild a PreparedSignature from its stored form (signatureMetadata from the stored fields, the transaction from
 * transactionJson) and check that both still hash to what was signed, so a tampered or stale record is refused.
 */
export function revivePreparedSignature(s: StoredPreparedSignature): PreparedSignature {
  const metadata = signatureMetadata({
    publicKey: s.publicKey,
    signer: s.signerUrl,
    signerVersion: s.signerVersion,
    timestamp: s.timestamp,
    vote: s.vote,
    delegators: s.delegators,
  });
  if (toHex(metadataHash(metadata)) !== s.metadataHash) throw new LedgerInputError('prepared: signature metadata does not match its stored hash', 'prepared');
  let transaction: core.Transaction | undefined;
  if (s.transactionJson) {
    transaction = new core.Transaction(s.transactionJson);
    if (toHex(transactionHash(transaction)) !== s.txHash) throw new LedgerInputError('prepared: transaction does not match its stored hash', 'prepared');
  }
  return { ...s, transaction, metadata };
}

/**
 * A signer's state on the ledger (key page version, or 1 for a lite identity, and the key's lastUsedOn) and the
 * signature timestamps this client issues for its keys.
 */
function signerTimestamps(queryAccount: LedgerClient['queryAccount']) {
  const issued = new Map<string, number>();

  async function signerState(signerUrl: string, publicKey: Uint8Array): Promise<{ version: number; lastUsedOn: number }> {
    const a = await queryAccount(signerUrl);
    if (a.type === 'liteIdentity') {
      if (liteIdentityUrl(publicKey).toLowerCase() !== normUrl(signerUrl))
        throw new LedgerInputError(`publicKey: does not belong to lite identity ${signerUrl}`, 'publicKey');
      return { version: 1, lastUsedOn: Number(a.raw.lastUsedOn ?? 0) };
    }
    if (a.type !== 'keyPage') throw new LedgerInputError(`signerUrl: ${a.url} is a ${a.type}, not a key page or lite identity`, 'signerUrl');
    const pkh = toHex(sha256(publicKey));
    const entry = (a.raw.keys ?? []).find((k: any) => String(k.publicKeyHash ?? '').toLowerCase() === pkh);
    if (!entry) throw new LedgerInputError(`publicKey: not a key of ${a.url}`, 'publicKey');
    return { version: Number(a.raw.version ?? 1), lastUsedOn: Number(entry.lastUsedOn ?? 0) };
  }

  /**
   * A signature timestamp in milliseconds, as accumulate.js and the Go SDK use (Date.now(), UnixMilli), so that a
   * key the gateway signed with keeps working with the standard tools. Never at or below the key's lastUsedOn (a
   * key already used with a larger timestamp, e.g. microseconds, continues from there) nor at or below what this
   * client issued for the key before (two signatures in one millisecond still increase).
   */
  function issue(signerUrl: string, pk: Uint8Array, lastUsedOn: number): number {
    const k = `${normUrl(signerUrl)}|${toHex(pk)}`;
    const ts = Math.max(lastUsedOn + 1, Date.now(), (issued.get(k) ?? 0) + 1);
    issued.set(k, ts);
    return ts;
  }

  async function nextTimestamp(signerUrl: string, publicKey: Uint8Array | string): Promise<number> {
    const pk = bytesArg(publicKey, 'publicKey', 32);
    const st = await signerState(signerUrl, pk);
    return issue(signerUrl, pk, st.lastUsedOn);
  }

  return { signerState, issue, nextTimestamp };
}

/**
 * Preparing external signatures: the signer's state read from the ledger, a fresh timestamp issued, and the
 * signature metadata over a new transaction or over a pending one verified against its hash here.
 */
export function signaturePreparation(
  endpoint: string,
  reads: Pick<LedgerClient, 'queryAccount' | 'getTransaction'>,
): Pick<LedgerClient, 'prepareExternalSignature' | 'nextTimestamp'> {
  const { getTransaction } = reads;
  const { signerState, issue, nextTimestamp } = signerTimestamps(reads.queryAccount);

  /**
   * The transaction to vote on, as the node answered for it, once its body hashes to the requested hash: what a
   * signature commits to is computed here, never taken from the node. Refused when the answer is another
   * transaction, carries no full transaction (a remote reference), or the transaction is already final.
   */
  async function verifiedTransaction(pendingTx: string): Promise<TxStatus> {
    const { hash: want, txId } = splitTxId(pendingTx);
    const existing = await getTransaction(txId);
    const untrusted = (why: string) => new LedgerTransportError(`ledger ${endpoint}: the answer for transaction ${txId} ${why}; refusing to sign it`);
    if (existing.txHash !== want) throw untrusted(`names another transaction (${existing.txHash || 'none'})`);
    let got: string;
    try {
      const t = existing.transaction;
      if (!t?.header || !t?.body || t.body.type === 'remote') throw new Error('no full transaction');
      got = toHex(new core.Transaction(t).hash());
    } catch (e) {
      throw untrusted(`does not carry a transaction that can be hashed (${(e as Error).message})`);
    }
    if (got !== want) throw untrusted(`carries a transaction that hashes to ${got}`);
    if (existing.delivered || existing.failed) throw new LedgerError(`transaction ${existing.txId} is no longer pending (${existing.status})`, 'notAllowed');
    return existing;
  }

  async function prepareExternalSignature(a: PrepareExternalArgs): Promise<PreparedSignature> {
    const pk = bytesArg(a.publicKey, 'publicKey', 32);
    const signerUrl = parseAccUrl(a.signerUrl, 'signerUrl').toString();
    const st = await signerState(signerUrl, pk);
    const vote = a.vote ?? 'accept';
    const signer = {
      signerUrl,
      signerVersion: a.signerVersion ?? st.version,
      timestamp: a.timestamp ?? issue(signerUrl, pk, st.lastUsedOn),
      publicKey: pk,
      vote,
      delegators: a.delegators,
    };
    const metadata = signatureMetadata({
      publicKey: pk,
      signer: signerUrl,
      signerVersion: signer.signerVersion,
      timestamp: signer.timestamp,
      vote,
      delegators: a.delegators,
    });
    if (a.pendingTx) {
      if (a.body || a.principal) throw new LedgerInputError('pendingTx: give either pendingTx or principal+body', 'pendingTx');
      const existing = await verifiedTransaction(a.pendingTx);
      const md = metadataHash(metadata);
      const hashToSignBytes = hashToSign(md, Uint8Array.from(Buffer.from(existing.txHash, 'hex')));
      return preparedSignature({
        metadata,
        metadataHash: md,
        hashToSign: hashToSignBytes,
        txHash: existing.txHash,
        txId: existing.txId,
        signer,
        initiator: false,
      });
    }
    if (!a.principal || !a.body) throw new LedgerInputError('principal and body are required for a new transaction', 'body');
    if (vote !== 'accept') throw new LedgerInputError('vote: the initiator of a new transaction must accept', 'vote');
    const transaction = buildTransaction(a.principal, a.body, a.txOptions);
    const p = prepareSigning(transaction, metadata, true);
    const txHash = toHex(p.txHash);
    return preparedSignature({
      transaction,
      metadata,
      metadataHash: p.metadataHash,
      hashToSign: p.hashToSign,
      txHash,
      txId: txIdOf(txHash, transaction.header!.principal!.toString()),
      signer,
      initiator: p.initiator,
    });
  }

  return { prepareExternalSignature, nextTimestamp };
}
