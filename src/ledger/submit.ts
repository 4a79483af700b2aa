/**
 * The ledger client's writes: signatures prepared for an external signer (a new transaction, or a vote on a pending
 * one verified against its hash here), submitted once signed; held keys that sign and submit in one go; envelopes
 * submitted as they are; and the faucet of test networks. Signature timestamps are issued here, strictly
 * increasing per key.
 */
import { core, messaging } from 'accumulate.js';
import { sha256 } from 'accumulate.js/common';
import { LedgerError, LedgerInputError, LedgerSubmitError, LedgerTransportError } from './errors.js';
import { preparedSignature } from './prepared.js';
import { splitTxId, txIdOf } from './records.js';
import type { LedgerRpc } from './rpc.js';
import {
  attachSignature,
  buildTransaction,
  bytesArg,
  hashToSign,
  keyFromSeed,
  metadataHash,
  prepareSigning,
  signatureMetadata,
  signHash,
  toHex,
  verifyExternalSignature,
  verifySignature,
  type TxOptions,
  type Vote,
} from './signing.js';
import type { HeldKey, LedgerClient, PrepareExternalArgs, PreparedSignature, SubmitResult, TxStatus } from './types.js';
import { liteIdentityUrl, normUrl, parseAccUrl } from './urls.js';

export type LedgerSubmission = Pick<
  LedgerClient,
  'submit' | 'signAndSubmit' | 'signPending' | 'prepareExternalSignature' | 'submitExternalSignature' | 'nextTimestamp' | 'faucet'
>;

/**
 * Throws LedgerSubmitError when a node's submission answer (submit, faucet) refuses a message: `success` not true
 * (the Go node omits it when false) or the status marked failed. Code and message from the refused one's status.
 */
function throwIfRefused(list: any[], fallbackMessage: string): void {
  const bad = list.find((s) => s?.success !== true || s.status?.failed === true);
  if (!bad) return;
  const code = String(bad.status?.error?.code ?? bad.status?.code ?? 'unknownError');
  throw new LedgerSubmitError(String(bad.message ?? bad.status?.error?.message ?? fallbackMessage), code, list);
}

function innerKey(sig: any): core.ED25519Signature {
  let s = sig;
  while (s instanceof core.DelegatedSignature) s = s.signature;
  return s as core.ED25519Signature;
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

export function ledgerSubmission({ call, endpoint }: LedgerRpc, reads: Pick<LedgerClient, 'queryAccount' | 'getTransaction'>): LedgerSubmission {
  const { getTransaction } = reads;
  const { signerState, issue, nextTimestamp } = signerTimestamps(reads.queryAccount);

  async function submit(envelope: messaging.EnvelopeArgs | messaging.Envelope): Promise<SubmitResult> {
    const env = envelope instanceof messaging.Envelope ? envelope : new messaging.Envelope(envelope);
    const json = env.asObject();
    const res = await call<any[]>('submit', { envelope: json });
    const list = Array.isArray(res) ? res : [res];
    throwIfRefused(list, 'submission refused');
    const txn = env.transaction?.[0];
    let txHash: string;
    let txId: string;
    if (txn) {
      txHash = toHex(new core.Transaction(txn.asObject()).hash());
      txId = txIdOf(txHash, txn.header!.principal!.toString());
    } else {
      const first = list.find((s) => s?.status?.txID);
      const sig = env.signatures?.[0] as any;
      txHash = sig ? toHex(innerKey(sig).transactionHash ?? new Uint8Array()) : '';
      txId = first?.status?.txID ?? '';
    }
    return { txId, txHash, submissions: list };
  }

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

  async function submitExternalSignature(prepared: PreparedSignature, signature: Uint8Array | string): Promise<SubmitResult> {
    const sigBytes = bytesArg(signature, 'signature', 64);
    const v = verifyExternalSignature({ hashToSign: prepared.hashToSign, signature: sigBytes, publicKey: prepared.publicKey });
    if (!v.ok) {
      const e = new LedgerInputError(`signature: ${v.reason}`, 'signature');
      throw e;
    }
    const txHash = Uint8Array.from(Buffer.from(prepared.txHash, 'hex'));
    const sig = attachSignature(prepared.metadata, sigBytes, txHash);
    // server-side check from the envelope, exactly as the node will do it
    const check = verifySignature(sig, txHash);
    if (!check.ok) throw new LedgerInputError(`signature: ${check.reason}`, 'signature');
    const env = prepared.transaction
      ? new messaging.Envelope({ transaction: [new core.Transaction(prepared.transaction.asObject())], signatures: [sig] })
      : new messaging.Envelope({ signatures: [sig] });
    const r = await submit(env);
    return { ...r, txId: prepared.txId, txHash: prepared.txHash };
  }

  async function signAndSubmit(
    principal: string,
    body: core.TransactionBody | core.TransactionBodyArgs,
    key: HeldKey,
    txOpts?: TxOptions,
  ): Promise<SubmitResult> {
    const k = keyFromSeed(key.privateKey);
    const prepared = await prepareExternalSignature({
      principal,
      body,
      txOptions: txOpts,
      signerUrl: key.signerUrl,
      publicKey: k.address.publicKey,
      signerVersion: key.signerVersion,
      delegators: key.delegators,
    });
    return submitExternalSignature(prepared, signHash(k, Buffer.from(prepared.hashToSign, 'hex')));
  }

  async function signPending(pendingTx: string, key: HeldKey, vote: Vote = 'accept'): Promise<SubmitResult> {
    const k = keyFromSeed(key.privateKey);
    const prepared = await prepareExternalSignature({
      pendingTx,
      signerUrl: key.signerUrl,
      publicKey: k.address.publicKey,
      signerVersion: key.signerVersion,
      delegators: key.delegators,
      vote,
    });
    return submitExternalSignature(prepared, signHash(k, Buffer.from(prepared.hashToSign, 'hex')));
  }

  return {
    submit,
    signAndSubmit,
    signPending,
    prepareExternalSignature,
    submitExternalSignature,
    nextTimestamp,
    async faucet(lta: string) {
      const account = parseAccUrl(lta, 'account').toString();
      const r = await call<any>('faucet', { account });
      // the faucet answers one submission, refused in the same shapes as submit's
      throwIfRefused([r], 'faucet refused');
      return { txId: String(r?.status?.txID ?? '') };
    },
  };
}
