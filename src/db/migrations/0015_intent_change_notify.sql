-- Every change to an intent or to one of its chain cycles is announced with pg_notify('intent_changed', <intent id>)
-- at commit, so that a GET waiting for the intent to change (If-None-Match with Prefer: wait) answers at once.
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
CREATE TRIGGER "intents_notify_change" AFTER UPDATE ON "intents" FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "notify_intent_changed"();
--> statement-breakpoint
CREATE TRIGGER "intent_chains_notify_change" AFTER INSERT OR UPDATE ON "intent_chains" FOR EACH ROW EXECUTE FUNCTION "notify_intent_changed"();
