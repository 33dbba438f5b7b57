CREATE TABLE "document_revisions" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"revision" bigint NOT NULL,
	CONSTRAINT "document_revisions_pk" PRIMARY KEY("user_id","agent_id")
);
--> statement-breakpoint
-- Hand-written below, as migration 0011 does for facts: `document_revisions.revision` is replaced from
-- one sequence on every INSERT, UPDATE and DELETE of a partition's documents, in the writing statement's
-- transaction, so a reader sees a new value exactly when it can see the write, and a value never comes back
-- (also after `eraseUser` removed the row). A missing row reads as the sequence's position
-- (`PostgresDocumentStore.revision`), which every write moves on. Chunks follow their document (created in
-- its transaction, deleted by the cascade), so the documents' statements are enough.
CREATE SEQUENCE "document_revision_seq";
--> statement-breakpoint
CREATE FUNCTION "documents_revision_bumped"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "document_revisions" AS r ("user_id", "agent_id", "revision")
    SELECT "user_id", "agent_id", nextval('document_revision_seq') FROM (SELECT DISTINCT "user_id", "agent_id" FROM "added") AS p
    ORDER BY 1, 2
    ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "revision" = excluded."revision";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "document_revisions" AS r ("user_id", "agent_id", "revision")
    SELECT "user_id", "agent_id", nextval('document_revision_seq') FROM (SELECT DISTINCT "user_id", "agent_id" FROM "removed") AS p
    ORDER BY 1, 2
    ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "revision" = excluded."revision";
  ELSE
    INSERT INTO "document_revisions" AS r ("user_id", "agent_id", "revision")
    SELECT "user_id", "agent_id", nextval('document_revision_seq') FROM (
      SELECT "user_id", "agent_id" FROM "added" UNION SELECT "user_id", "agent_id" FROM "removed"
    ) AS p
    ORDER BY 1, 2
    ON CONFLICT ("user_id", "agent_id") DO UPDATE SET "revision" = excluded."revision";
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "documents_revisions_cleared"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM "document_revisions";
  -- Partitions without a row read as the sequence's position: the truncate moves it on.
  PERFORM nextval('document_revision_seq');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "documents_bump_revision_added" AFTER INSERT ON "documents" REFERENCING NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "documents_revision_bumped"();
--> statement-breakpoint
CREATE TRIGGER "documents_bump_revision_removed" AFTER DELETE ON "documents" REFERENCING OLD TABLE AS "removed"
  FOR EACH STATEMENT EXECUTE FUNCTION "documents_revision_bumped"();
--> statement-breakpoint
CREATE TRIGGER "documents_bump_revision_changed" AFTER UPDATE ON "documents" REFERENCING OLD TABLE AS "removed" NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "documents_revision_bumped"();
--> statement-breakpoint
CREATE TRIGGER "documents_revisions_cleared" AFTER TRUNCATE ON "documents"
  FOR EACH STATEMENT EXECUTE FUNCTION "documents_revisions_cleared"();
--> statement-breakpoint
-- Partitions written before this migration: each gets a revision, so erasing one changes its revision too.
INSERT INTO "document_revisions" ("user_id", "agent_id", "revision")
SELECT "user_id", "agent_id", nextval('document_revision_seq') FROM (SELECT DISTINCT "user_id", "agent_id" FROM "documents") AS p;
