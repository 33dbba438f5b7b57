import type { DetailRecord, Fact, KnowledgeDocument, StoreKind } from '@kioku/core';
import {
  chunkSearchText,
  detailIndexEntries,
  type ParsedDetailQuery,
  type ParsedDocumentQuery,
} from '@kioku/core/adapter';
import type { DetailHit, DocumentChunkHit } from '@kioku/core/store';

type DocumentChunk = DocumentChunkHit['chunk'];

import type Database from 'better-sqlite3';
import { and, sql } from 'drizzle-orm';
import { analyze } from './analysis.js';
import { hasAllTags } from './filters.js';
import { NO_SEARCH, recordFacts, type SearchColumns, searchColumns } from './record-facts.js';
import { type LexicalSearch, scopeToken } from './search.js';
import { preparedOnce } from './statement-cache.js';

/**
 * Search columns of the records other kinds search in SQL, beside facts (`record-facts.ts`): a detail's
 * row holds core's analysis of its text; a document chunk's row (`<id>:c:<n>`) holds the analysis of its
 * text with its document's title and tags (core's `chunkSearchText`) and, in `tags`, the document's tags
 * (the tag filter of a document search). Documents never change once stored, so a chunk's columns stay
 * true. Both go into the same FTS5 index and per-partition counts as facts (the partition label tells
 * kinds apart). Working memory is not indexed: its partitions (a key root) are capped small and its
 * expiry is the clock's, so core searches them in memory.
 */

/** The title and tags of a document, what its chunks are found by. */
export type DocumentHead = Pick<KnowledgeDocument, 'title' | 'tags'>;

/** Finds a chunk's document head: among the records being written, else in the table. */
export type HeadLookup = (documentId: string) => DocumentHead | undefined;

const CHUNK = ':c:';

/** The kinds whose records have search columns. */
export const SEARCHED_KINDS: readonly StoreKind[] = ['facts', 'details', 'documents'];

/** A record's search columns (facts, details, document chunks), else NULLs. */
export function recordSearchColumns(
  kind: StoreKind,
  key: string,
  json: string,
  value: unknown,
  headOf: HeadLookup,
): SearchColumns {
  if (key === '') return NO_SEARCH; // a partition stored whole (an earlier format): not indexed
  if (kind === 'facts') return searchColumns((value ?? JSON.parse(json)) as Fact);
  if (kind === 'details') {
    const search = analyze(detailIndexEntries((value ?? JSON.parse(json)) as DetailRecord)[0]!.text);
    return [null, null, null, search.terms, search.length];
  }
  if (kind === 'documents') {
    const at = key.indexOf(CHUNK);
    if (at === -1) return NO_SEARCH;
    const head = headOf(key.slice(0, at));
    if (!head) return NO_SEARCH;
    const chunk = (value ?? JSON.parse(json)) as DocumentChunk;
    const search = analyze(chunkSearchText(head, chunk.text));
    return [null, JSON.stringify(head.tags), null, search.terms, search.length];
  }
  return NO_SEARCH;
}

/**
 * Fills the search columns of every record of the searched kinds (setup, after `RecordFactIndex.clear`):
 * the triggers index them as they are set.
 */
export function fillSearchColumns(db: Database.Database): void {
  const set = db.prepare(
    `UPDATE kioku_records SET category = ?, tags = ?, updated_at = ?, search_terms = ?, search_length = ?
     WHERE seq = ?`,
  );
  const rows = db
    .prepare(
      `SELECT r.seq, p.kind, r.label, r.key, r.json FROM kioku_records r
       JOIN kioku_record_partitions p ON p.label = r.label
       WHERE p.kind IN (SELECT value FROM json_each(?)) AND r.key <> ''`,
    )
    .raw()
    .all(JSON.stringify(SEARCHED_KINDS)) as Array<[number, StoreKind, string, string, string]>;
  const heads = new Map<string, DocumentHead>();
  for (const [, kind, label, key, json] of rows) {
    const head = kind === 'documents' ? headOfRecord(key, json) : undefined;
    if (head) heads.set(JSON.stringify([label, key]), head);
  }
  for (const [seq, kind, label, key, json] of rows) {
    const columns = recordSearchColumns(kind, key, json, undefined, (id) =>
      heads.get(JSON.stringify([label, id])),
    );
    if (columns[3] !== null) set.run(...columns, seq);
  }
}

