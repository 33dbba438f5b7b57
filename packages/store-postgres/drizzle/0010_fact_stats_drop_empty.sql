-- Hand-written (drizzle-kit generate --custom): drizzle-kit does not model triggers.
-- A statistics row that reaches 0 is deleted in the same statement: `fact_terms` held one row per term of
-- every deleted fact at df 0 (a forgotten user's words: "leukemia", "porto"…), and `fact_counts` a row at
-- n 0. Readers already take a missing row as 0 (no facts, term in no fact). The DELETE runs after the
-- upsert in the same transaction, so it sees the row under the lock the upsert took: a writer that adds a
-- fact with the term either committed before (df > 0, kept) or waits and inserts the row anew.
CREATE OR REPLACE FUNCTION "facts_count_removed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE "fact_counts" AS c SET "n" = c."n" - r."n", "terms" = c."terms" - r."terms"
  FROM (
    SELECT "user_id", "agent_id", count(*) AS "n", coalesce(sum("search_length"), 0) AS "terms"
    FROM "removed" GROUP BY 1, 2
  ) AS r
  WHERE c."user_id" = r."user_id" AND c."agent_id" = r."agent_id";
  DELETE FROM "fact_counts" AS c USING (SELECT DISTINCT "user_id", "agent_id" FROM "removed") AS r
  WHERE c."user_id" = r."user_id" AND c."agent_id" = r."agent_id" AND c."n" <= 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "facts_count_changed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO "fact_counts" AS c ("user_id", "agent_id", "n", "terms")
  SELECT "user_id", "agent_id", sum("n"), sum("terms") FROM (
    SELECT "user_id", "agent_id", 1 AS "n", coalesce("search_length", 0) AS "terms" FROM "added"
    UNION ALL
    SELECT "user_id", "agent_id", -1, -coalesce("search_length", 0) FROM "removed"
  ) AS d
  GROUP BY 1, 2 HAVING sum("n") <> 0 OR sum("terms") <> 0 ORDER BY 1, 2
  ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "n" = c."n" + excluded."n", "terms" = c."terms" + excluded."terms";
  DELETE FROM "fact_counts" AS c USING (SELECT DISTINCT "user_id", "agent_id" FROM "removed") AS r
  WHERE c."user_id" = r."user_id" AND c."agent_id" = r."agent_id" AND c."n" <= 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "facts_terms_removed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO "fact_terms" AS t ("user_id", "agent_id", "term", "df")
  SELECT r."user_id", r."agent_id", k."term", -count(*)
  FROM "removed" AS r CROSS JOIN LATERAL (SELECT DISTINCT unnest(string_to_array(r."search_terms", ' ')) AS "term") AS k
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT ("user_id", "agent_id", "term") DO UPDATE SET "df" = t."df" + excluded."df";
  DELETE FROM "fact_terms" AS t USING (
    SELECT DISTINCT r."user_id", r."agent_id", unnest(string_to_array(r."search_terms", ' ')) AS "term" FROM "removed" AS r
  ) AS k
  WHERE t."user_id" = k."user_id" AND t."agent_id" = k."agent_id" AND t."term" = k."term" AND t."df" <= 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "facts_terms_changed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
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
  DELETE FROM "fact_terms" AS t USING (
    SELECT DISTINCT r."user_id", r."agent_id", unnest(string_to_array(r."search_terms", ' ')) AS "term" FROM "removed" AS r
  ) AS k
  WHERE t."user_id" = k."user_id" AND t."agent_id" = k."agent_id" AND t."term" = k."term" AND t."df" <= 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Rows left at 0 by the functions above before this migration.
DELETE FROM "fact_terms" WHERE "df" <= 0;
--> statement-breakpoint
DELETE FROM "fact_counts" WHERE "n" <= 0;
