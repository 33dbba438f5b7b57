import type { KnowledgeDocument, ToolCall } from '@kioku/core';
import type { ContextNote, Metadata, PlanStep, Provenance } from '@kioku/core/store';
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  foreignKey,
  index,
  integer,
  json,
  jsonb,
  type PgColumn,
  PgSchema,
  type PgTableFn,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { isoTimestamp } from './timestamp.js';

/**
 * Characters of a record's searchable text that go into its `tsvector`. PostgreSQL refuses a tsvector over
 * 1 MB; 250,000 characters stay below that even for text made only of distinct short words.
 */
export const SEARCH_TEXT_CHARS = 250_000;

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/** The text search configuration of every search vector and query. */
const EN = sql.raw(`'english'::regconfig`);
const N = sql.raw(String(SEARCH_TEXT_CHARS));

/** Who a row belongs to. `agent_id` is '' for memory that belongs to no agent (NULL would break keys). */
const owner = () => ({
  userId: text('user_id').notNull(),
  agentId: text('agent_id').notNull().default(''),
});

/** Insertion order within a partition (core's stores keep records in insertion order). */
const seq = () => bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity();

/**
 * Kioku's tables. With a schema name they are qualified with it (how the stores query them); without, they
 * are unqualified — what drizzle-kit generates migrations from, so `setup()` can run them in any schema.
 */
