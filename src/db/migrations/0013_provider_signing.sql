CREATE TABLE "mnemonic_retrievals" (
	"identity_id" uuid PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"sealed_mnemonic" text,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"retrieved_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "provider_keys" (
	"identity_id" uuid PRIMARY KEY NOT NULL,
	"public_key" text NOT NULL,
	"kek_id" text NOT NULL,
	"wrapped_data_key" text,
	"sealed_key" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"rewrapped_at" timestamp with time zone,
	"destroyed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "provider_spends" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"identity_id" uuid NOT NULL,
	"intent_id" uuid NOT NULL,
	"chain" text NOT NULL,
	"value" numeric(78, 0) NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "identities" ADD COLUMN "signing_mode" text DEFAULT 'external' NOT NULL;--> statement-breakpoint
ALTER TABLE "identities" ADD COLUMN "provider_policy" jsonb;--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "signing_mode" text DEFAULT 'external' NOT NULL;--> statement-breakpoint
ALTER TABLE "mnemonic_retrievals" ADD CONSTRAINT "mnemonic_retrievals_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_keys" ADD CONSTRAINT "provider_keys_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_spends" ADD CONSTRAINT "provider_spends_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "provider_spends_identity_chain_idx" ON "provider_spends" USING btree ("identity_id","chain","created_at");