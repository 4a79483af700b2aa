/**
 * A prepared external signature: what the signer signs (hash_to_sign over the signature metadata and the
 * transaction), built once here for both a new transaction and a vote on a pending one; and its stored form, which a
 * flow persists between prepare and submit and revives with both hashes checked.
 */
import { core } from 'accumulate.js';
import { LedgerInputError } from './errors.js';
import { metadataHash, signatureMetadata, toHex, transactionHash, type Vote } from './signing.js';
import type { PreparedSignature } from './types.js';

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
