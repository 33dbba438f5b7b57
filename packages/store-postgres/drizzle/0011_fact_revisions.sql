CREATE TABLE "fact_revisions" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"revision" bigint NOT NULL,
	CONSTRAINT "fact_revisions_pk" PRIMARY KEY("user_id","agent_id")
);
--> statement-breakpoint
-- Hand-written below (drizzle-kit does not model sequences used by triggers, nor triggers).
-- `fact_revisions.revision` is replaced from one sequence on every INSERT, UPDATE (any column: provenance and
-- metadata edits too) and DELETE of a partition's facts, in the writing statement's transaction, so a reader
-- sees a new value exactly when it can see the write, and a value never comes back (the sequence never
-- repeats one, also after `eraseUser` removed the row). A missing row reads as the sequence's position
-- (`PostgresFactStore.revision`), which every write moves on.
CREATE SEQUENCE "fact_revision_seq";
--> statement-breakpoint
-- Statement-level like the statistics triggers: one upsert per partition and statement, in key order. It is
-- named to fire before them (triggers fire in name order), so every writer of a partition locks its
-- revision row first and then the statistics rows: an update that analyses its text again (two UPDATEs in
-- one transaction) and a create in the same partition take the rows in the same order and cannot deadlock.
CREATE FUNCTION "facts_revision_bumped"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "fact_revisions" AS r ("user_id", "agent_id", "revision")
    SELECT "user_id", "agent_id", nextval('fact_revision_seq') FROM (SELECT DISTINCT "user_id", "agent_id" FROM "added") AS p
    ORDER BY 1, 2
    ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "revision" = excluded."revision";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "fact_revisions" AS r ("user_id", "agent_id", "revision")
    SELECT "user_id", "agent_id", nextval('fact_revision_seq') FROM (SELECT DISTINCT "user_id", "agent_id" FROM "removed") AS p
    ORDER BY 1, 2
    ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "revision" = excluded."revision";
  ELSE
    INSERT INTO "fact_revisions" AS r ("user_id", "agent_id", "revision")
    SELECT "user_id", "agent_id", nextval('fact_revision_seq') FROM (
      SELECT "user_id", "agent_id" FROM "added" UNION SELECT "user_id", "agent_id" FROM "removed"
    ) AS p
    ORDER BY 1, 2
    ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "revision" = excluded."revision";
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "facts_revisions_cleared"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM "fact_revisions";
  -- Partitions without a row read as the sequence's position: the truncate moves it on.
  PERFORM nextval('fact_revision_seq');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "facts_bump_revision_added" AFTER INSERT ON "facts" REFERENCING NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_revision_bumped"();
--> statement-breakpoint
CREATE TRIGGER "facts_bump_revision_removed" AFTER DELETE ON "facts" REFERENCING OLD TABLE AS "removed"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_revision_bumped"();
--> statement-breakpoint
CREATE TRIGGER "facts_bump_revision_changed" AFTER UPDATE ON "facts" REFERENCING OLD TABLE AS "removed" NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_revision_bumped"();
--> statement-breakpoint
CREATE TRIGGER "facts_revisions_cleared" AFTER TRUNCATE ON "facts"
  FOR EACH STATEMENT EXECUTE FUNCTION "facts_revisions_cleared"();
--> statement-breakpoint
-- Partitions written before this migration (the triggers above already hold off writers of `facts` until it
-- commits): each gets a revision, so erasing one changes its revision too.
INSERT INTO "fact_revisions" ("user_id", "agent_id", "revision")
SELECT "user_id", "agent_id", nextval('fact_revision_seq') FROM (SELECT DISTINCT "user_id", "agent_id" FROM "facts") AS p;
