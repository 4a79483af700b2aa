/**
 * Migration 0012 grants the `operator` scope to a bootstrap admin key made before the scope existed: only the
 * bootstrap key(s) of the operator organization (the first one, never self-service), idempotently; a self-service
 * organization's key of the same name, a later organization's, other keys of the operator organization and revoked
 * keys are left as they were.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_PERMISSIONS, bootstrapAdminKey, createApiKey, findApiKeyByRaw, revokeApiKey } from '../../src/db/api-keys.js';
import { MIGRATIONS_DIR } from '../../src/db/client.js';
import { createOrganization } from '../../src/db/organizations.js';
import { apiKeys } from '../../src/db/schema.js';
import { dbKinds, openTestDatabase } from '../support/env.js';

const TAG = '0012_bootstrap_operator_scope';
const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'meta/_journal.json'), 'utf8')) as { entries: { idx: number; tag: string; when: number }[] };
const migrationSql = readFileSync(join(MIGRATIONS_DIR, `${TAG}.sql`), 'utf8');

describe('migration 0012: the operator scope for an existing bootstrap key', () => {
  it('is registered in the journal, after every migration a database may already have applied', () => {
    const entry = journal.entries.find((e) => e.tag === TAG);
    expect(entry?.idx).toBe(12);
    // drizzle applies a journal entry only when its `when` is later than the last applied migration's
    const others = journal.entries.filter((e) => e.tag !== TAG && e.idx < 12);
    for (const e of others) expect(entry!.when).toBeGreaterThan(e.when);
  });

  describe.each(dbKinds())('on %s', (kind) => {
    let database: Awaited<ReturnType<typeof openTestDatabase>>;
    afterAll(async () => database?.cleanup());

    it('runs when the database is migrated', async () => {
      database = await openTestDatabase(kind);
      const entry = journal.entries.find((e) => e.tag === TAG)!;
      const applied = await database.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations where created_at = ${entry.when}`);
      const rows = (applied as unknown as { rows: { n: number }[] }).rows;
      expect(rows[0].n).toBe(1);
    });

    it('grants operator to the bootstrap key only, once', async () => {
      const db = database.db;
      const boot = await bootstrapAdminKey(db);
      expect(boot).toBeDefined();
      // as made before the operator scope existed
      const withoutOperator = [...ADMIN_PERMISSIONS];
      await db.update(apiKeys).set({ permissions: withoutOperator }).where(eq(apiKeys.id, boot!.keyId));
      // the bootstrap key rotated once: the old one revoked, the new one keeps the name and permissions
      const rotated = await createApiKey(db, { orgId: boot!.org.id, name: 'bootstrap admin key', permissions: withoutOperator, isAdmin: true });
      const old = await createApiKey(db, { orgId: boot!.org.id, name: 'bootstrap admin key', permissions: withoutOperator, isAdmin: true });
      await revokeApiKey(db, boot!.org.id, old.row.id);
      // another admin key of the operator organization
      const other = await createApiKey(db, { orgId: boot!.org.id, name: 'ci admin', permissions: withoutOperator, isAdmin: true });
      // a self-service organization whose owner named a key like the bootstrap key
      const tenant = await createOrganization(db, { name: 'tenant', selfService: true });
      const mimic = await createApiKey(db, { orgId: tenant.id, name: 'bootstrap admin key', permissions: withoutOperator, isAdmin: true });
      // a later organization made by the operator, not by sign-up, with a key of the same name
      const later = await createOrganization(db, { name: 'partner' });
      const partner = await createApiKey(db, { orgId: later.id, name: 'bootstrap admin key', permissions: withoutOperator, isAdmin: true });

      const permissionsOf = async (id: string) => (await db.select().from(apiKeys).where(eq(apiKeys.id, id)))[0].permissions;
      for (let run = 0; run < 2; run++) {
        for (const statement of migrationSql.split('--> statement-breakpoint')) await db.execute(sql.raw(statement));
        expect(await permissionsOf(boot!.keyId)).toEqual([...withoutOperator, 'operator']);
        expect(await permissionsOf(rotated.row.id)).toEqual([...withoutOperator, 'operator']);
        for (const untouched of [old.row.id, other.row.id, mimic.row.id, partner.row.id]) expect(await permissionsOf(untouched)).toEqual(withoutOperator);
      }
      // and the key works with it
      expect((await findApiKeyByRaw(db, boot!.rawKey))?.permissions).toContain('operator');
    });
  });
});
