DROP INDEX "identities_adi_url_uq";--> statement-breakpoint
ALTER TABLE "identities" ADD COLUMN "provisioned_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "identities" ADD COLUMN "ledger_txs" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "identities_adi_url_live_uq" ON "identities" USING btree ("adi_url") WHERE status <> 'retired';--> statement-breakpoint
CREATE INDEX "identities_org_status_idx" ON "identities" USING btree ("org_id","status");