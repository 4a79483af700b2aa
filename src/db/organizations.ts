/** Queries over organizations (tenants). */
import { eq } from 'drizzle-orm';
import type { Db } from './client.js';
import { organizations } from './schema.js';

export type Organization = typeof organizations.$inferSelect;

export interface NewOrganization {
  name: string;
  /** identities that may exist at once; the schema default when omitted */
  identityQuota?: number;
  /** ledger credits granted in total; the schema default when omitted */
  creditGrant?: bigint;
  /** created by self-service sign-up (counted against SIGNUP_MAX_PER_HOUR); false when omitted */
  selfService?: boolean;
}

export async function createOrganization(db: Db, org: NewOrganization): Promise<Organization> {
  const [row] = await db
    .insert(organizations)
    .values({ name: org.name, identityQuota: org.identityQuota, creditGrant: org.creditGrant, selfService: org.selfService })
    .returning();
  return row;
}

export async function getOrganization(db: Db, id: string): Promise<Organization | undefined> {
  const [row] = await db.select().from(organizations).where(eq(organizations.id, id));
  return row;
}

export function organizationView(o: Organization) {
  return {
    id: o.id,
    name: o.name,
    identity_quota: o.identityQuota,
    credit_grant: o.creditGrant.toString(),
    created_at: o.createdAt.toISOString(),
  };
}
