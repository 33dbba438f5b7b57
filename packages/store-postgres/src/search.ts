import { type AnyColumn, type SQL, sql } from 'drizzle-orm';

/** A full-text condition and its score for one query. */
export interface LexicalMatch {
  /** The row matches at least one query term (`search @@ (t1 | t2 | …)`, served by the GIN index). */
  where: SQL;
  /** Higher is better; see {@link lexicalMatch}. */
  score: SQL<number>;
}

/**
 * The query's terms: the distinct lexemes `to_tsvector('english', query)` gives (stop words dropped, words
 * stemmed — exactly how the indexed text was analysed), each quoted into a one-term `tsquery`. The query
 * is only ever analysed as text, so quotes, `&`, `|`, `!`, `:*` or `<->` in it are words or nothing,
 * never tsquery syntax. Evaluated once per statement (an uncorrelated subquery).
 */
function queryTerms(query: string): SQL {
  return sql`(select coalesce(array_agg((E'\\'' || replace(replace(lexeme, E'\\\\', E'\\\\\\\\'), E'\\'', E'\\'\\'') || E'\\'')::tsquery), '{}')
    from unnest(tsvector_to_array(to_tsvector('english'::regconfig, ${query}::text))) as lexeme)`;
}

/**
 * Lexical search over a `tsvector` column, ranked like this:
 *
 *   score = (number of distinct query terms the text contains) + ts_rank_cd(search, t1 | t2 | …, 32)
 *
 * The first part is an OR-style fallback with coverage: a text holding every term (what
 * `plainto_tsquery` would match) comes before one holding all but one, and so on, so a natural-language
 * question still finds the fact that shares only some of its words. `ts_rank_cd` (cover density, scaled
 * to 0..1 by normalization 32) orders texts that cover the same number of terms.
 */
export function lexicalMatch(search: AnyColumn, query: string): LexicalMatch {
  // PostgreSQL text cannot hold NUL; for search it is just another separator.
  const text = query.replaceAll('\u0000', ' ');
  const terms = queryTerms(text);
  const anyTerm = sql`(select string_agg(term::text, ' | ')::tsquery from unnest(${terms}) as term)`;
  return {
    where: sql`${search} @@ ${anyTerm}`,
    score:
      sql<number>`((select count(*) from unnest(${terms}) as term where ${search} @@ term) + ts_rank_cd(${search}, ${anyTerm}, 32))`.mapWith(
        Number,
      ),
  };
}
