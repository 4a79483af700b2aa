/** Fixed webhook policy numbers shared by the API and the activities (the tunable ones live in config.webhooks). */

/** GET /v1/events looks back this far; older events are purged with their finished deliveries */
export const EVENT_RETENTION_DAYS = 30;

/** after a rotation the old secret keeps signing (alongside the new one) this long */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3600_000;

/** a Retry-After on 429/503 is honoured up to this long */
export const MAX_RETRY_AFTER_MS = 3600_000;

/**
 * A delivery still `pending` whose next attempt (or workflow start) is this far in the past has lost its workflow
 * (a start that failed, a workflow that ended abnormally): the dispatcher starts it again. Generous, so that an
 * attempt in progress (its HTTP timeout plus Temporal's activity retries) is not mistaken for a lost one — and a
 * start over a still-running workflow is refused by Temporal anyway.
 */
export const STALE_PENDING_MS = 15 * 60_000;

/** at most this many earlier secrets keep signing at once (repeated rotations within a grace period) */
export const MAX_PREVIOUS_SECRETS = 5;

/** The secrets a message to this endpoint is signed with now: the current one, then every earlier one still in grace. */
export function signingSecrets(
  endpoint: {
    secret: string;
    previousSecrets?: { secret: string; expires_at: string }[] | null;
    previousSecret?: string | null;
    previousSecretExpiresAt?: Date | null;
  },
  now: Date = new Date(),
): string[] {
  const earlier = (endpoint.previousSecrets ?? []).filter((p) => Date.parse(p.expires_at) > now.getTime()).map((p) => p.secret);
  // rows rotated by code that only wrote previous_secret
  if (endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) earlier.push(endpoint.previousSecret);
  return [...new Set([endpoint.secret, ...earlier])];
}
