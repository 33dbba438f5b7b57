import { eq } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { type Analyzed, analyze, chunkText, detailText, factText, workingText } from './analysis.js';
import * as schema from './schema.js';

type Orm = BetterSQLite3Database<typeof schema>;

/**
 * Recompute `search_terms` of every searchable row with the current analyzer (the triggers update the
 * FTS5 indexes). Runs inside the caller's transaction; `setup()` calls it when the analyzer changed.
 */
export function rebuildSearchTerms(orm: Orm): void {
  const set = (a: Analyzed) => ({ searchTerms: a.terms, searchLength: a.length });
  for (const row of orm.select().from(schema.facts).all()) {
    const fact = { ...row, title: row.title ?? undefined };
    orm
      .update(schema.facts)
      .set(set(analyze(factText(fact))))
      .where(eq(schema.facts.seq, row.seq))
      .run();
  }
  const chunks = orm
    .select({
      seq: schema.documentChunks.seq,
      text: schema.documentChunks.text,
      title: schema.documents.title,
      tags: schema.documents.tags,
    })
    .from(schema.documentChunks)
    .innerJoin(schema.documents, eq(schema.documents.seq, schema.documentChunks.documentSeq))
    .all();
  for (const c of chunks) {
    orm
      .update(schema.documentChunks)
      .set(set(analyze(chunkText(c, c.text))))
      .where(eq(schema.documentChunks.seq, c.seq))
      .run();
  }
  for (const row of orm.select().from(schema.working).all()) {
    const entry = { ...row, category: row.category ?? undefined };
    orm
      .update(schema.working)
      .set(set(analyze(workingText(entry))))
      .where(eq(schema.working.seq, row.seq))
      .run();
  }
  for (const row of orm.select().from(schema.details).all()) {
    const detail = { ...row, summary: row.summary ?? undefined };
    orm
      .update(schema.details)
      .set(set(analyze(detailText(detail))))
      .where(eq(schema.details.seq, row.seq))
      .run();
  }
}
