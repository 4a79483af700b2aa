-- A change to an intent's status or stage (also its proof, error or signing data), a chain cycle created, or a chain
-- cycle's stage moved is announced with pg_notify('intent_changed', <intent id>) at commit, so that a GET waiting for
-- the intent to change (If-None-Match with Prefer: wait) answers at once. Writes within a stage (a transaction's hash,
-- a step's time) are not announced: a waiting read sees them with the next stage, or when its wait ends.
CREATE FUNCTION "notify_intent_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'intents' THEN
    PERFORM pg_notify('intent_changed', NEW.id::text);
  ELSE
    PERFORM pg_notify('intent_changed', NEW.intent_id::text);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "intents_notify_change" AFTER UPDATE ON "intents" FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.stage IS DISTINCT FROM NEW.stage OR OLD.proof_id IS DISTINCT FROM NEW.proof_id
    OR OLD.error_message IS DISTINCT FROM NEW.error_message OR OLD.signing_data IS DISTINCT FROM NEW.signing_data)
  EXECUTE FUNCTION "notify_intent_changed"();
--> statement-breakpoint
CREATE TRIGGER "intent_chains_notify_insert" AFTER INSERT ON "intent_chains" FOR EACH ROW EXECUTE FUNCTION "notify_intent_changed"();
--> statement-breakpoint
CREATE TRIGGER "intent_chains_notify_stage" AFTER UPDATE ON "intent_chains" FOR EACH ROW WHEN (OLD.stage IS DISTINCT FROM NEW.stage)
  EXECUTE FUNCTION "notify_intent_changed"();
