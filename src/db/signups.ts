/**
 * Self-service sign-up (POST /portal/signup): an organization with the sandbox grant and its owner key, within a
 * gateway-wide cap of `maxPerHour` sign-ups in any rolling hour (SIGNUP_MAX_PER_HOUR). Each sign-up hands out a
 * credit grant paid by the sponsor, so the per-IP rate limit alone would let someone with many addresses drain it.
 *
 * The count and the insert run in one transaction under a transaction-scoped advisory lock, so sign-ups from any
 * number of API processes are decided one at a time and never overshoot the cap. Only organizations marked
 * self_service count; the operator's (bootstrap) organization does not. The window is measured on the database's
 * clock (organizations.created_at defaults to now()), which every process shares.
 */
import { and, asc, count, eq, gt, sql } from 'drizzle-orm';
import { createApiKey, type ApiKeyRow } from './api-keys.js';
import type { Db } from './client.js';
import { ADVISORY_LOCKS } from './locks.js';
import { createOrganization, type Organization } from './organizations.js';
import { organizations } from './schema.js';

export const SIGNUP_WINDOW_SECONDS = 3600;

export interface SignupInput {
  name: string;
  identityQuota: number;
  creditGrant: bigint;
  /** requests per minute of the owner key */
  keyRateLimitRpm: number;
  /** sign-ups allowed in any rolling hour; 0 refuses every one */
  maxPerHour: number;
}

export type SignupResult =
  | { ok: true; org: Organization; row: ApiKeyRow; rawKey: string }
  /** the cap is reached: nothing was written; a sign-up is accepted again in `retryAfterSeconds` */
  | { ok: false; reason: 'cap'; maxPerHour: number; retryAfterSeconds: number }
  /** maxPerHour is 0: self-service sign-up is off */
  | { ok: false; reason: 'disabled' };

export async function signUpOrganization(db: Db, input: SignupInput): Promise<SignupResult> {
  if (input.maxPerHour <= 0) return { ok: false, reason: 'disabled' };
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.selfServiceSignup})`);
    // read after the lock: under READ COMMITTED this statement sees every sign-up committed before we got it
    const inWindow = and(eq(organizations.selfService, true), gt(organizations.createdAt, sql`now() - make_interval(secs => ${SIGNUP_WINDOW_SECONDS})`));
    const [{ n }] = await tx.select({ n: count() }).from(organizations).where(inWindow);
    if (n >= input.maxPerHour) {
      // the count drops below the cap when the (n - max + 1)-th oldest sign-up of the window leaves it
      const [leaving] = await tx
        .select({
          seconds: sql<string>`ceil(extract(epoch from (${organizations.createdAt} + make_interval(secs => ${SIGNUP_WINDOW_SECONDS}) - now())))`,
        })
        .from(organizations)
        .where(inWindow)
        .orderBy(asc(organizations.createdAt))
        .offset(n - input.maxPerHour)
        .limit(1);
      const seconds = Number(leaving?.seconds ?? SIGNUP_WINDOW_SECONDS);
      return {
        ok: false,
        reason: 'cap',
        maxPerHour: input.maxPerHour,
        retryAfterSeconds: Math.max(1, Number.isFinite(seconds) ? seconds : SIGNUP_WINDOW_SECONDS),
      } as const;
    }
    const org = await createOrganization(tx as unknown as Db, {
      name: input.name,
      identityQuota: input.identityQuota,
      creditGrant: input.creditGrant,
      selfService: true,
    });
    const key = await createApiKey(tx as unknown as Db, { orgId: org.id, name: 'owner key', isAdmin: true, rateLimitRpm: input.keyRateLimitRpm });
    return { ok: true, org, ...key } as const;
  });
}
