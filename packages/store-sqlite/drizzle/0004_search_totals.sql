-- Custom migration (drizzle-kit generate --custom): the FTS triggers of 0001_fts.sql, redefined so that each
-- write also keeps the whole table's totals (scope '') and counts `changes` per partition in
-- `kioku_search_stats`. Searches read the table's size from one row instead of summing every partition, and
-- keep their document-frequency cache across inserts (see src/search.ts). The FTS5 tables are unchanged.
INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
  SELECT table_name, '', sum(rows), sum(terms), 0 FROM `kioku_search_stats` GROUP BY table_name;
--> statement-breakpoint
DROP TRIGGER `kioku_facts_fts_insert`;
--> statement-breakpoint
CREATE TRIGGER `kioku_facts_fts_insert` AFTER INSERT ON `kioku_facts` BEGIN
  INSERT INTO `kioku_facts_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_facts', new.search_scope, 1, new.search_length, 1), ('kioku_facts', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
--> statement-breakpoint
DROP TRIGGER `kioku_facts_fts_delete`;
--> statement-breakpoint
CREATE TRIGGER `kioku_facts_fts_delete` AFTER DELETE ON `kioku_facts` BEGIN
  INSERT INTO `kioku_facts_fts`(`kioku_facts_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_facts' AND scope IN (old.search_scope, '');
END;
--> statement-breakpoint
DROP TRIGGER `kioku_facts_fts_update`;
--> statement-breakpoint
CREATE TRIGGER `kioku_facts_fts_update` AFTER UPDATE OF search_terms, search_length, user_id, agent_id ON `kioku_facts` BEGIN
  INSERT INTO `kioku_facts_fts`(`kioku_facts_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_facts' AND scope IN (old.search_scope, '');
  INSERT INTO `kioku_facts_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_facts', new.search_scope, 1, new.search_length, 1), ('kioku_facts', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
--> statement-breakpoint
DROP TRIGGER `kioku_document_chunks_fts_insert`;
--> statement-breakpoint
CREATE TRIGGER `kioku_document_chunks_fts_insert` AFTER INSERT ON `kioku_document_chunks` BEGIN
  INSERT INTO `kioku_document_chunks_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_document_chunks', new.search_scope, 1, new.search_length, 1), ('kioku_document_chunks', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
--> statement-breakpoint
DROP TRIGGER `kioku_document_chunks_fts_delete`;
--> statement-breakpoint
CREATE TRIGGER `kioku_document_chunks_fts_delete` AFTER DELETE ON `kioku_document_chunks` BEGIN
  INSERT INTO `kioku_document_chunks_fts`(`kioku_document_chunks_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_document_chunks' AND scope IN (old.search_scope, '');
END;
--> statement-breakpoint
DROP TRIGGER `kioku_document_chunks_fts_update`;
--> statement-breakpoint
CREATE TRIGGER `kioku_document_chunks_fts_update` AFTER UPDATE OF search_terms, search_length, user_id, agent_id ON `kioku_document_chunks` BEGIN
  INSERT INTO `kioku_document_chunks_fts`(`kioku_document_chunks_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_document_chunks' AND scope IN (old.search_scope, '');
  INSERT INTO `kioku_document_chunks_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_document_chunks', new.search_scope, 1, new.search_length, 1), ('kioku_document_chunks', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
--> statement-breakpoint
DROP TRIGGER `kioku_working_fts_insert`;
--> statement-breakpoint
CREATE TRIGGER `kioku_working_fts_insert` AFTER INSERT ON `kioku_working` BEGIN
  INSERT INTO `kioku_working_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_working', new.search_scope, 1, new.search_length, 1), ('kioku_working', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
--> statement-breakpoint
DROP TRIGGER `kioku_working_fts_delete`;
--> statement-breakpoint
CREATE TRIGGER `kioku_working_fts_delete` AFTER DELETE ON `kioku_working` BEGIN
  INSERT INTO `kioku_working_fts`(`kioku_working_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_working' AND scope IN (old.search_scope, '');
END;
--> statement-breakpoint
DROP TRIGGER `kioku_working_fts_update`;
--> statement-breakpoint
CREATE TRIGGER `kioku_working_fts_update` AFTER UPDATE OF search_terms, search_length, user_id, agent_id ON `kioku_working` BEGIN
  INSERT INTO `kioku_working_fts`(`kioku_working_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_working' AND scope IN (old.search_scope, '');
  INSERT INTO `kioku_working_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_working', new.search_scope, 1, new.search_length, 1), ('kioku_working', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
--> statement-breakpoint
DROP TRIGGER `kioku_details_fts_insert`;
--> statement-breakpoint
CREATE TRIGGER `kioku_details_fts_insert` AFTER INSERT ON `kioku_details` BEGIN
  INSERT INTO `kioku_details_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_details', new.search_scope, 1, new.search_length, 1), ('kioku_details', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
--> statement-breakpoint
DROP TRIGGER `kioku_details_fts_delete`;
--> statement-breakpoint
CREATE TRIGGER `kioku_details_fts_delete` AFTER DELETE ON `kioku_details` BEGIN
  INSERT INTO `kioku_details_fts`(`kioku_details_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_details' AND scope IN (old.search_scope, '');
END;
--> statement-breakpoint
DROP TRIGGER `kioku_details_fts_update`;
--> statement-breakpoint
CREATE TRIGGER `kioku_details_fts_update` AFTER UPDATE OF search_terms, search_length, user_id, agent_id ON `kioku_details` BEGIN
  INSERT INTO `kioku_details_fts`(`kioku_details_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length, changes = changes + 1
    WHERE table_name = 'kioku_details' AND scope IN (old.search_scope, '');
  INSERT INTO `kioku_details_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms, changes)
    VALUES ('kioku_details', new.search_scope, 1, new.search_length, 1), ('kioku_details', '', 1, new.search_length, 1)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms, changes = changes + 1;
END;
