CREATE SEQUENCE "public"."events_listed_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "listed_seq" bigint;--> statement-breakpoint
CREATE UNIQUE INDEX "events_listed_seq_uq" ON "events" USING btree ("listed_seq");--> statement-breakpoint
CREATE INDEX "events_org_listed_idx" ON "events" USING btree ("org_id","listed_seq");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries" USING btree ("created_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
UPDATE "events" SET "listed_seq" = nextval('events_listed_seq') FROM (SELECT "id" AS "eid" FROM "events" WHERE "dispatched_at" IS NOT NULL ORDER BY "position") AS "o" WHERE "events"."id" = "o"."eid";
