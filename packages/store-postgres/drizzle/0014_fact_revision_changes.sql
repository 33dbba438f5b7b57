ALTER TABLE "fact_revisions" ADD COLUMN "changes" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- Hand-written below: the revision triggers of migration 0011 also append what each writing statement changed
-- to its partition's `changes` (the fact ids it inserted, updated or deleted, null past 64), keeping the last
-- 8, in the same upsert under the revision row's lock: a write is in `changes` exactly when its revision is
-- visible. A process whose cached search index is at revision R reads only the rows of the ids in the entries
-- after R's; when R is not among them (older, or the partition was erased) it reads the partition again.
CREATE OR REPLACE FUNCTION "facts_revision_bumped"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "fact_revisions" AS r ("user_id", "agent_id", "revision", "changes")
    SELECT "user_id", "agent_id", v, jsonb_build_array(jsonb_build_object('r', v, 'ids', ids)) FROM (
      SELECT "user_id", "agent_id", nextval('fact_revision_seq') AS v, ids FROM (
        SELECT "user_id", "agent_id", CASE WHEN count(*) <= 64 THEN jsonb_agg("id") END AS ids
        FROM "added" GROUP BY 1, 2
      ) AS p ORDER BY 1, 2
    ) AS n
    ORDER BY 1, 2
    ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "revision" = excluded."revision",
      "changes" = (CASE WHEN jsonb_array_length(r."changes") >= 8 THEN r."changes" - 0 ELSE r."changes" END)
        || excluded."changes";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "fact_revisions" AS r ("user_id", "agent_id", "revision", "changes")
    SELECT "user_id", "agent_id", v, jsonb_build_array(jsonb_build_object('r', v, 'ids', ids)) FROM (
      SELECT "user_id", "agent_id", nextval('fact_revision_seq') AS v, ids FROM (
        SELECT "user_id", "agent_id", CASE WHEN count(*) <= 64 THEN jsonb_agg("id") END AS ids
        FROM "removed" GROUP BY 1, 2
      ) AS p ORDER BY 1, 2
    ) AS n
    ORDER BY 1, 2
    ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "revision" = excluded."revision",
      "changes" = (CASE WHEN jsonb_array_length(r."changes") >= 8 THEN r."changes" - 0 ELSE r."changes" END)
        || excluded."changes";
  ELSE
    INSERT INTO "fact_revisions" AS r ("user_id", "agent_id", "revision", "changes")
    SELECT "user_id", "agent_id", v, jsonb_build_array(jsonb_build_object('r', v, 'ids', ids)) FROM (
      SELECT "user_id", "agent_id", nextval('fact_revision_seq') AS v, ids FROM (
        SELECT "user_id", "agent_id", CASE WHEN count(*) <= 64 THEN jsonb_agg("id") END AS ids FROM (
          SELECT "user_id", "agent_id", "id" FROM "added" UNION SELECT "user_id", "agent_id", "id" FROM "removed"
        ) AS c GROUP BY 1, 2
      ) AS p ORDER BY 1, 2
    ) AS n
    ORDER BY 1, 2
    ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "revision" = excluded."revision",
      "changes" = (CASE WHEN jsonb_array_length(r."changes") >= 8 THEN r."changes" - 0 ELSE r."changes" END)
        || excluded."changes";
  END IF;
  RETURN NULL;
END $$;
