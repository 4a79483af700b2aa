CREATE TABLE "governance_ops" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"identity_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"operations" jsonb NOT NULL,
	"status" text DEFAULT 'signing_required' NOT NULL,
	"principal" text NOT NULL,
	"signer_url" text NOT NULL,
	"tx_hash" text NOT NULL,
	"tx_id" text NOT NULL,
	"prepared" jsonb NOT NULL,
	"key_page_version" integer NOT NULL,
	"signed_keys" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error_message" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pending_actions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"identity_id" uuid NOT NULL,
	"tx_hash" text NOT NULL,
	"tx_id" text NOT NULL,
	"principal" text NOT NULL,
	"category" text NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"collected_signatures" integer NOT NULL,
	"threshold" integer NOT NULL,
	"user_has_signed" boolean NOT NULL,
	"awaiting_authorities" jsonb NOT NULL,
	"is_ready" boolean NOT NULL,
	"expires_at" timestamp with time zone,
	"discovered_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pending_scans" (
	"org_id" uuid PRIMARY KEY NOT NULL,
	"last_scan_at" timestamp with time zone NOT NULL,
	"degraded" boolean NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "sign_requests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"identity_id" uuid,
	"pending_action_id" uuid,
	"tx_hash" text NOT NULL,
	"tx_id" text NOT NULL,
	"signer_url" text NOT NULL,
	"public_key" text NOT NULL,
	"vote" text NOT NULL,
	"prepared" jsonb NOT NULL,
	"status" text DEFAULT 'signing_required' NOT NULL,
	"claimed_at" timestamp with time zone,
	"submitted_at" timestamp with time zone,
	"error_message" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "governance_ops" ADD CONSTRAINT "governance_ops_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "governance_ops" ADD CONSTRAINT "governance_ops_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pending_actions" ADD CONSTRAINT "pending_actions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pending_actions" ADD CONSTRAINT "pending_actions_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pending_scans" ADD CONSTRAINT "pending_scans_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sign_requests" ADD CONSTRAINT "sign_requests_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sign_requests" ADD CONSTRAINT "sign_requests_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "governance_ops_org_idx" ON "governance_ops" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "governance_ops_tx_hash_idx" ON "governance_ops" USING btree ("tx_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "pending_actions_identity_tx_uq" ON "pending_actions" USING btree ("identity_id","tx_hash");--> statement-breakpoint
CREATE INDEX "pending_actions_org_open_idx" ON "pending_actions" USING btree ("org_id","discovered_at") WHERE "pending_actions"."resolved_at" is null;--> statement-breakpoint
CREATE INDEX "sign_requests_org_idx" ON "sign_requests" USING btree ("org_id","created_at");