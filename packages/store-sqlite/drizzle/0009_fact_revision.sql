-- Custom migration: every write to a fact counts in its partition's `changes` (kioku_search_stats), also an
-- update that leaves the search columns alone (a provenance or metadata edit), so `changes` is the
-- partition's revision (`SqliteFactStore.revision`): what the fact block is reused by while it is unchanged.
CREATE TRIGGER `kioku_facts_revision` AFTER UPDATE ON `kioku_facts`
  WHEN old.search_terms IS new.search_terms AND old.search_length IS new.search_length
    AND old.user_id IS new.user_id AND old.agent_id IS new.agent_id
BEGIN
  UPDATE `kioku_search_stats` SET changes = changes + 1
    WHERE table_name = 'kioku_facts' AND scope = old.search_scope;
END;
