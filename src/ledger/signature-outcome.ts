/**
 * What the ledger made of a submitted signature. A node checks a signature twice: when it is submitted (the answer
 * to the submission) and when its block executes it, and only the second check counts. Two signatures of one key
 * submitted into the same block both pass the first check; if the later-prepared one (the higher timestamp)
 * executes first, the other is refused then (badTimestamp) and its transaction stays pending without it until it
 * expires. The submitter learns it from the signature message's own status.
 */
import { sleep } from '../net/sleep.js';
import { isNotFound, LedgerError, LedgerTransportError } from './errors.js';
import type { LedgerClient, SubmitResult } from './types.js';

const bare = (h: string) => h.replace(/^0x/, '').toLowerCase();

/**
 * The id of the signature message in a submission's answer: the status that does not name the transaction itself
 * (`tx`: its hash or its id).
 */
export function signatureMessageId(r: Pick<SubmitResult, 'submissions'>, tx: string): string | undefined {
  const txHash = /[0-9a-fA-F]{64}/.exec(tx)?.[0] ?? tx;
  for (const s of r.submissions ?? []) {
    const id = String(s?.status?.txID ?? '');
    const hash = /[0-9a-fA-F]{64}/.exec(id)?.[0];
    if (hash && bare(hash) !== bare(txHash)) return id;
  }
  return undefined;
}

/** The signature message `sigId` once executed: accepted, or refused with the ledger's error; undefined while not. */
export async function signatureExecuted(
  ledger: Pick<LedgerClient, 'getTransaction'>,
  sigId: string,
): Promise<{ ok: true } | { ok: false; error: LedgerError } | undefined> {
  const st = await ledger.getTransaction(sigId).catch((e: unknown) => {
    if (isNotFound(e) || e instanceof LedgerTransportError) return undefined;
    throw e;
  });
  if (st?.delivered) return { ok: true };
  if (st?.failed) return { ok: false, error: new LedgerError(st.error?.message ?? `signature ${st.status}`, st.error?.code ?? st.status) };
  return undefined;
}

/** Polls signatureExecuted until the signature is executed or `deadline` (undefined then). */
export async function waitSignatureExecuted(
  ledger: LedgerClient,
  sigId: string,
  deadline: number,
  pollMs = 50,
): Promise<{ ok: true } | { ok: false; error: LedgerError } | undefined> {
  for (;;) {
    const r = await signatureExecuted(ledger, sigId);
    if (r || Date.now() >= deadline) return r;
    await sleep(pollMs);
  }
}
