import { type AnyColumn, type SQL, sql } from 'drizzle-orm';

/** `agent_id` of a scope: '' when the memory belongs to no agent. */
export function agentKey(agentId: string | undefined): string {
  return agentId ?? '';
}

/** `{ agentId }` for a record, absent when the row has none. */
export function agentField(agentId: string): { agentId?: string } {
  return agentId === '' ? {} : { agentId };
}

/** Tags as the all-of filter compares them (core's `hasAllTags` is case-insensitive). */
export function tagKeys(tags: readonly string[]): string[] {
  return tags.map((t) => t.toLowerCase());
}

/** A `text[]` literal built from parameters. */
export function textArray(values: readonly string[]): SQL {
  if (values.length === 0) return sql`'{}'::text[]`;
  return sql`array[${sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  )}]::text[]`;
}

/**
 * Every wanted tag is present (case-insensitive); undefined when there is nothing to filter. A wanted tag
 * PostgreSQL cannot even hold (a NUL character) matches nothing, as no stored tag can contain one.
 */
export function hasAllTags(tagKeysColumn: AnyColumn, wanted: readonly string[] | undefined): SQL | undefined {
  if (!wanted?.length) return undefined;
  if (!tagsCanMatch(wanted)) return sql`false`;
  return sql`${tagKeysColumn} @> ${textArray(tagKeys(wanted))}`;
}

/** False when a wanted tag holds a NUL character: PostgreSQL text cannot, so no stored tag matches it. */
export function tagsCanMatch(wanted: readonly string[]): boolean {
  return !wanted.some((t) => t.includes('\u0000'));
}

/** `column` equals `prefix` or lies below it on a `/` boundary (no LIKE, so `_` and `%` are plain). */
export function underPrefix(column: AnyColumn, prefix: string): SQL {
  return sql`(${column} = ${prefix} or starts_with(${column}, ${`${prefix}/`}))`;
}

/** Split rows into batches that keep one statement well below PostgreSQL's 65,535 parameters. */
/** The most parameters postgres.js sends with one statement (the wire protocol counts them in 16 bits). */
const MAX_PARAMETERS = 65_534;

/**
 * The most rows like `row` one multi-row INSERT can carry. Bulk paths insert this many at a time: the
 * statement-level triggers then fire once per few thousand rows, and the statistics rows they update in
 * one transaction keep short version chains (at 500 rows a statement, a 1M-fact restore took 16 min, most
 * of it walking the chains of the commonest terms' `fact_terms` rows; at this size 4 min).
 */
export function maxRowsPerInsert(row: object): number {
  return Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(row).length));
}

export function batches<T>(rows: readonly T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** A copy of `row` without its null fields, for records whose optional fields are absent rather than null. */
export function withoutNulls<T extends Record<string, unknown>>(
  row: T,
): { [K in keyof T]: Exclude<T[K], null> } {
  // A loop, not Object.entries → filter → fromEntries: every transcript entry a turn replays comes through
  // here (1.7 % of a bench:load turn's CPU that way).
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(row)) {
    const value = row[key];
    if (value !== null) kept[key] = value;
  }
  return kept as { [K in keyof T]: Exclude<T[K], null> };
}
