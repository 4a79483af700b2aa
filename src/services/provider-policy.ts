/**
 * The policy of a provider-signing identity: what the gateway signs with the key it holds. Set whole with
 * PATCH /v1/identity/{id} { provider_policy } by a key holding provider:manage; without one, nothing is signed.
 *   allowed_chains     chain names (GET /v1/chains), or ["*"]
 *   allowed_targets    0x addresses a leg may execute against (a contract call's target, a transfer's recipient),
 *                      or ["*"]
 *   max_value_per_leg  native value of one leg, base units (wei), decimal string
 *   max_value_per_24h  native value of all intents on one chain within any rolling 24 hours, base units, decimal
 *                      string (each chain's own currency is counted on its own)
 * A prepare outside it is a 403 PROVIDER_POLICY_DENIED naming the rule (details.rule). The 24-hour sum is checked
 * and written in one transaction under a lock on the identity row, so concurrent prepares never pass it together.
 */
import { ApiError } from './errors.js';
import type { IdentityRow } from '../db/identities.js';
import { reserveSpend } from '../db/provider.js';
import type { ServiceDeps } from './deps.js';

export interface ProviderPolicy {
  allowed_chains: string[];
  allowed_targets: string[];
  max_value_per_leg: string;
  max_value_per_24h: string;
}

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

const bad = (field: string, message: string) => new ApiError(400, 'VALIDATION_ERROR', `${field}: ${message}`, { field });

/** The policy of a PATCH body, checked whole (400 naming the field); addresses lower-cased. */
export function parsePolicy(deps: Pick<ServiceDeps, 'config'>, raw: unknown): ProviderPolicy {
  const f = 'provider_policy';
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad(f, 'must be an object');
  const p = raw as Record<string, unknown>;
  const known = ['allowed_chains', 'allowed_targets', 'max_value_per_leg', 'max_value_per_24h'];
  for (const k of Object.keys(p)) if (!known.includes(k)) throw bad(`${f}.${k}`, `unknown field; the policy takes ${known.join(', ')}`);
  const list = (k: string, check: (v: string) => boolean, what: string): string[] => {
    const v = p[k];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw bad(`${f}.${k}`, 'required: an array of strings');
    for (const [i, x] of (v as string[]).entries()) if (x !== '*' && !check(x)) throw bad(`${f}.${k}[${i}]`, `must be ${what} or "*"`);
    return [...new Set((v as string[]).map((x) => (ADDRESS.test(x) ? x.toLowerCase() : x)))];
  };
  const chains = deps.config.chains.map((c) => c.name);
  const value = (k: string): string => {
    const v = p[k];
    if (typeof v !== 'string' || !DECIMAL.test(v)) throw bad(`${f}.${k}`, 'required: a whole number of base units (wei) as a decimal string');
    return v;
  };
  return {
    allowed_chains: list('allowed_chains', (x) => chains.includes(x), `a configured chain (${chains.join(', ')})`),
    allowed_targets: list('allowed_targets', (x) => ADDRESS.test(x), 'a 0x address (20 bytes)'),
    max_value_per_leg: value('max_value_per_leg'),
    max_value_per_24h: value('max_value_per_24h'),
  };
}

function denied(rule: string, message: string, details: Record<string, unknown> = {}): ApiError {
  return new ApiError(403, 'PROVIDER_POLICY_DENIED', `${rule}: ${message}`, { rule, ...details });
}

export interface PolicyLeg {
  legId: string;
  chain: string;
  target: string;
  value: bigint;
}

/** The per-leg rules (chains, targets, value per leg): a 403 naming the first rule a leg breaks. */
export function checkLegs(identity: Pick<IdentityRow, 'providerPolicy'>, legs: readonly PolicyLeg[]): ProviderPolicy {
  const policy = identity.providerPolicy as ProviderPolicy | null;
  if (!policy) throw denied('provider_policy', 'the identity has no policy, so the gateway signs nothing for it; set one with PATCH /v1/identity/{id}');
  for (const [i, leg] of legs.entries()) {
    const at = { leg: i, leg_id: leg.legId, chain: leg.chain };
    if (!policy.allowed_chains.includes('*') && !policy.allowed_chains.includes(leg.chain))
      throw denied('allowed_chains', `leg ${i} ("${leg.legId}") runs on ${leg.chain}, which the policy does not allow`, at);
    if (!policy.allowed_targets.includes('*') && !policy.allowed_targets.includes(leg.target.toLowerCase()))
      throw denied('allowed_targets', `leg ${i} ("${leg.legId}") executes against ${leg.target}, which the policy does not allow`, at);
    if (leg.value > BigInt(policy.max_value_per_leg))
      throw denied('max_value_per_leg', `leg ${i} ("${leg.legId}") moves ${leg.value} base units, above the policy's ${policy.max_value_per_leg}`, at);
  }
  return policy;
}

/**
 * The rolling 24-hour rule: the intent's native value per chain is recorded against it, or a 403 naming the rule
 * and the chain when it would go over. An intent the ledger never took (expired unsigned, or the gateway could not
 * sign it) gives its reservation back (markIntentFailed).
 */
export async function reserveIntentSpend(
  deps: ServiceDeps,
  identity: Pick<IdentityRow, 'id'>,
  policy: ProviderPolicy,
  intentId: string,
  legs: readonly PolicyLeg[],
): Promise<void> {
  const values = new Map<string, bigint>();
  for (const leg of legs) values.set(leg.chain, (values.get(leg.chain) ?? 0n) + leg.value);
  const over = await reserveSpend(deps.database.db, {
    identityId: identity.id,
    intentId,
    values,
    limit: BigInt(policy.max_value_per_24h),
    now: new Date(deps.now?.() ?? Date.now()),
  });
  if (over) {
    throw denied(
      'max_value_per_24h',
      `${over.requested} base units on ${over.chain} would bring the last 24 hours to ${over.spent + over.requested}, above the policy's ${over.limit}`,
      { chain: over.chain, spent_24h: over.spent.toString(), requested: over.requested.toString(), limit: over.limit.toString() },
    );
  }
}
