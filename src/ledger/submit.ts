/**
 * The ledger client's writes: a prepared external signature submitted once signed (checked here first, as the node
 * will check it); held keys that prepare, sign and submit in one go; envelopes submitted as they are; and the faucet
 * of test networks.
 *
 * A held key's signatures go out one at a time, each after the node has answered the one before: the node refuses
 * a signature whose timestamp is not above the key's last delivered one, also at delivery, where the refusal leaves
 * the transaction pending and unsigned. Two signatures made at once and sent side by side can reach the node in
 * the other order (a node busy for a moment reads waiting requests in socket order, not arrival order): the later
 * timestamp is delivered first and the earlier one fails.
 */
import { core, messaging } from 'accumulate.js';
import { keyedSerial } from '../net/serial.js';
import { LedgerInputError, LedgerSubmitError } from './errors.js';
import { txIdOf } from './records.js';
import type { LedgerRpc } from './rpc.js';
import { attachSignature, bytesArg, keyFromSeed, signHash, toHex, verifyExternalSignature, verifySignature, type TxOptions, type Vote } from './signing.js';
import type { HeldKey, LedgerClient, PrepareExternalArgs, PreparedSignature, SubmitResult } from './types.js';
import { parseAccUrl } from './urls.js';

export type LedgerSubmission = Pick<LedgerClient, 'submit' | 'signAndSubmit' | 'signPending' | 'submitExternalSignature' | 'faucet'>;

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

export function ledgerSubmission({ call }: LedgerRpc, prepareExternalSignature: LedgerClient['prepareExternalSignature']): LedgerSubmission {
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

  /** per held key (its signer and public key): timestamp issued, signed and submitted before the next one starts */
  const oneAtATime = keyedSerial<string>();

  /** A signature by a held key over a new transaction or a pending one, prepared, signed and submitted. */
  async function signWithHeldKey(
    key: HeldKey,
    what: Pick<PrepareExternalArgs, 'principal' | 'body' | 'txOptions' | 'pendingTx' | 'vote'>,
  ): Promise<SubmitResult> {
    const k = keyFromSeed(key.privateKey);
    const signerUrl = parseAccUrl(key.signerUrl, 'signerUrl').toString();
    return oneAtATime(`${signerUrl.toLowerCase()}|${toHex(k.address.publicKey)}`, async () => {
      const prepared = await prepareExternalSignature({
        ...what,
        signerUrl,
        publicKey: k.address.publicKey,
        signerVersion: key.signerVersion,
        delegators: key.delegators,
      });
      return submitExternalSignature(prepared, signHash(k, Buffer.from(prepared.hashToSign, 'hex')));
    });
  }

  const signAndSubmit = (principal: string, body: core.TransactionBody | core.TransactionBodyArgs, key: HeldKey, txOptions?: TxOptions) =>
    signWithHeldKey(key, { principal, body, txOptions });
  const signPending = (pendingTx: string, key: HeldKey, vote: Vote = 'accept') => signWithHeldKey(key, { pendingTx, vote });

  return {
    submit,
    signAndSubmit,
    signPending,
    submitExternalSignature,
    async faucet(lta: string) {
      const account = parseAccUrl(lta, 'account').toString();
      const r = await call<any>('faucet', { account });
      // the faucet answers one submission, refused in the same shapes as submit's
      throwIfRefused([r], 'faucet refused');
      return { txId: String(r?.status?.txID ?? '') };
    },
  };
}
