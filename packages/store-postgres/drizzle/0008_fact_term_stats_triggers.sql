-- Hand-written (drizzle-kit generate --custom): drizzle-kit does not model triggers.
-- Search statistics per (user_id, agent_id), kept exact in the transaction that writes `facts`, whoever writes
-- it: `fact_counts.terms` (sum of `search_length`: BM25's average length) and `fact_terms.df` (facts holding
-- each term: its idf). Every trigger is statement-level and reads the transition tables once, so a batch of
-- 500 rows is one upsert per (partition, term). Upserts go in key order, so two writers lock shared rows in
-- the same order and cannot deadlock; and `fact_counts` (the `facts_count_*` triggers, which fire first by
-- name) is locked before any `fact_terms` row, so writers of one partition take turns on it.
-- Rows from before migration 0006 have no `search_terms` yet (NULL: no terms, length 0) and are counted when
-- `setup()` analyses them (an UPDATE, see `facts_count_changed` and `facts_terms_changed`).
CREATE OR REPLACE FUNCTION "facts_count_added"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO "fact_counts" AS c ("user_id", "agent_id", "n", "terms")
  SELECT "user_id", "agent_id", count(*), coalesce(sum("search_length"), 0) FROM "added" GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "n" = c."n" + excluded."n", "terms" = c."terms" + excluded."terms";
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "facts_count_removed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE "fact_counts" AS c SET "n" = c."n" - r."n", "terms" = c."terms" - r."terms"
  FROM (
    SELECT "user_id", "agent_id", count(*) AS "n", coalesce(sum("search_length"), 0) AS "terms"
    FROM "removed" GROUP BY 1, 2
  ) AS r
  WHERE c."user_id" = r."user_id" AND c."agent_id" = r."agent_id";
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Replaced by the statement-level `facts_count_changed`, which also follows lengths.
DROP TRIGGER "facts_count_moved" ON "facts";
--> statement-breakpoint
DROP FUNCTION "facts_count_moved"();
--> statement-breakpoint
-- Any UPDATE: a changed length (new analysis), or a fact a host app moved to another partition.
CREATE FUNCTION "facts_count_changed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO "fact_counts" AS c ("user_id", "agent_id", "n", "terms")
  SELECT "user_id", "agent_id", sum("n"), sum("terms") FROM (
    SELECT "user_id", "agent_id", 1 AS "n", coalesce("search_length", 0) AS "terms" FROM "added"
    UNION ALL
    SELECT "user_id", "agent_id", -1, -coalesce("search_length", 0) FROM "removed"
  ) AS d
  GROUP BY 1, 2 HAVING sum("n") <> 0 OR sum("terms") <> 0 ORDER BY 1, 2
  ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "n" = c."n" + excluded."n", "terms" = c."terms" + excluded."terms";
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "facts_count_changed" AFTER UPDATE ON "facts" REFERENCING OLD TABLE AS "removed" NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_count_changed"();
--> statement-breakpoint
-- Document frequencies: +1 per distinct term of each added row, −1 per distinct term of each removed row.
CREATE FUNCTION "facts_terms_added"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO "fact_terms" AS t ("user_id", "agent_id", "term", "df")
  SELECT a."user_id", a."agent_id", k."term", count(*)
  FROM "added" AS a CROSS JOIN LATERAL (SELECT DISTINCT unnest(string_to_array(a."search_terms", ' ')) AS "term") AS k
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT ("user_id", "agent_id", "term") DO UPDATE SET "df" = t."df" + excluded."df";
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "facts_terms_removed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO "fact_terms" AS t ("user_id", "agent_id", "term", "df")
  SELECT r."user_id", r."agent_id", k."term", -count(*)
  FROM "removed" AS r CROSS JOIN LATERAL (SELECT DISTINCT unnest(string_to_array(r."search_terms", ' ')) AS "term") AS k
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT ("user_id", "agent_id", "term") DO UPDATE SET "df" = t."df" + excluded."df";
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "facts_terms_changed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO "fact_terms" AS t ("user_id", "agent_id", "term", "df")
  SELECT "user_id", "agent_id", "term", sum("d") FROM (
    SELECT a."user_id", a."agent_id", k."term", 1 AS "d"
    FROM "added" AS a CROSS JOIN LATERAL (SELECT DISTINCT unnest(string_to_array(a."search_terms", ' ')) AS "term") AS k
    UNION ALL
    SELECT r."user_id", r."agent_id", k."term", -1
    FROM "removed" AS r CROSS JOIN LATERAL (SELECT DISTINCT unnest(string_to_array(r."search_terms", ' ')) AS "term") AS k
  ) AS d
  GROUP BY 1, 2, 3 HAVING sum("d") <> 0 ORDER BY 1, 2, 3
  ON CONFLICT ("user_id", "agent_id", "term") DO UPDATE SET "df" = t."df" + excluded."df";
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "facts_terms_cleared"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM "fact_terms";
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "facts_terms_added" AFTER INSERT ON "facts" REFERENCING NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_terms_added"();
--> statement-breakpoint
CREATE TRIGGER "facts_terms_removed" AFTER DELETE ON "facts" REFERENCING OLD TABLE AS "removed"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_terms_removed"();
--> statement-breakpoint
CREATE TRIGGER "facts_terms_changed" AFTER UPDATE ON "facts" REFERENCING OLD TABLE AS "removed" NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_terms_changed"();
--> statement-breakpoint
CREATE TRIGGER "facts_terms_cleared" AFTER TRUNCATE ON "facts"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_terms_cleared"();
