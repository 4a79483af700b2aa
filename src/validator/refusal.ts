/**
 * A validator's refusal: a reason code and a message, answered 422 by its HTTP API. proofStep tells a proof that
 * fails (final) from data the chain's RPC did not give (retried by the gateway).
 */
import { EffectDataUnavailable, EffectProofError } from '../chain/effects/evm-proofs.js';
import { MptProofError } from '../chain/effects/mpt.js';
import { redactUrls } from '../net/redact.js';

export class ValidatorRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    // a refusal leaves the node (the gateway may show it to clients): the URLs in it are masked, the node's own
    // RPC and ledger URLs (registered by loadConfig) down to their origin, since providers put keys in their paths
    super(redactUrls(message));
    this.name = 'ValidatorRefusal';
  }
}

export const refuse = (code: string, reason: string): never => {
  throw new ValidatorRefusal(code, reason);
};

/**
 * Runs one proof step against the chain's RPC. Data that does not prove what it claims is PROOF_FAILED (final);
 * data the RPC did not give, or an RPC error (a lagging, pruning or failing node), is RPC_UNAVAILABLE, which the
 * gateway retries: an outage must never become a verdict on an execution.
 */
export async function proofStep<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ValidatorRefusal) throw e;
    if (e instanceof EffectProofError || e instanceof MptProofError) refuse('PROOF_FAILED', `${what}: ${e.message}`);
    // viem's first line is generic ("Missing or invalid parameters."); its `details` carry the node's own words
    const rpcError = () => [String((e as Error)?.message ?? e).split('\n')[0], (e as { details?: string }).details].filter(Boolean).join(' ');
    const msg = e instanceof EffectDataUnavailable ? e.message : `RPC error: ${rpcError()}`;
    return refuse('RPC_UNAVAILABLE', `${what}: ${msg}`);
  }
}
