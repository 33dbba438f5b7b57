-- Custom migration (drizzle-kit generate --custom): full-text search, which drizzle's schema cannot express.
-- For each searchable table: an FTS5 index over `search_terms` (the record's text after Kioku's analyzer),
-- a vocabulary view of it, and triggers that keep both the index and `kioku_search_stats` in step with
-- every insert, update and delete, whoever runs it. The FTS5 tables are external-content: the terms are
-- stored once, in the table. `search_scope` is one token naming the row's partition, so a query is
-- limited to one partition inside FTS5; it has weight 0 in the ranking. The analyzer has already
-- lower-cased, stemmed and dropped stop words, so the tokenizer only splits on spaces (unicode61,
-- without diacritic folding, spelling terms exactly as the analyzer does).
CREATE VIRTUAL TABLE `kioku_facts_fts` USING fts5(search_scope, search_terms, content='kioku_facts', content_rowid='seq', tokenize='unicode61 remove_diacritics 0');
--> statement-breakpoint
INSERT INTO `kioku_facts_fts`(`kioku_facts_fts`, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
--> statement-breakpoint
CREATE VIRTUAL TABLE `kioku_facts_fts_vocab` USING fts5vocab('kioku_facts_fts', 'col');
--> statement-breakpoint
CREATE TRIGGER `kioku_facts_fts_insert` AFTER INSERT ON `kioku_facts` BEGIN
  INSERT INTO `kioku_facts_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms) VALUES ('kioku_facts', new.search_scope, 1, new.search_length)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms;
END;
--> statement-breakpoint
CREATE TRIGGER `kioku_facts_fts_delete` AFTER DELETE ON `kioku_facts` BEGIN
  INSERT INTO `kioku_facts_fts`(`kioku_facts_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length
    WHERE table_name = 'kioku_facts' AND scope = old.search_scope;
END;
--> statement-breakpoint
CREATE TRIGGER `kioku_facts_fts_update` AFTER UPDATE OF search_terms, search_length, user_id, agent_id ON `kioku_facts` BEGIN
  INSERT INTO `kioku_facts_fts`(`kioku_facts_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length
    WHERE table_name = 'kioku_facts' AND scope = old.search_scope;
  INSERT INTO `kioku_facts_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms) VALUES ('kioku_facts', new.search_scope, 1, new.search_length)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms;
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE `kioku_document_chunks_fts` USING fts5(search_scope, search_terms, content='kioku_document_chunks', content_rowid='seq', tokenize='unicode61 remove_diacritics 0');
--> statement-breakpoint
INSERT INTO `kioku_document_chunks_fts`(`kioku_document_chunks_fts`, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
--> statement-breakpoint
CREATE VIRTUAL TABLE `kioku_document_chunks_fts_vocab` USING fts5vocab('kioku_document_chunks_fts', 'col');
--> statement-breakpoint
CREATE TRIGGER `kioku_document_chunks_fts_insert` AFTER INSERT ON `kioku_document_chunks` BEGIN
  INSERT INTO `kioku_document_chunks_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms) VALUES ('kioku_document_chunks', new.search_scope, 1, new.search_length)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms;
END;
--> statement-breakpoint
CREATE TRIGGER `kioku_document_chunks_fts_delete` AFTER DELETE ON `kioku_document_chunks` BEGIN
  INSERT INTO `kioku_document_chunks_fts`(`kioku_document_chunks_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length
    WHERE table_name = 'kioku_document_chunks' AND scope = old.search_scope;
END;
--> statement-breakpoint
CREATE TRIGGER `kioku_document_chunks_fts_update` AFTER UPDATE OF search_terms, search_length, user_id, agent_id ON `kioku_document_chunks` BEGIN
  INSERT INTO `kioku_document_chunks_fts`(`kioku_document_chunks_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length
    WHERE table_name = 'kioku_document_chunks' AND scope = old.search_scope;
  INSERT INTO `kioku_document_chunks_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms) VALUES ('kioku_document_chunks', new.search_scope, 1, new.search_length)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms;
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE `kioku_working_fts` USING fts5(search_scope, search_terms, content='kioku_working', content_rowid='seq', tokenize='unicode61 remove_diacritics 0');
--> statement-breakpoint
INSERT INTO `kioku_working_fts`(`kioku_working_fts`, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
--> statement-breakpoint
CREATE VIRTUAL TABLE `kioku_working_fts_vocab` USING fts5vocab('kioku_working_fts', 'col');
--> statement-breakpoint
CREATE TRIGGER `kioku_working_fts_insert` AFTER INSERT ON `kioku_working` BEGIN
  INSERT INTO `kioku_working_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms) VALUES ('kioku_working', new.search_scope, 1, new.search_length)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms;
END;
--> statement-breakpoint
CREATE TRIGGER `kioku_working_fts_delete` AFTER DELETE ON `kioku_working` BEGIN
  INSERT INTO `kioku_working_fts`(`kioku_working_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length
    WHERE table_name = 'kioku_working' AND scope = old.search_scope;
END;
--> statement-breakpoint
CREATE TRIGGER `kioku_working_fts_update` AFTER UPDATE OF search_terms, search_length, user_id, agent_id ON `kioku_working` BEGIN
  INSERT INTO `kioku_working_fts`(`kioku_working_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length
    WHERE table_name = 'kioku_working' AND scope = old.search_scope;
  INSERT INTO `kioku_working_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms) VALUES ('kioku_working', new.search_scope, 1, new.search_length)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms;
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE `kioku_details_fts` USING fts5(search_scope, search_terms, content='kioku_details', content_rowid='seq', tokenize='unicode61 remove_diacritics 0');
--> statement-breakpoint
INSERT INTO `kioku_details_fts`(`kioku_details_fts`, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
--> statement-breakpoint
CREATE VIRTUAL TABLE `kioku_details_fts_vocab` USING fts5vocab('kioku_details_fts', 'col');
--> statement-breakpoint
CREATE TRIGGER `kioku_details_fts_insert` AFTER INSERT ON `kioku_details` BEGIN
  INSERT INTO `kioku_details_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms) VALUES ('kioku_details', new.search_scope, 1, new.search_length)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms;
END;
--> statement-breakpoint
CREATE TRIGGER `kioku_details_fts_delete` AFTER DELETE ON `kioku_details` BEGIN
  INSERT INTO `kioku_details_fts`(`kioku_details_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length
    WHERE table_name = 'kioku_details' AND scope = old.search_scope;
END;
--> statement-breakpoint
CREATE TRIGGER `kioku_details_fts_update` AFTER UPDATE OF search_terms, search_length, user_id, agent_id ON `kioku_details` BEGIN
  INSERT INTO `kioku_details_fts`(`kioku_details_fts`, rowid, search_scope, search_terms) VALUES ('delete', old.seq, old.search_scope, old.search_terms);
  UPDATE `kioku_search_stats` SET rows = rows - 1, terms = terms - old.search_length
    WHERE table_name = 'kioku_details' AND scope = old.search_scope;
  INSERT INTO `kioku_details_fts`(rowid, search_scope, search_terms) VALUES (new.seq, new.search_scope, new.search_terms);
  INSERT INTO `kioku_search_stats`(table_name, scope, rows, terms) VALUES ('kioku_details', new.search_scope, 1, new.search_length)
    ON CONFLICT(table_name, scope) DO UPDATE SET rows = rows + 1, terms = terms + excluded.terms;
END;
