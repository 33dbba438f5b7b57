-- Hand-written (drizzle-kit generate --custom): drizzle-kit does not model triggers.
-- `fact_counts` holds the number of facts per (user_id, agent_id), kept exact by these triggers whatever
-- writes `facts` (the stores, restore, raw SQL), so an unfiltered count() reads one row. setup() runs this
-- with `SET LOCAL search_path` to Kioku's schema; `SET search_path FROM CURRENT` pins the functions to it.
-- Statement-level triggers read the inserted / deleted rows once per statement (one counter update per
-- partition and statement, e.g. per 500-row batch of a restore).
CREATE FUNCTION "facts_count_added"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO "fact_counts" AS c ("user_id", "agent_id", "n")
  SELECT "user_id", "agent_id", count(*) FROM "added" GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "n" = c."n" + excluded."n";
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "facts_count_removed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE "fact_counts" AS c SET "n" = c."n" - r."n"
  FROM (SELECT "user_id", "agent_id", count(*) AS "n" FROM "removed" GROUP BY 1, 2) AS r
  WHERE c."user_id" = r."user_id" AND c."agent_id" = r."agent_id";
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Kioku never moves a fact to another partition; a host app's UPDATE of user_id / agent_id stays counted.
CREATE FUNCTION "facts_count_moved"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE "fact_counts" SET "n" = "n" - 1 WHERE "user_id" = OLD."user_id" AND "agent_id" = OLD."agent_id";
  INSERT INTO "fact_counts" AS c ("user_id", "agent_id", "n") VALUES (NEW."user_id", NEW."agent_id", 1)
  ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "n" = c."n" + 1;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "facts_count_cleared"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM "fact_counts";
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "facts_count_added" AFTER INSERT ON "facts" REFERENCING NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_count_added"();
--> statement-breakpoint
CREATE TRIGGER "facts_count_removed" AFTER DELETE ON "facts" REFERENCING OLD TABLE AS "removed"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_count_removed"();
--> statement-breakpoint
CREATE TRIGGER "facts_count_moved" AFTER UPDATE OF "user_id", "agent_id" ON "facts" FOR EACH ROW
  WHEN (OLD."user_id" IS DISTINCT FROM NEW."user_id" OR OLD."agent_id" IS DISTINCT FROM NEW."agent_id")
  EXECUTE FUNCTION "facts_count_moved"();
--> statement-breakpoint
CREATE TRIGGER "facts_count_cleared" AFTER TRUNCATE ON "facts"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_count_cleared"();
--> statement-breakpoint
-- Facts written before this migration. The triggers above already hold off writers of `facts` until the
-- migration commits, so nothing is counted twice or missed.
INSERT INTO "fact_counts" ("user_id", "agent_id", "n")
SELECT "user_id", "agent_id", count(*) FROM "facts" GROUP BY 1, 2;
