-- The operator scope (gateway-wide /metrics) for a bootstrap admin key made before the scope existed. The bootstrap
-- key is the key named 'bootstrap admin key' (rotations keep the name) of the operator organization: the first
-- organization, made with the key on an empty database, and never a self-service one. A self-service organization's
-- key of that name is not touched. Keys that already hold the scope, and revoked ones, are left as they are.
UPDATE "api_keys" SET "permissions" = "permissions" || '["operator"]'::jsonb
WHERE "name" = 'bootstrap admin key'
  AND "is_admin"
  AND "revoked_at" IS NULL
  AND NOT ("permissions" @> '["operator"]'::jsonb)
  AND "org_id" = (SELECT "id" FROM "organizations" ORDER BY "created_at", "id" LIMIT 1)
  AND EXISTS (SELECT 1 FROM "organizations" WHERE "organizations"."id" = "api_keys"."org_id" AND NOT "organizations"."self_service");