/** A document head record (key without `:`) as its title and tags. */
export function headOfRecord(key: string, json: string, value?: unknown): DocumentHead | undefined {
  if (key === '' || key.includes(':')) return undefined;
  const head = (value ?? JSON.parse(json)) as Partial<DocumentHead>;
  return typeof head.title === 'string' && Array.isArray(head.tags)
    ? { title: head.title, tags: head.tags }
    : undefined;
}

/** Document and detail search on the records table, ranked by `LexicalSearch` (core's ranking). */
export class RecordTextSearch {
  readonly #db: Database.Database;
  readonly #lexical: LexicalSearch;
  readonly #prepare: (source: string) => Database.Statement;

  constructor(db: Database.Database, lexical: LexicalSearch) {
    this.#db = db;
    this.#lexical = lexical;
    this.#prepare = preparedOnce(db);
  }

  /** The best chunks of the documents partition `label` (of documents with every tag asked for). */
  documents(label: string, query: ParsedDocumentQuery): DocumentChunkHit[] {
    return this.#db.transaction(() => {
      const where = hasAllTags(recordFacts.tags, query.tags);
      const ranked = this.#lexical.search(
        { table: recordFacts, scope: scopeToken(label), where },
        query.query,
        query.limit,
      );
      if (ranked.length === 0) return [];
      const chunks = this.#rows(
        ranked.map((r) => r.seq),
        label,
      );
      const ids = [...new Set([...chunks.values()].map((row) => row.key.slice(0, row.key.indexOf(CHUNK))))];
      const heads = new Map(
        (
          this.#prepare(
            'SELECT key, json FROM kioku_records WHERE label = ? AND key IN (SELECT value FROM json_each(?))',
          ).all(label, JSON.stringify(ids)) as Array<{ key: string; json: string }>
        ).map((row) => [row.key, JSON.parse(row.json) as KnowledgeDocument]),
      );
      return ranked.flatMap((r) => {
        const row = chunks.get(r.seq);
        const documentId = row?.key.slice(0, row.key.indexOf(CHUNK));
        const head = documentId === undefined ? undefined : heads.get(documentId);
        if (!row || !head) return [];
        const chunk = JSON.parse(row.json) as DocumentChunk;
        return [{ documentId: head.id, title: head.title, chunk, score: r.score }];
      });
    })();
  }

  /** The best details of the partition `label` that pass the query's filter (core's `detailMatches`). */
  details(label: string, query: ParsedDetailQuery): DetailHit[] {
    return this.#db.transaction(() => {
      const json = recordFacts.json;
      const where = and(
        query.includeInactive ? undefined : sql`json_extract(${json}, '$.active') = 1`,
        query.type === undefined ? undefined : sql`json_extract(${json}, '$.type') = ${query.type}`,
        query.agentId === undefined ? undefined : sql`json_extract(${json}, '$.agentId') = ${query.agentId}`,
        query.threadId === undefined
          ? undefined
          : sql`json_extract(${json}, '$.threadId') = ${query.threadId}`,
      );
      const ranked = this.#lexical.search(
        { table: recordFacts, scope: scopeToken(label), where },
        query.query,
        query.limit,
      );
      if (ranked.length === 0) return [];
      const rows = this.#rows(
        ranked.map((r) => r.seq),
        label,
      );
      return ranked.flatMap((r) => {
        const row = rows.get(r.seq);
        return row ? [{ detail: JSON.parse(row.json) as DetailRecord, score: r.score }] : [];
      });
    })();
  }

  /** Rows by rowid, kept to the partition: `+label` keeps SQLite on the rowids (as the fact search does). */
  #rows(seqs: number[], label: string): Map<number, { key: string; json: string }> {
    const rows = this.#prepare(
      'SELECT seq, key, json FROM kioku_records WHERE seq IN (SELECT value FROM json_each(?)) AND +label = ?',
    ).all(JSON.stringify(seqs), label) as Array<{ seq: number; key: string; json: string }>;
    return new Map(rows.map((row) => [row.seq, row]));
  }
}
