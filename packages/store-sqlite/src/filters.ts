import { and, type Column, eq, gte, lt, or, type SQL, sql } from 'drizzle-orm';

/** `category` equals `prefix` or lies below it: `a` matches `a` and `a/b`, never `ab` (no LIKE wildcards). */
export function categoryUnder(column: Column, prefix: string): SQL {
  // Every string that starts with `prefix/` sorts at or after `prefix/` and before `prefix0` ('0' follows '/').
  return or(eq(column, prefix), and(gte(column, `${prefix}/`), lt(column, `${prefix}0`)))!;
}

/** Every wanted tag is in the JSON array column, compared case-insensitively (Unicode-aware). */
export function hasAllTags(column: Column, wanted: readonly string[] | undefined): SQL | undefined {
  if (!wanted?.length) return undefined;
  return and(
    ...[...new Set(wanted.map((t) => t.toLowerCase()))].map(
      (tag) => sql`EXISTS (SELECT 1 FROM json_each(${column}) WHERE kioku_lower(json_each.value) = ${tag})`,
    ),
  );
}