export function kiokuTables(schema?: string) {
  const table = (schema === undefined ? pgTable : new PgSchema(schema).table) as PgTableFn;

  // Search vectors that depend only on their row are generated columns, so no write can leave them stale.
  // Each mirrors the text core's in-memory stores index for that kind (e.g. `factSearchText`).
  const facts = table(
    'facts',
    {
      ...owner(),
      id: text('id').notNull(),
      seq: seq(),
      title: text('title'),
      content: text('content').notNull(),
      category: text('category').notNull(),
      tags: json('tags').$type<string[]>().notNull(),
      /** Lower-cased tags for the all-of filter (`tag_keys @> $wanted`). */
      tagKeys: text('tag_keys').array().notNull(),
      metadata: json('metadata').$type<Metadata>().notNull(),
      provenance: json('provenance').$type<Provenance>().notNull(),
      /** When what the fact tells happened, when known (core's `Fact.eventTime`); NULL otherwise. */
      eventTime: isoTimestamp('event_time'),
      createdAt: isoTimestamp('created_at').notNull(),
      updatedAt: isoTimestamp('updated_at').notNull(),
      /** 1 on create, one more on every update (core's record version); rows from before it read as 1. */
      version: integer('version').notNull().default(1),
      /**
       * core's English analysis of `factSearchText` (stop words dropped, irregular verbs mapped, Porter stems),
       * space-separated in order: written by the store on every write (the analyzer is TypeScript), NULL until
       * then for rows from before migration 0006 (`setup()` analyses those). Search reads term frequencies here.
       */
      searchTerms: text('search_terms'),
      /** Number of terms in `search_terms` (BM25's document length). */
      searchLength: integer('search_length'),
    },
    (t) => [
      primaryKey({ name: 'facts_pk', columns: [t.userId, t.agentId, t.id] }),
      index('facts_created_idx').on(t.userId, t.agentId, t.createdAt, t.seq),
      // `list({ order: 'updated' })` reads a page straight off this index, in core's order (ids compared
      // byte-wise, as core compares code units, whatever the database's collation); it also serves the
      // empty-query search fallback (newest updated first).
      index('facts_updated_idx').on(
        t.userId,
        t.agentId,
        t.updatedAt.desc().nullsFirst(),
        t.createdAt.desc().nullsFirst(),
        sql`${t.id} collate "C"`,
      ),
      // Candidate rows of a search: those holding any of the query's terms.
      index('facts_terms_idx').using('gin', sql`string_to_array(${t.searchTerms}, ' ')`),
      // Facts not analysed yet (from before migration 0006): `setup()` finds them here, instantly when none.
      index('facts_unanalysed_idx').on(t.userId).where(sql`${t.searchTerms} is null`),
    ],
  );

  /**
   * Facts per partition, kept exact by triggers on `facts` whatever writes it (the stores, `restore`, raw
   * SQL), so `count()` without a filter reads one row instead of counting the partition. The triggers are
   * in the hand-written migration `0002_fact_counts_triggers.sql` (drizzle-kit does not model triggers).
   */
  const factCounts = table(
    'fact_counts',
    {
      ...owner(),
      n: bigint('n', { mode: 'number' }).notNull(),
      /** Sum of the partition's `search_length` (BM25's average document length is terms ÷ n). */
      terms: bigint('terms', { mode: 'number' }).notNull().default(0),
    },
    (t) => [primaryKey({ name: 'fact_counts_pk', columns: [t.userId, t.agentId] })],
  );

  /**
   * Document frequency of every analysed term per partition (facts holding it), kept exact by triggers on
   * `facts` in the writing transaction (migration `0007_fact_term_stats_triggers.sql`), so a search reads
   * the frequencies of its terms by primary key instead of counting rows. A row that reaches 0 is deleted
   * (migration `0010_fact_stats_drop_empty.sql`): no word of a deleted fact stays behind.
   */
  const factTerms = table(
    'fact_terms',
    {
      ...owner(),
      term: text('term').notNull(),
      df: bigint('df', { mode: 'number' }).notNull(),
    },
    (t) => [primaryKey({ name: 'fact_terms_pk', columns: [t.userId, t.agentId, t.term] })],
  );

  /**
   * A value per partition that every write to its facts replaces, whoever writes (`FactStore.revision`: what
   * core's fact block is reused by while it stays the same). Set by triggers on `facts` in the writing
   * transaction from the sequence `fact_revision_seq`, so a value never comes back, even after `eraseUser`
   * removed the row (migration `0011_fact_revisions.sql`; drizzle-kit does not model triggers).
   */
  const factRevisions = table(
    'fact_revisions',
    {
      ...owner(),
      revision: bigint('revision', { mode: 'number' }).notNull(),
      /**
       * The partition's latest writes, oldest first, at most FACT_CHANGES_KEPT (migration 0014): per writing
       * statement `{ r: revision it set, ids: [fact ids it wrote or deleted] }` (`ids` null when it wrote more
       * than 64), appended by the same triggers under the row's lock. A process whose cached search index is
       * at one of these revisions reads only the rows written since (FactIndexCache).
       */
      changes: jsonb('changes')
        .$type<Array<{ r: number; ids: string[] | null }>>()
        .notNull()
        .default(sql`'[]'::jsonb`),
    },
    (t) => [primaryKey({ name: 'fact_revisions_pk', columns: [t.userId, t.agentId] })],
  );

  /**
   * The same for a partition's documents (`DocumentStore.revision`: what the knowledge block is reused by
   * without reading the documents), from the sequence `document_revision_seq`, set by triggers on
   * `documents` (migration `0012_document_revisions.sql`).
   */
  const documentRevisions = table(
    'document_revisions',
    {
      ...owner(),
      revision: bigint('revision', { mode: 'number' }).notNull(),
    },
    (t) => [primaryKey({ name: 'document_revisions_pk', columns: [t.userId, t.agentId] })],
  );

  const documents = table(
    'documents',
    {
      ...owner(),
      id: text('id').notNull(),
      seq: seq(),
      title: text('title').notNull(),
      description: text('description'),
      tags: json('tags').$type<string[]>().notNull(),
      tagKeys: text('tag_keys').array().notNull(),
      source: json('source').$type<KnowledgeDocument['source']>().notNull(),
      text: text('text').notNull(),
      tokenCount: integer('token_count').notNull(),
      metadata: json('metadata').$type<Metadata>().notNull(),
      addedAt: isoTimestamp('added_at').notNull(),
    },
    (t) => [
      primaryKey({ name: 'documents_pk', columns: [t.userId, t.agentId, t.id] }),
      index('documents_seq_idx').on(t.userId, t.agentId, t.seq),
    ],
  );

  // A chunk is found by its document's title and tags too, so its vector is computed when it is inserted
  // (documents are immutable: create and delete only).
  const documentChunks = table(
    'document_chunks',
    {
      ...owner(),
      documentId: text('document_id').notNull(),
      chunkIndex: integer('chunk_index').notNull(),
      text: text('text').notNull(),
      tokenCount: integer('token_count').notNull(),
      search: tsvector('search').notNull(),
    },
    (t) => [
      primaryKey({ name: 'document_chunks_pk', columns: [t.userId, t.agentId, t.documentId, t.chunkIndex] }),
      foreignKey({
        name: 'document_chunks_document_fk',
        columns: [t.userId, t.agentId, t.documentId],
        foreignColumns: [documents.userId, documents.agentId, documents.id],
      }).onDelete('cascade'),
      index('document_chunks_search_idx').using('gin', t.search),
    ],
  );

  const plans = table(
    'plans',
    {
      ...owner(),
      threadId: text('thread_id').notNull(),
      id: text('id').notNull(),
      goal: text('goal').notNull(),
      steps: json('steps').$type<PlanStep[]>().notNull(),
      contextNotes: json('context_notes').$type<ContextNote[]>().notNull(),
      isComplete: boolean('is_complete').notNull(),
      createdAt: isoTimestamp('created_at').notNull(),
      updatedAt: isoTimestamp('updated_at').notNull(),
      completedAt: isoTimestamp('completed_at'),
      /** 1 on create, one more on every edit (core's record version); rows from before it read as 1. */
      version: integer('version').notNull().default(1),
    },
    (t) => [primaryKey({ name: 'plans_pk', columns: [t.userId, t.agentId, t.threadId] })],
  );

  const workingEntries = table(
    'working_entries',
    {
      ...owner(),
      key: text('key').notNull(),
      /** First two key segments: the cap applies per namespace. */
      namespace: text('namespace')
        .notNull()
        .generatedAlwaysAs(sql`split_part("key", '/', 1) || '/' || split_part("key", '/', 2)`),
      /** First key segment (`session`, `patrol`, …): what core's stores partition working memory by. */
      root: text('root').notNull().generatedAlwaysAs(sql`split_part("key", '/', 1)`),
      /** An overwrite deletes and re-inserts, so it moves the key to the end. */
      seq: seq(),
      value: text('value').notNull(),
      category: text('category'),
      tags: json('tags').$type<string[]>().notNull(),
      tagKeys: text('tag_keys').array().notNull(),
      storedAt: isoTimestamp('stored_at').notNull(),
      expiresAt: isoTimestamp('expires_at').notNull(),
      /** Core's working-memory version: 1 when set without a live entry; rows from before it read as 1. */
      version: integer('version').notNull().default(1),
      search: tsvector('search')
        .notNull()
        .generatedAlwaysAs(
          sql`to_tsvector(${EN}, regexp_replace("key", '[/_.-]', ' ', 'g') || ' ' || coalesce(regexp_replace("category", '[/_-]', ' ', 'g'), '') || ' ' || left("value", ${N})) || to_tsvector(${EN}, "tags")`,
        ),
    },
    (t) => [
      primaryKey({ name: 'working_entries_pk', columns: [t.userId, t.agentId, t.key] }),
      index('working_entries_namespace_idx').on(t.userId, t.agentId, t.namespace, t.seq),
      index('working_entries_expires_idx').on(t.expiresAt),
      index('working_entries_search_idx').using('gin', t.search),
    ],
  );

  const sessions = table(
    'sessions',
    {
      ...owner(),
      /** Lower-case UUIDv7. */
      id: text('id').notNull(),
      seq: seq(),
      storeTypes: json('store_types').$type<string[]>().notNull(),
      title: text('title'),
      metadata: json('metadata').$type<Metadata>().notNull(),
      createdAt: isoTimestamp('created_at').notNull(),
      /** The transcript's newest `seq` (0: none yet): each append takes the next ones under this row's lock. */
      transcriptSeq: bigint('transcript_seq', { mode: 'number' }).notNull().default(0),
      /** The k-v map's newest `ord`: each set takes the next one under this row's lock. */
      kvOrd: bigint('kv_ord', { mode: 'number' }).notNull().default(0),
      /** Pending appends ever made (`SessionStore.listPending`'s mark; never goes back). */
      pendingMark: bigint('pending_mark', { mode: 'number' }).notNull().default(0),
      /** The first pending append since the last clear; null when the session is not pending. */
      pendingSince: isoTimestamp('pending_since'),
    },
    (t) => [
      primaryKey({ name: 'sessions_pk', columns: [t.userId, t.agentId, t.id] }),
      index('sessions_seq_idx').on(t.userId, t.agentId, t.seq),
      index('sessions_pending_idx').on(t.pendingSince).where(sql`${t.pendingSince} is not null`),
    ],
  );

  const sessionRef = (t: { userId: PgColumn; agentId: PgColumn; sessionId: PgColumn }, name: string) =>
    foreignKey({
      name,
      columns: [t.userId, t.agentId, t.sessionId],
      foreignColumns: [sessions.userId, sessions.agentId, sessions.id],
    }).onDelete('cascade');

  const sessionKv = table(
    'session_kv',
    {
      ...owner(),
      sessionId: text('session_id').notNull(),
      key: text('key').notNull(),
      value: text('value').notNull(),
      ts: isoTimestamp('ts').notNull(),
      /** Per-session order: an update moves the key to the end (max + 1); the lowest is evicted first. */
      ord: bigint('ord', { mode: 'number' }).notNull(),
      /** Core's k-v version: 1 when the key is set without an entry; rows from before it read as 1. */
      version: integer('version').notNull().default(1),
    },
    (t) => [
      primaryKey({ name: 'session_kv_pk', columns: [t.userId, t.agentId, t.sessionId, t.key] }),
      index('session_kv_ord_idx').on(t.userId, t.agentId, t.sessionId, t.ord),
      sessionRef(t, 'session_kv_session_fk'),
    ],
  );

  const sessionTranscript = table(
    'session_transcript',
    {
      ...owner(),
      sessionId: text('session_id').notNull(),
      /** Per-session position, 1, 2, …; entries below `max - cap` are evicted. */
      seq: bigint('seq', { mode: 'number' }).notNull(),
      role: text('role').$type<'system' | 'user' | 'assistant' | 'tool'>().notNull(),
      content: text('content').notNull(),
      toolCalls: json('tool_calls').$type<ToolCall[]>(),
      toolCallId: text('tool_call_id'),
      name: text('name'),
      ts: isoTimestamp('ts').notNull(),
      /** The append's turn id (`transcriptAppend`'s `turnId`), on its first entry: one append per id. */
      turnId: text('turn_id'),
    },
    (t) => [
      primaryKey({ name: 'session_transcript_pk', columns: [t.userId, t.agentId, t.sessionId, t.seq] }),
      sessionRef(t, 'session_transcript_session_fk'),
      uniqueIndex('session_transcript_turn_idx')
        .on(t.userId, t.agentId, t.sessionId, t.turnId)
        .where(sql`${t.turnId} is not null`),
    ],
  );

  // Details belong to the user; agent and thread are recorded ('' for none) and filter reads.
  const details = table(
    'details',
    {
      userId: text('user_id').notNull(),
      id: text('id').notNull(),
      seq: seq(),
      agentId: text('agent_id').notNull().default(''),
      threadId: text('thread_id').notNull().default(''),
      type: text('type').notNull(),
      description: text('description').notNull(),
      summary: text('summary'),
      content: text('content').notNull(),
      tokenCount: integer('token_count').notNull(),
      metadata: json('metadata').$type<Metadata>().notNull(),
      createdAt: isoTimestamp('created_at').notNull(),
      isActive: boolean('is_active').notNull(),
      search: tsvector('search')
        .notNull()
        .generatedAlwaysAs(
          sql`to_tsvector(${EN}, "description" || ' ' || coalesce("summary", '') || ' ' || replace("type", '_', ' ') || ' ' || left("content", ${N}))`,
        ),
    },
    (t) => [
      primaryKey({ name: 'details_pk', columns: [t.userId, t.id] }),
      index('details_seq_idx').on(t.userId, t.seq),
      index('details_search_idx').using('gin', t.search),
    ],
  );

  return {
    facts,
    factCounts,
    factTerms,
    factRevisions,
    documentRevisions,
    documents,
    documentChunks,
    plans,
    workingEntries,
    sessions,
    sessionKv,
    sessionTranscript,
    details,
  };
}

export type KiokuTables = ReturnType<typeof kiokuTables>;

/** For drizzle-kit only (`pnpm db:generate`): the unqualified tables the migrations are generated from. */
export const {
  facts,
  factCounts,
  factTerms,
  factRevisions,
  documentRevisions,
  documents,
  documentChunks,
  plans,
  workingEntries,
  sessions,
  sessionKv,
  sessionTranscript,
  details,
} = kiokuTables();
