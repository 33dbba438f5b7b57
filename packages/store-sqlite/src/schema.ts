/**
 * The Kioku tables, as drizzle-kit reads them to generate the migrations in `drizzle/`. Every table is
 * prefixed `kioku_` so the schema can live in an application's own database.
 *
 * Conventions:
 * - `seq` is the rowid: insertion order, and the key the FTS5 tables index rows by.
 * - Partition keys are columns (`user_id`, `agent_id`; `''` means "no agent"), first in every index.
 * - Tags, metadata and other nested values are JSON text columns; records are never stored as one blob.
 * - Searchable tables carry `search_terms` (the text after Kioku's analyzer: stop words dropped, stems,
 *   space-separated), `search_length` (its number of terms) and `search_scope` (a virtual column naming
 *   the partition as one token). The FTS5 tables and the triggers that keep them in step with these
 *   columns are in the custom migration `drizzle/0001_fts.sql`.
 */
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** One token naming a partition: `p` + hex of `user/agent`, so the FTS query can be limited to it. */
const scopeToken = (...columns: string[]) =>
  sql.raw(`'p' || hex(${columns.map((c) => `"${c}"`).join(` || '/' || `)})`);

const searchColumns = (...scopeColumns: string[]) => ({
  searchTerms: text('search_terms').notNull(),
  searchLength: integer('search_length').notNull(),
  searchScope: text('search_scope').generatedAlwaysAs(scopeToken(...scopeColumns), { mode: 'virtual' }),
});

