-- Custom migration: every write to a document counts in its partition's `changes` of
-- `kioku_document_chunks` (kioku_search_stats), beside the chunk triggers' counts, so `changes` is the
-- partition's document revision (`SqliteDocumentStore.revision`): what the knowledge block is reused by while
-- it is unchanged. The chunk triggers alone would miss a document without chunks (a restored one may have none).
CREATE TRIGGER `kioku_documents_revision_insert` AFTER INSERT ON `kioku_documents` BEGIN
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_document_chunks', 'p' || hex(new.user_id || '/' || new.agent_id), 0, 0, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET changes = changes + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `kioku_documents_revision_delete` AFTER DELETE ON `kioku_documents` BEGIN
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_document_chunks', 'p' || hex(old.user_id || '/' || old.agent_id), 0, 0, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET changes = changes + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `kioku_documents_revision_update` AFTER UPDATE ON `kioku_documents` BEGIN
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_document_chunks', 'p' || hex(old.user_id || '/' || old.agent_id), 0, 0, 1),
      ('kioku_document_chunks', 'p' || hex(new.user_id || '/' || new.agent_id), 0, 0, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET changes = changes + 1;
END;
