import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import type { Sql } from 'postgres';

/** A full-text condition and its score for one query. */
export interface LexicalMatch {
  /** The row contains at least one query term (`search @@ (t1 | t2 | …)`, served by the GIN index). */
  where: SQL;
  /**
   * Higher is better; see {@link lexicalMatch}. Selected `as "score"`, and ordering by it names that output
   * column: written out again in ORDER BY, with parameters of its own, PostgreSQL would compute it twice per row.
   */
  score: SQL.Aliased<number>;
}

/**
 * The distinct lexemes of a query, analysed exactly as the indexed text is (`to_tsvector('english', …)`: stop
 * words dropped, words stemmed). The query is only ever analysed as text, so quotes, `&`, `|`, `!`, `:*` or
 * `<->` in it are words or nothing, never tsquery syntax.
 */
export async function queryLexemes(client: Sql, query: string): Promise<string[]> {
  // PostgreSQL text cannot hold NUL; for search it is just another separator.
  const text = query.replaceAll('\u0000', ' ');
  // Straight through postgres.js, so the statement is prepared once per connection (drizzle's `execute`
  // would parse and plan it, in an extra round trip, on every search).
  const [row] = await client<{ lexemes: string[] }[]>`
    select tsvector_to_array(to_tsvector('english'::regconfig, ${text}::text)) as lexemes`;
  return row?.lexemes ?? [];
}

/** A lexeme as a one-term tsquery literal: quoted, with `'` doubled and `\` escaped (tsquery input syntax). */
function termLiteral(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/**
 * What a {@link lexicalMatch} binds: one tsquery per query term and their disjunction (`t1 | t2 | …`). As
 * values, or as placeholders of a statement prepared once per number of terms and run with values.
 */
export interface MatchTerms<T = unknown> {
  terms: readonly T[];
  anyTerm: T;
}

/** The tsquery literals of a query's lexemes, as bound by {@link lexicalMatch}. */
export function matchTerms(lexemes: readonly string[]): MatchTerms<string> {
  const terms = lexemes.map(termLiteral);
  return { terms, anyTerm: terms.join(' | ') };
}

/**
 * Lexical search over a `tsvector` column for the given query terms (at least one), ranked like this:
 *
 *   score = (number of distinct query terms the text contains) + ts_rank(search, t1 | t2 | …, 1|32)
 *
 * The first part is an OR-style fallback with coverage: a text holding every term (what
 * `plainto_tsquery` would match) comes before one holding all but one, and so on, so a natural-language
 * question still finds the fact that shares only some of its words. `ts_rank` (term frequency, divided by
 * 1 + log of the text's length, scaled into 0..1 by flag 32) orders texts that cover as many terms.
 * Every term is a bound parameter. The fact store runs it as a prepared statement: PostgreSQL plans the
 * first executions with the real terms, then may keep a generic plan (the GIN index scan) when it costs no more.
 */
export function lexicalMatch(search: AnyColumn, { terms, anyTerm }: MatchTerms): LexicalMatch {
  const any = sql`${anyTerm}::tsquery`;
  const coverage = sql.join(
    terms.map((term) => sql`(${search} @@ ${term}::tsquery)::int`),
    sql` + `,
  );
  return {
    where: sql`${search} @@ ${any}`,
    score: sql<number>`(${coverage} + ts_rank(${search}, ${any}, 33))`.mapWith(Number).as('score'),
  };
}

/** A lexeme `l` as a one-term tsquery literal, in SQL: what termLiteral does (`\` doubled, then `'`). */
const SQL_TERM_LITERAL = sql.raw(String.raw`('''' || replace(replace(l, '\', '\\'), '''', '''''') || '''')`);

/**
 * {@link lexicalMatch} for a query PostgreSQL analyses in the same statement, as {@link queryLexemes}
 * does: one round trip where analysing first takes two. The same ranking on the same terms: the query's
 * distinct lexemes, each a one-term tsquery quoted as {@link matchTerms} quotes it, and their disjunction.
 * A query without terms matches nothing (`@@ null`).
 */
export function lexicalMatchOfText(search: AnyColumn, query: string): LexicalMatch {
  // PostgreSQL text cannot hold NUL; for search it is just another separator.
  const text = query.replaceAll('\u0000', ' ');
  const lexemes = sql`unnest(tsvector_to_array(to_tsvector('english'::regconfig, ${text}::text))) as l`;
  const any = sql`(select string_agg(${SQL_TERM_LITERAL}, ' | ')::tsquery from ${lexemes})`;
  const coverage = sql`(select count(*)::int from ${lexemes} where ${search} @@ ${SQL_TERM_LITERAL}::tsquery)`;
  return {
    where: sql`${search} @@ ${any}`,
    score: sql<number>`(${coverage} + ts_rank(${search}, ${any}, 33))`.mapWith(Number).as('score'),
  };
}