export const facts = sqliteTable(
  'kioku_facts',
  {
    seq: integer('seq').primaryKey(),
    userId: text('user_id').notNull(),
    agentId: text('agent_id').notNull(),
    id: text('id').notNull(),
    title: text('title'),
    content: text('content').notNull(),
    category: text('category').notNull(),
    tags: text('tags', { mode: 'json' }).$type<string[]>().notNull(),
    metadata: text('metadata', { mode: 'json' }).$type<Record<string, Json>>().notNull(),
    provenance: text('provenance', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    /** When what the fact tells happened, when known (core's `Fact.eventTime`, ISO UTC); NULL otherwise. */
    eventTime: text('event_time'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    version: integer('version').notNull().default(1),
    ...searchColumns('user_id', 'agent_id'),
  },
  (t) => [
    uniqueIndex('kioku_facts_id').on(t.userId, t.agentId, t.id),
    index('kioku_facts_created').on(t.userId, t.agentId, t.createdAt),
    // `list({ order: 'updated' })` and the fact block's pages read this index in order, with no sort:
    // newest updated, then newest created, then id (BINARY collation: code-unit order, as core's).
    index('kioku_facts_updated').on(
      t.userId,
      t.agentId,
      sql`${t.updatedAt} desc`,
      sql`${t.createdAt} desc`,
      t.id,
    ),
    index('kioku_facts_category').on(t.userId, t.agentId, t.category),
  ],
);

export const documents = sqliteTable(
  'kioku_documents',
  {
    seq: integer('seq').primaryKey(),
    userId: text('user_id').notNull(),
    agentId: text('agent_id').notNull(),
    id: text('id').notNull(),
    title: text('title').notNull(),
    description: text('description'),
    tags: text('tags', { mode: 'json' }).$type<string[]>().notNull(),
    source: text('source', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    text: text('text').notNull(),
    tokenCount: integer('token_count').notNull(),
    metadata: text('metadata', { mode: 'json' }).$type<Record<string, Json>>().notNull(),
    addedAt: text('added_at').notNull(),
  },
  (t) => [uniqueIndex('kioku_documents_id').on(t.userId, t.agentId, t.id)],
);

/** One row per chunk; the partition columns are repeated so chunk search needs no join to filter. */
export const documentChunks = sqliteTable(
  'kioku_document_chunks',
  {
    seq: integer('seq').primaryKey(),
    documentSeq: integer('document_seq')
      .notNull()
      .references(() => documents.seq, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    agentId: text('agent_id').notNull(),
    chunkIndex: integer('chunk_index').notNull(),
    text: text('text').notNull(),
    tokenCount: integer('token_count').notNull(),
    ...searchColumns('user_id', 'agent_id'),
  },
  (t) => [uniqueIndex('kioku_document_chunks_index').on(t.documentSeq, t.chunkIndex)],
);

/** One plan per thread; its steps and context notes are small bounded lists kept as JSON. */
export const plans = sqliteTable(
  'kioku_plans',
  {
    seq: integer('seq').primaryKey(),
    userId: text('user_id').notNull(),
    agentId: text('agent_id').notNull(),
    threadId: text('thread_id').notNull(),
    id: text('id').notNull(),
    goal: text('goal').notNull(),
    steps: text('steps', { mode: 'json' }).$type<unknown[]>().notNull(),
    contextNotes: text('context_notes', { mode: 'json' }).$type<unknown[]>().notNull(),
    isComplete: integer('is_complete', { mode: 'boolean' }).notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    completedAt: text('completed_at'),
    version: integer('version').notNull().default(1),
  },
  (t) => [uniqueIndex('kioku_plans_thread').on(t.userId, t.agentId, t.threadId)],
);

/** Working memory. `expires_ms` (epoch milliseconds) decides liveness; `expires_at` is kept verbatim. */
export const working = sqliteTable(
  'kioku_working',
  {
    seq: integer('seq').primaryKey(),
    userId: text('user_id').notNull(),
    agentId: text('agent_id').notNull(),
    key: text('key').notNull(),
    namespace: text('namespace').notNull(),
    value: text('value').notNull(),
    storedAt: text('stored_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    expiresMs: integer('expires_ms').notNull(),
    category: text('category'),
    tags: text('tags', { mode: 'json' }).$type<string[]>().notNull(),
    version: integer('version').notNull().default(1),
    ...searchColumns('user_id', 'agent_id'),
  },
  (t) => [
    uniqueIndex('kioku_working_key').on(t.userId, t.agentId, t.key),
    index('kioku_working_namespace').on(t.userId, t.agentId, t.namespace),
    index('kioku_working_expiry').on(t.expiresMs),
  ],
);

/** The session index: one row per session. */
export const sessions = sqliteTable(
  'kioku_sessions',
  {
    seq: integer('seq').primaryKey(),
    userId: text('user_id').notNull(),
    agentId: text('agent_id').notNull(),
    id: text('id').notNull(),
    storeTypes: text('store_types', { mode: 'json' }).$type<string[]>().notNull(),
    title: text('title'),
    metadata: text('metadata', { mode: 'json' }).$type<Record<string, Json>>().notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [uniqueIndex('kioku_sessions_id').on(t.userId, t.agentId, t.id)],
);

/** A session's key-value map. `position` orders it: an update moves the key to the end; FIFO evicts the lowest. */
export const sessionKv = sqliteTable(
  'kioku_session_kv',
  {
    seq: integer('seq').primaryKey(),
    sessionSeq: integer('session_seq')
      .notNull()
      .references(() => sessions.seq, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    key: text('key').notNull(),
    value: text('value').notNull(),
    ts: text('ts').notNull(),
    /** Core's k-v version: 1 when the key is set without an entry; rows from before it read as 1. */
    version: integer('version').notNull().default(1),
  },
  (t) => [
    uniqueIndex('kioku_session_kv_key').on(t.sessionSeq, t.key),
    index('kioku_session_kv_position').on(t.sessionSeq, t.position),
  ],
);

/** A session's transcript, in `position` order. */
export const sessionTranscript = sqliteTable(
  'kioku_session_transcript',
  {
    seq: integer('seq').primaryKey(),
    sessionSeq: integer('session_seq')
      .notNull()
      .references(() => sessions.seq, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    role: text('role').notNull(),
    content: text('content').notNull(),
    toolCalls: text('tool_calls', { mode: 'json' }).$type<unknown[]>(),
    toolCallId: text('tool_call_id'),
    name: text('name'),
    ts: text('ts').notNull(),
  },
  (t) => [uniqueIndex('kioku_session_transcript_position').on(t.sessionSeq, t.position)],
);

/** Details (the content behind MemoryRefs): partitioned by user; agent and thread are recorded, not keys. */
export const details = sqliteTable(
  'kioku_details',
  {
    seq: integer('seq').primaryKey(),
    userId: text('user_id').notNull(),
    id: text('id').notNull(),
    agentId: text('agent_id'),
    threadId: text('thread_id'),
    type: text('type').notNull(),
    description: text('description').notNull(),
    summary: text('summary'),
    content: text('content').notNull(),
    tokenCount: integer('token_count').notNull(),
    metadata: text('metadata', { mode: 'json' }).$type<Record<string, Json>>().notNull(),
    createdAt: text('created_at').notNull(),
    active: integer('active', { mode: 'boolean' }).notNull(),
    ...searchColumns('user_id'),
  },
  (t) => [uniqueIndex('kioku_details_id').on(t.userId, t.id), index('kioku_details_user').on(t.userId)],
);

/** Settings the store keeps about the database itself (e.g. which analyzer built `search_terms`). */
export const meta = sqliteTable('kioku_meta', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

/**
 * Rows and terms per searchable table and partition, kept by the FTS triggers: the N and average
 * length BM25 needs, without counting a partition on every query. Scope `''` holds the whole table's
 * totals. `changes` counts the row changes (an insert or delete 1, an update 2) the partition has seen:
 * a search that cached document frequencies at one count can tell whether only inserts happened since.
 */
export const searchStats = sqliteTable(
  'kioku_search_stats',
  {
    tableName: text('table_name').notNull(),
    scope: text('scope').notNull(),
    rows: integer('rows').notNull(),
    terms: integer('terms').notNull(),
    changes: integer('changes').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tableName, t.scope] })],
);
