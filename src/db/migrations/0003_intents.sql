CREATE TABLE "intent_chains" (
	"intent_id" uuid NOT NULL,
	"chain" text NOT NULL,
	"stage" text DEFAULT 'pending' NOT NULL,
	"record" jsonb NOT NULL,
	"step_times" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "intent_chains_intent_id_chain_pk" PRIMARY KEY("intent_id","chain")
);
--> statement-breakpoint
CREATE TABLE "proofs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"intent_id" uuid NOT NULL,
	"bundle" text NOT NULL,
	"bundle_hash" text NOT NULL,
	"custody" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "intents" ALTER COLUMN "proof_id" SET DATA TYPE uuid USING "proof_id"::uuid;--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "intent_type" text DEFAULT 'multi_leg' NOT NULL;--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "prepared" jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "signer_public_key" text NOT NULL;--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "signer_key_page" text NOT NULL;--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "ledger_tx_id" text;--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "expires_at" timestamp with time zone NOT NULL;--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "submitted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "completed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "intent_chains" ADD CONSTRAINT "intent_chains_intent_id_intents_id_fk" FOREIGN KEY ("intent_id") REFERENCES "public"."intents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proofs" ADD CONSTRAINT "proofs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proofs" ADD CONSTRAINT "proofs_intent_id_intents_id_fk" FOREIGN KEY ("intent_id") REFERENCES "public"."intents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "proofs_intent_uq" ON "proofs" USING btree ("intent_id");--> statement-breakpoint
CREATE INDEX "proofs_org_idx" ON "proofs" USING btree ("org_id","created_at");